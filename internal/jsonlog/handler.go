// Package jsonlog provides a log/slog Handler that writes exactly the bytes
// slog.NewJSONHandler writes, at a fraction of the cost per record: values
// are appended straight into a pooled buffer (floats included, which slog
// formats through encoding/json), and only KindAny values go through
// encoding/json.
package jsonlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// maxPooledBuffer is the largest buffer capacity returned to the pool, as in
// slog: a rare huge record should not pin its buffer for ever.
const maxPooledBuffer = 16 << 10

// hexDigits are the digits of \u00XX escapes.
const hexDigits = "0123456789abcdef"

// yearRangeError is what slog writes, as a string value, before a time whose
// year has more than four digits.
const yearRangeError = `"!ERROR:time.Time year outside of range [0,9999]"`

// New returns a handler writing JSON lines to w, as slog.NewJSONHandler(w, opts) would.
//
// When opts sets AddSource or ReplaceAttr the result is slog.NewJSONHandler
// itself; otherwise it is the fast handler of this package.
func New(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	if opts.AddSource || opts.ReplaceAttr != nil {
		return slog.NewJSONHandler(w, opts)
	}
	return &handler{out: &output{w: w}, level: opts.Level}
}

// output is what a handler shares with every handler derived from it: the
// writer, the mutex serializing writes to it, and a pool of encoders.
type output struct {
	mu   sync.Mutex
	w    io.Writer
	pool sync.Pool // of *encoder
}

// get returns an encoder with an empty buffer.
func (o *output) get() *encoder {
	if e, ok := o.pool.Get().(*encoder); ok {
		return e
	}
	return &encoder{buf: make([]byte, 0, 1024)}
}

// put returns e to the pool unless it grew too large to keep.
func (o *output) put(e *encoder) {
	if cap(e.buf) > maxPooledBuffer {
		return
	}
	if e.js != nil && e.js.buf.Cap() > maxPooledBuffer {
		e.js = nil
	}
	e.buf = e.buf[:0]
	o.pool.Put(e)
}

// write writes one whole line to the writer, serialized with every other
// handler sharing o.
func (o *output) write(line []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.w.Write(line)
	return err
}

// handler is the slog.Handler returned by New for the common options.
type handler struct {
	out   *output
	level slog.Leveler // nil means slog.LevelInfo
	// pre holds the attributes of WithAttrs, encoded, including the
	// openings of the first nOpen groups.
	pre    []byte
	groups []string // every group started by WithGroup
	nOpen  int      // how many of groups are opened in pre
}

// clone returns a copy of h sharing its output; appending to the copy's
// slices never writes into h's.
func (h *handler) clone() *handler {
	return &handler{
		out:    h.out,
		level:  h.level,
		pre:    slices.Clip(h.pre),
		groups: slices.Clip(h.groups),
		nOpen:  h.nOpen,
	}
}

// Enabled reports whether level is at least the configured minimum level.
func (h *handler) Enabled(_ context.Context, level slog.Level) bool {
	minLevel := slog.LevelInfo
	if h.level != nil {
		minLevel = h.level.Level()
	}
	return level >= minLevel
}

// WithAttrs returns a handler that writes attrs, encoded once here, in
// every record after the handler's own attributes.
func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if countEmptyGroups(attrs) == len(attrs) {
		return h
	}
	h2 := h.clone()
	e := encoder{buf: h2.pre}
	if n := len(e.buf); n > 0 {
		e.sep = e.buf[n-1] != '{'
	}
	pos := len(e.buf)
	e.openGroups(h2.groups[h2.nOpen:])
	if e.appendAttrs(attrs) {
		h2.nOpen = len(h2.groups)
	} else {
		e.buf = e.buf[:pos]
	}
	h2.pre = e.buf
	return h2
}

// WithGroup returns a handler nesting every later attribute in group name.
// Like slog.JSONHandler (unlike slog.Logger) it does not ignore an empty name.
func (h *handler) WithGroup(name string) slog.Handler {
	h2 := h.clone()
	h2.groups = append(h2.groups, name)
	return h2
}

// Handle writes r as one JSON line with a single Write.
func (h *handler) Handle(_ context.Context, r slog.Record) error {
	e := h.out.get()
	e.buf = append(e.buf, '{')
	e.appendBuiltIns(&r)
	e.sep = true
	nOpen := h.nOpen
	if len(h.pre) > 0 {
		e.buf = append(e.buf, ',')
		e.buf = append(e.buf, h.pre...)
		e.sep = h.pre[len(h.pre)-1] != '{'
	}
	if r.NumAttrs() > 0 {
		pos := len(e.buf)
		e.openGroups(h.groups[h.nOpen:])
		nOpen = len(h.groups)
		if !e.appendRecordAttrs(&r) {
			e.buf = e.buf[:pos]
			nOpen = h.nOpen
		}
	}
	for range nOpen {
		e.buf = append(e.buf, '}')
	}
	e.buf = append(e.buf, '}', '\n')
	err := h.out.write(e.buf)
	h.out.put(e)
	return err
}

// encoder appends JSON to buf. It is used by one goroutine at a time.
type encoder struct {
	buf []byte
	sep bool       // whether a comma goes before the next key
	js  *jsonState // for KindAny values, allocated on first use
}

// jsonState is an encoding/json encoder writing to its own buffer, set up
// as slog's: no HTML escaping.
type jsonState struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// appendBuiltIns appends the time (unless zero), level and message of r.
func (e *encoder) appendBuiltIns(r *slog.Record) {
	if !r.Time.IsZero() {
		e.buf = append(e.buf, `"time":`...)
		e.buf = appendTime(e.buf, r.Time)
		e.buf = append(e.buf, ',')
	}
	e.buf = append(e.buf, `"level":`...)
	e.buf = appendLevel(e.buf, r.Level)
	e.buf = append(e.buf, `,"msg":`...)
	e.buf = appendString(e.buf, r.Message)
}

// appendRecordAttrs appends the attributes of r and reports whether any
// was appended.
func (e *encoder) appendRecordAttrs(r *slog.Record) bool {
	nonEmpty := false
	r.Attrs(func(a slog.Attr) bool {
		if e.appendAttr(&a) {
			nonEmpty = true
		}
		return true
	})
	return nonEmpty
}

// openGroups opens a JSON object for each of groups.
func (e *encoder) openGroups(groups []string) {
	for _, g := range groups {
		e.openGroup(g)
	}
}

// openGroup appends the key name and the opening brace of its object.
func (e *encoder) openGroup(name string) {
	e.appendKey(name)
	e.buf = append(e.buf, '{')
	e.sep = false
}

// appendKey appends the separator if one is due, then key and a colon.
func (e *encoder) appendKey(key string) {
	b := e.buf
	if e.sep {
		b = append(b, ',', '"')
	} else {
		b = append(b, '"')
	}
	b = appendEscaped(b, key)
	e.buf = append(b, '"', ':')
	e.sep = true
}

// appendAttrs appends attrs and reports whether any was appended.
func (e *encoder) appendAttrs(attrs []slog.Attr) bool {
	nonEmpty := false
	for i := range attrs {
		if e.appendAttr(&attrs[i]) {
			nonEmpty = true
		}
	}
	return nonEmpty
}

// appendAttr appends a, resolved, and reports whether it counts as
// appended. Like slog it skips empty attributes and *slog.Source values
// without fields, writes a non-empty *slog.Source as a group, and reports a
// group that resolved to no attributes as appended although it writes
// nothing.
func (e *encoder) appendAttr(a *slog.Attr) bool {
	v := a.Value
	k := v.Kind()
	if k == slog.KindLogValuer {
		v = v.Resolve()
		k = v.Kind()
	}
	switch k {
	case slog.KindGroup:
		return e.appendGroup(a.Key, v.Group())
	case slog.KindAny:
		x := v.Any()
		if x == nil && a.Key == "" {
			return false
		}
		if src, ok := x.(*slog.Source); ok {
			if src == nil || *src == (slog.Source{}) {
				return false
			}
			return e.appendGroup(a.Key, sourceAttrs(src))
		}
		e.appendKey(a.Key)
		e.appendAny(x)
	default:
		e.appendKey(a.Key)
		e.appendScalar(k, v)
	}
	return true
}

// appendGroup appends the group attrs under key, or inline when key is
// empty. Nothing is left in the buffer when no attribute is appended, but,
// as in slog, a named group then leaves the separator off for the next key.
func (e *encoder) appendGroup(key string, attrs []slog.Attr) bool {
	if len(attrs) == 0 {
		return true
	}
	pos := len(e.buf)
	if key != "" {
		e.openGroup(key)
	}
	if !e.appendAttrs(attrs) {
		e.buf = e.buf[:pos]
		return false
	}
	if key != "" {
		e.buf = append(e.buf, '}')
		e.sep = true
	}
	return true
}

// appendScalar appends v, of kind k, which is neither Any, Group nor
// LogValuer.
func (e *encoder) appendScalar(k slog.Kind, v slog.Value) {
	switch k {
	case slog.KindString:
		e.buf = appendString(e.buf, v.String())
	case slog.KindInt64:
		e.buf = strconv.AppendInt(e.buf, v.Int64(), 10)
	case slog.KindUint64:
		e.buf = strconv.AppendUint(e.buf, v.Uint64(), 10)
	case slog.KindFloat64:
		e.appendFloat(v.Float64())
	case slog.KindBool:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case slog.KindDuration:
		e.buf = strconv.AppendInt(e.buf, int64(v.Duration()), 10)
	case slog.KindTime:
		e.buf = appendTime(e.buf, v.Time())
	default:
		panic(fmt.Sprintf("bad kind: %s", k))
	}
}

// appendFloat appends f as encoding/json does. NaN and infinities, which
// encoding/json rejects, go through it anyway to get its error text.
func (e *encoder) appendFloat(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.appendMarshal(f)
		return
	}
	e.buf = appendJSONFloat(e.buf, f)
}

// appendAny appends x, a KindAny value: an error that is not a
// json.Marshaler as its message, anything else through encoding/json. It
// recovers from panics in their methods as slog does.
func (e *encoder) appendAny(x any) {
	defer func() {
		if r := recover(); r != nil {
			e.appendPanic(x, r)
		}
	}()
	if err, ok := x.(error); ok {
		if _, ok := x.(json.Marshaler); !ok {
			e.buf = appendString(e.buf, err.Error())
			return
		}
	}
	e.appendMarshal(x)
}

// appendPanic appends what slog writes for a value x whose formatting
// panicked with r.
func (e *encoder) appendPanic(x, r any) {
	if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
		e.buf = appendString(e.buf, "<nil>")
		return
	}
	e.buf = appendString(e.buf, fmt.Sprintf("!PANIC: %v", r))
}

// appendMarshal appends x encoded by encoding/json, or the error it
// returned as slog writes it.
func (e *encoder) appendMarshal(x any) {
	if e.js == nil {
		e.js = &jsonState{}
		e.js.enc = json.NewEncoder(&e.js.buf)
		e.js.enc.SetEscapeHTML(false)
	}
	e.js.buf.Reset()
	if err := e.js.enc.Encode(x); err != nil {
		e.buf = appendString(e.buf, fmt.Sprintf("!ERROR:%v", err))
		return
	}
	out := e.js.buf.Bytes()
	e.buf = append(e.buf, out[:len(out)-1]...) // without Encode's newline
}

// countEmptyGroups returns how many of attrs are empty groups.
func countEmptyGroups(attrs []slog.Attr) int {
	n := 0
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindGroup && len(a.Value.Group()) == 0 {
			n++
		}
	}
	return n
}

// sourceAttrs returns the non-zero fields of src as slog writes them.
func sourceAttrs(src *slog.Source) []slog.Attr {
	attrs := make([]slog.Attr, 0, 3)
	if src.Function != "" {
		attrs = append(attrs, slog.String("function", src.Function))
	}
	if src.File != "" {
		attrs = append(attrs, slog.String("file", src.File))
	}
	if src.Line != 0 {
		attrs = append(attrs, slog.Int("line", src.Line))
	}
	return attrs
}

// appendLevel appends the quoted name of l, as slog.Level.String spells it:
// "INFO", "WARN+1", "DEBUG-2".
func appendLevel(b []byte, l slog.Level) []byte {
	name, delta := "ERROR", l-slog.LevelError
	switch {
	case l < slog.LevelInfo:
		name, delta = "DEBUG", l-slog.LevelDebug
	case l < slog.LevelWarn:
		name, delta = "INFO", l-slog.LevelInfo
	case l < slog.LevelError:
		name, delta = "WARN", l-slog.LevelWarn
	}
	b = append(b, '"')
	b = append(b, name...)
	if delta > 0 {
		b = append(b, '+')
	}
	if delta != 0 {
		b = strconv.AppendInt(b, int64(delta), 10)
	}
	return append(b, '"')
}

// Bounds of the times appendTime formats itself, in local seconds since
// the Unix epoch (0000-01-01T00:00:00 and 10000-01-01T00:00:00), and in
// zone offset seconds.
const (
	minFastSec    = -62167219200
	maxFastSec    = 253402300800
	maxFastOffset = 100 * 3600
)

// Calendar constants for civilDate.
const (
	secondsPerDay    = 86400
	daysPer400Years  = 146097
	daysBeforeMarch0 = 60 // January and February of year 0, a leap year
)

// appendTime appends t as slog's JSON handler does: quoted RFC 3339 with
// nanoseconds (time.RFC3339Nano), preceded by an error string when the
// year has more than four digits. It formats years 0 to 9999 with zone
// offsets below 100 hours itself, into a fixed-width window:
//
//	"2006-01-02T15:04:05.999999999-07:00"
func appendTime(b []byte, t time.Time) []byte {
	_, offset := t.Zone()
	if offset <= -maxFastOffset || offset >= maxFastOffset {
		return appendTimeSlow(b, t)
	}
	sec := t.Unix() + int64(offset)
	if sec < minFastSec || sec >= maxFastSec {
		return appendTimeSlow(b, t)
	}
	sinceYear0 := uint64(sec - minFastSec)
	year, month, day := civilDate(sinceYear0 / secondsPerDay)
	clock := uint(sinceYear0 % secondsPerDay)
	n := len(b)
	b = slices.Grow(b, len(`"2006-01-02T15:04:05.999999999-07:00"`))
	d := b[n : n+len(`"2006-01-02T15:04:05.`)]
	d[0], d[5], d[8], d[11], d[14], d[17] = '"', '-', '-', 'T', ':', ':'
	putDigits2(d[1:], year/100)
	putDigits2(d[3:], year%100)
	putDigits2(d[6:], month)
	putDigits2(d[9:], day)
	putDigits2(d[12:], clock/3600)
	putDigits2(d[15:], clock/60%60)
	putDigits2(d[18:], clock%60)
	b = b[:n+len(`"2006-01-02T15:04:05`)]
	b = appendFraction(b, uint(t.Nanosecond()))
	b = appendZone(b, offset)
	return append(b, '"')
}

// appendTimeSlow is appendTime for any time, through time.Time.AppendFormat.
func appendTimeSlow(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y >= 10000 {
		b = append(b, yearRangeError...)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// civilDate returns the proleptic Gregorian date of the day that is days
// days after 0000-01-01, for days below 10000 years (H. Hinnant's
// civil_from_days, counted from 0000-03-01 of an era 400 years earlier so
// that every quantity is non-negative).
func civilDate(days uint64) (year, month, day uint) {
	z := uint(days) - daysBeforeMarch0 + daysPer400Years
	era := z / daysPer400Years
	doe := z - era*daysPer400Years                                      // day of era, [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/(daysPer400Years-1)) / 365 // year of era, [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)                            // day of year from March 1, [0, 365]
	mp := (5*doy + 2) / 153                                             // month from March, [0, 11]
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400 - 400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// appendFraction appends the nanoseconds ns as RFC3339Nano does: a point
// and up to nine digits without trailing zeros, nothing when ns is zero.
func appendFraction(b []byte, ns uint) []byte {
	if ns == 0 {
		return b
	}
	n := len(b)
	b = append(b, '.', '0', '0', '0', '0', '0', '0', '0', '0', '0')
	d := b[n+1:]
	_ = d[8]
	d[0] = byte('0' + ns/1e8)
	ns %= 1e8
	putDigits2(d[1:], ns/1e6)
	putDigits2(d[3:], ns/1e4%100)
	putDigits2(d[5:], ns/100%100)
	putDigits2(d[7:], ns%100)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

// appendZone appends the zone offset, in seconds east of UTC and below 100
// hours, as RFC3339Nano does: Z for UTC, else a sign, hours and minutes,
// seconds truncated.
func appendZone(b []byte, offset int) []byte {
	if offset == 0 {
		return append(b, 'Z')
	}
	minutes, sign := offset/60, byte('+') // a sign only when minutes are left
	if minutes < 0 {
		minutes, sign = -minutes, '-'
	}
	n := len(b)
	b = append(b, sign, '0', '0', ':', '0', '0')
	putDigits2(b[n+1:], uint(minutes/60))
	putDigits2(b[n+4:], uint(minutes%60))
	return b
}

// digitPairs holds the two decimal digits of 0 to 99.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// putDigits2 writes v, in [0, 99], as two digits at the start of d.
func putDigits2(d []byte, v uint) {
	_ = d[1]
	d[0], d[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// appendJSONFloat appends the finite f as encoding/json formats a float64:
// the shortest representation, in exponent form only below 1e-6 or from
// 1e21 up, with a one-digit negative exponent not padded to two.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString appends s quoted and escaped as slog escapes JSON strings.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s escaped for a JSON string, as slog does: control
// characters, quotes and backslashes escaped, no HTML escaping, invalid
// UTF-8 replaced by \ufffd, U+2028 and U+2029 escaped.
func appendEscaped(b []byte, s string) []byte {
	if plainPrefix(s) == len(s) {
		return append(b, s...)
	}
	return appendEscapedSlow(b, s)
}

// appendEscapedSlow is appendEscaped for a string that needs escaping.
func appendEscapedSlow(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		i += plainPrefix(s[i:])
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			b = appendEscapedASCII(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// plainPrefix returns the length of the longest prefix of s made of ASCII
// bytes that need no escaping. It tests eight bytes at a time, covering a
// ragged end, and strings of four to seven bytes, with overlapping loads.
func plainPrefix(s string) int {
	n := len(s)
	if n < 4 {
		return plainBytes(s)
	}
	if n < 8 {
		if plainWord(uint64(load32(s)) | uint64(load32(s[n-4:]))<<32) {
			return n
		}
		return plainBytes(s)
	}
	i := 0
	for ; i+8 <= n; i += 8 {
		if !plainWord(load64(s[i:])) {
			return i + plainBytes(s[i:])
		}
	}
	if i == n || plainWord(load64(s[n-8:])) {
		return n
	}
	return i + plainBytes(s[i:])
}

// plainBytes returns the length of the longest prefix of s made of ASCII
// bytes that need no escaping, testing one byte at a time.
func plainBytes(s string) int {
	for i := 0; i < len(s); i++ {
		if !plainByte(s[i]) {
			return i
		}
	}
	return len(s)
}

// load64 returns the first eight bytes of s as a little-endian word.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 returns the first four bytes of s as a little-endian word.
func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// plainWord reports whether none of the eight bytes of x is a control
// character, a quote, a backslash or a non-ASCII byte. Once x is known to
// be ASCII, subtracting from every byte sets a byte's high bit only by
// wrapping below zero: x - 0x20 in each byte wraps where a byte is a control
// character, and (x ^ c) - 1 where a byte equals c. A wrap borrows from the
// next byte, which can only add high bits after a byte that already set
// one, so the test is exact.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if x&highs != 0 {
		return false
	}
	control := x - ones*' '
	quote := (x ^ ones*'"') - ones
	backslash := (x ^ ones*'\\') - ones
	return (control|quote|backslash)&highs == 0
}

// plainByte reports whether the byte c is ASCII and needs no escaping.
func plainByte(c byte) bool {
	return c < utf8.RuneSelf && c >= ' ' && c != '"' && c != '\\'
}

// appendEscapedASCII appends the escape sequence of the ASCII byte c, a
// control character, quote or backslash.
func appendEscapedASCII(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
