package jsonlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTime is the time of most test records: not UTC, with nanoseconds.
var testTime = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 5*3600+30*60))

// step derives a handler, as a chain of WithAttrs and WithGroup calls does.
type step struct {
	name  string
	apply func(slog.Handler) slog.Handler
}

// withAttrs returns a step calling WithAttrs(attrs).
func withAttrs(attrs ...slog.Attr) step {
	return step{"attrs" + fmt.Sprint(len(attrs)), func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) }}
}

// withGroup returns a step calling WithGroup(name).
func withGroup(name string) step {
	return step{"group(" + name + ")", func(h slog.Handler) slog.Handler { return h.WithGroup(name) }}
}

// chainName names a chain of steps for failure messages.
func chainName(chain []step) string {
	names := make([]string, len(chain))
	for i, s := range chain {
		names[i] = s.name
	}
	return "[" + strings.Join(names, " ") + "]"
}

// countingWriter records what is written to it and how many times.
type countingWriter struct {
	bytes.Buffer
	writes int
}

// Write implements io.Writer.
func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// render writes r through the handler newHandler makes, derived by chain,
// and returns the output and the number of writes.
func render(newHandler func(io.Writer, *slog.HandlerOptions) slog.Handler, opts *slog.HandlerOptions, chain []step, r slog.Record) (string, int) {
	var w countingWriter
	h := newHandler(&w, opts)
	for _, s := range chain {
		h = s.apply(h)
	}
	if err := h.Handle(context.Background(), r); err != nil {
		panic(err)
	}
	return w.String(), w.writes
}

// newSlog is slog.NewJSONHandler as a func returning slog.Handler.
func newSlog(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	return slog.NewJSONHandler(w, opts)
}

// checkParity fails t unless New and slog.NewJSONHandler write the same
// single line for r through chain.
func checkParity(t *testing.T, opts *slog.HandlerOptions, chain []step, r slog.Record) {
	t.Helper()
	want, _ := render(newSlog, opts, chain, r)
	got, writes := render(New, opts, chain, r)
	if got != want {
		t.Errorf("chain %s:\n got %q\nwant %q", chainName(chain), got, want)
	}
	if writes != 1 {
		t.Errorf("chain %s: %d writes, want 1", chainName(chain), writes)
	}
}

// newRecord returns a record at testTime with level Info, message "m" and attrs.
func newRecord(attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(testTime, slog.LevelInfo, "m", 0)
	r.AddAttrs(attrs...)
	return r
}

// marshaler is a json.Marshaler writing non-compact JSON with HTML characters.
type marshaler struct{}

// MarshalJSON implements json.Marshaler.
func (marshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{ "html" : "<&>" , "n": [1, 2] }`), nil
}

// failingMarshaler is a json.Marshaler that fails.
type failingMarshaler struct{}

// MarshalJSON implements json.Marshaler.
func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("cannot marshal") }

// panickingMarshaler is a json.Marshaler that panics.
type panickingMarshaler struct{}

// MarshalJSON implements json.Marshaler.
func (panickingMarshaler) MarshalJSON() ([]byte, error) { panic("kaboom") }

// marshalingError is an error that is also a json.Marshaler.
type marshalingError struct{}

// Error implements error.
func (marshalingError) Error() string { return "not used" }

// MarshalJSON implements json.Marshaler.
func (marshalingError) MarshalJSON() ([]byte, error) { return []byte(`"marshaled"`), nil }

// ptrError is an error whose Error method dereferences its receiver.
type ptrError struct{ msg string }

// Error implements error.
func (e *ptrError) Error() string { return e.msg }

// valuer is a LogValuer returning its value.
type valuer struct{ v slog.Value }

// LogValue implements slog.LogValuer.
func (v valuer) LogValue() slog.Value { return v.v }

// loopingValuer is a LogValuer that never resolves.
type loopingValuer struct{}

// LogValue implements slog.LogValuer.
func (loopingValuer) LogValue() slog.Value { return slog.AnyValue(loopingValuer{}) }

// point is a plain struct marshaled by encoding/json.
type point struct {
	X, Y  int
	Label string  `json:"label"`
	F     float64 `json:"f,omitempty"`
}

// attrCases are attribute lists covering every kind of value.
var attrCases = []struct {
	name  string
	attrs []slog.Attr
}{
	{"none", nil},
	{"string plain", []slog.Attr{slog.String("s", "hello world")}},
	{"string empty", []slog.Attr{slog.String("s", "")}},
	{"string quotes backslashes", []slog.Attr{slog.String("s", `say "hi" \ C:\path\`)}},
	{"string control", []slog.Attr{slog.String("s", "a\x00b\x01\x1f\t\n\r\b\f\x7f")}},
	{"string invalid utf8", []slog.Attr{slog.String("s", "a\xffb\xc3\x28c\xed\xa0\x80\xf0\x90\x80")}},
	{"string line separators", []slog.Attr{slog.String("s", "a\u2028b\u2029c\u202a")}},
	{"string unicode", []slog.Attr{slog.String("s", "héllo wörld 日本語 🦜 \U0010ffff \ufffd")}},
	{"string html", []slog.Attr{slog.String("s", "<a href=\"x\">&amp;</a>")}},
	{"keys escaped", []slog.Attr{slog.Int("k\"\\\n\u2028\xff", 1), slog.Int("", 2), slog.Int("日本", 3)}},
	{"ints", []slog.Attr{slog.Int("i", 0), slog.Int("neg", -42), slog.Int64("min", math.MinInt64), slog.Int64("max", math.MaxInt64)}},
	{"uints", []slog.Attr{slog.Uint64("u", 0), slog.Uint64("max", math.MaxUint64), slog.Any("u8", uint8(255)), slog.Any("uptr", uintptr(7))}},
	{"floats", []slog.Attr{
		slog.Float64("zero", 0), slog.Float64("negzero", math.Copysign(0, -1)), slog.Float64("f", 1.5),
		slog.Float64("big", 1e21), slog.Float64("belowbig", 999999999999999999999.0), slog.Float64("small", 1e-7),
		slog.Float64("atsmall", 1e-6), slog.Float64("mixed", 123456789.123), slog.Float64("neg", -2.5e-9),
		slog.Float64("huge", math.MaxFloat64), slog.Float64("tiny", math.SmallestNonzeroFloat64),
		slog.Float64("e100", 1e100), slog.Float64("em100", -1e-100), slog.Float64("third", 1.0/3),
	}},
	{"float32 like", []slog.Attr{slog.Any("f32", float32(1.1)), slog.Any("f32small", float32(1e-7)), slog.Float64("f", float64(float32(0.1)))}},
	{"float nan", []slog.Attr{slog.Float64("nan", math.NaN()), slog.Int("after", 1)}},
	{"float inf", []slog.Attr{slog.Float64("pinf", math.Inf(1)), slog.Float64("ninf", math.Inf(-1))}},
	{"bools", []slog.Attr{slog.Bool("t", true), slog.Bool("f", false)}},
	{"durations", []slog.Attr{slog.Duration("d", 1500*time.Millisecond), slog.Duration("z", 0), slog.Duration("neg", -time.Nanosecond), slog.Duration("max", math.MaxInt64)}},
	{"times", []slog.Attr{
		slog.Time("utc", time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC)),
		slog.Time("zone", testTime),
		slog.Time("negzone", time.Date(2023, 12, 31, 23, 59, 59, 100, time.FixedZone("W", -8*3600-15*60))),
		slog.Time("local", time.Unix(1700000000, 5).Local()),
		slog.Time("mono", time.Now()),
		slog.Time("zero", time.Time{}),
	}},
	{"times out of range", []slog.Attr{
		slog.Time("y10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)),
		slog.Time("yneg", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)),
		slog.Time("y9999", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)),
		slog.Time("y0", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)),
	}},
	{"errors", []slog.Attr{
		slog.Any("err", errors.New(`boom "quoted" <html>`)),
		slog.Any("wrapped", fmt.Errorf("outer: %w", io.EOF)),
		slog.Any("marshaling", marshalingError{}),
		slog.Any("ptr", &ptrError{"ptr error"}),
		slog.Any("nilptr", (*ptrError)(nil)),
	}},
	{"marshalers", []slog.Attr{
		slog.Any("m", marshaler{}),
		slog.Any("fail", failingMarshaler{}),
		slog.Any("panic", panickingMarshaler{}),
		slog.Any("level", slog.LevelWarn+1),
		slog.Any("kind", slog.KindInt64),
	}},
	{"structs and containers", []slog.Attr{
		slog.Any("p", point{1, -2, "<a&b>", 0.5}),
		slog.Any("pp", &point{X: 3}),
		slog.Any("map", map[string]any{"b": 1, "a": []int{1, 2}, "f": 1e21}),
		slog.Any("slice", []string{"x", "\u2028"}),
		slog.Any("bytes", []byte("hi")),
		slog.Any("rawjson", json.RawMessage(`{"a" : 1}`)),
	}},
	{"unsupported", []slog.Attr{slog.Any("ch", make(chan int)), slog.Any("fn", func() {}), slog.Any("cplx", complex(1, 2)), slog.Any("nanInMap", map[string]float64{"x": math.NaN()})}},
	{"nil any", []slog.Attr{slog.Any("n", nil), slog.Any("nilmap", map[string]int(nil)), slog.Any("nilptr", (*point)(nil))}},
	{"empty attrs", []slog.Attr{{}, slog.Int("a", 1), {}, slog.Any("", nil), slog.Int("b", 2), {}}},
	{"only empty attrs", []slog.Attr{{}, slog.Any("", nil)}},
	{"empty key non-nil", []slog.Attr{slog.Int("", 0), slog.String("", ""), slog.Bool("", false)}},
	{"log valuers", []slog.Attr{
		slog.Any("v", valuer{slog.StringValue("resolved")}),
		slog.Any("nested", valuer{slog.AnyValue(valuer{slog.IntValue(7)})}),
		slog.Any("group", valuer{slog.GroupValue(slog.Int("a", 1), slog.String("b", "x"))}),
		slog.Any("", valuer{slog.GroupValue(slog.Int("inl", 1))}),
		slog.Any("loop", loopingValuer{}),
		slog.Any("float", valuer{slog.Float64Value(math.NaN())}),
	}},
	{"log valuer empty group", []slog.Attr{slog.Int("a", 1), slog.Any("g", valuer{slog.GroupValue()}), slog.Int("b", 2)}},
	{"log valuer only empty group", []slog.Attr{slog.Any("g", valuer{slog.GroupValue()})}},
	{"log valuer nil", []slog.Attr{slog.Any("", valuer{slog.AnyValue(nil)}), slog.Int("a", 1)}},
	{"groups nested", []slog.Attr{slog.Group("g", slog.Int("a", 1), slog.Group("h", slog.String("b", "x"), slog.Group("i", slog.Bool("c", true))), slog.Int("d", 2)), slog.Int("e", 3)}},
	{"group empty", []slog.Attr{slog.Int("a", 1), slog.Group("empty"), slog.Group("g", slog.Group("empty2")), slog.Int("b", 2)}},
	{"group of empty attrs", []slog.Attr{slog.Int("a", 1), slog.Group("g", slog.Attr{}), slog.Int("b", 2)}},
	{"group of empty attrs first", []slog.Attr{slog.Group("g", slog.Attr{}), slog.Int("b", 2)}},
	{"group inline", []slog.Attr{slog.Int("a", 1), slog.Group("", slog.Int("b", 2), slog.Group("", slog.Int("c", 3))), slog.Int("d", 4)}},
	{"group inline of empty attrs", []slog.Attr{slog.Int("a", 1), slog.Group("", slog.Attr{}), slog.Int("b", 2)}},
	{"group as attr slice", []slog.Attr{slog.Any("g", []slog.Attr{slog.Int("a", 1)})}},
	{"group duplicate keys", []slog.Attr{slog.Int("a", 1), slog.Int("a", 2), slog.Group("a", slog.Int("a", 3))}},
	{"source", []slog.Attr{
		slog.Any("src", &slog.Source{Function: "f", File: "x.go", Line: 3}),
		slog.Any("partial", &slog.Source{Line: 9}),
		slog.Any("empty", &slog.Source{}),
		slog.Any("nil", (*slog.Source)(nil)),
		slog.Any("value", slog.Source{File: "v.go"}),
	}},
	{"many attrs", manyAttrs(40)},
}

// manyAttrs returns n int attributes, more than a record stores inline.
func manyAttrs(n int) []slog.Attr {
	attrs := make([]slog.Attr, n)
	for i := range attrs {
		attrs[i] = slog.Int(fmt.Sprint("k", i), i)
	}
	return attrs
}

// chains are the handler derivations every attribute case is checked under.
var chains = [][]step{
	nil,
	{withAttrs(slog.String("svc", "api"))},
	{withGroup("g")},
	{withGroup("g"), withGroup("h")},
	{withAttrs(slog.Int("a", 1)), withGroup("g")},
	{withGroup("g"), withAttrs(slog.Int("a", 1))},
	{withGroup("g"), withAttrs(slog.Int("a", 1)), withGroup("h")},
	{withGroup("g"), withAttrs(slog.Int("a", 1)), withGroup("h"), withAttrs(slog.Int("b", 2))},
	{withAttrs(slog.Int("a", 1)), withAttrs(slog.Int("b", 2)), withGroup("g"), withAttrs(slog.Int("c", 3))},
	{withGroup("g"), withAttrs(slog.Attr{})},
	{withGroup("g"), withAttrs(slog.Group("empty"))},
	{withGroup("g"), withAttrs()},
	{withGroup("g"), withAttrs(slog.Group("", slog.Int("inl", 1)))},
	{withGroup("g"), withAttrs(slog.Any("v", valuer{slog.GroupValue()}))},
	{withGroup("g"), withAttrs(slog.Any("v", valuer{slog.GroupValue()})), withAttrs(slog.Int("x", 1))},
	{withAttrs(slog.Group("ge", slog.Attr{})), withAttrs(slog.Int("x", 1))},
	{withGroup("")},
	{withGroup("g"), withGroup(""), withAttrs(slog.Int("a", 1))},
	{withGroup("q\"\u2028")},
}

// TestParity checks every attribute case, as record attributes and as
// WithAttrs attributes, under every chain.
func TestParity(t *testing.T) {
	for _, tc := range attrCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, chain := range chains {
				checkParity(t, nil, chain, newRecord(tc.attrs...))
				pre := append(cloneChain(chain), withAttrs(tc.attrs...))
				checkParity(t, nil, pre, newRecord())
				checkParity(t, nil, pre, newRecord(slog.Int("rec", 1)))
				checkParity(t, nil, append(pre, withGroup("after")), newRecord(slog.Int("rec", 1)))
			}
		})
	}
}

// cloneChain returns a copy of chain that appending to does not share.
func cloneChain(chain []step) []step { return append([]step(nil), chain...) }

// TestParityRecords checks record times, levels and messages.
func TestParityRecords(t *testing.T) {
	tests := []struct {
		name  string
		time  time.Time
		level slog.Level
		msg   string
	}{
		{"info", testTime, slog.LevelInfo, "hello"},
		{"zero time", time.Time{}, slog.LevelInfo, "no time"},
		{"utc now", time.Now().UTC(), slog.LevelError, "now"},
		{"local monotonic", time.Now(), slog.LevelWarn, "mono"},
		{"whole second", time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC), slog.LevelInfo, ""},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "future"},
		{"message escaped", testTime, slog.LevelInfo, "a \"b\" \\ \n\t\x00 \xff \u2028 🦜 <&>"},
		{"debug", testTime, slog.LevelDebug, "m"},
		{"debug-4", testTime, slog.LevelDebug - 4, "m"},
		{"debug+1", testTime, slog.LevelDebug + 1, "m"},
		{"debug+3", testTime, slog.LevelDebug + 3, "m"},
		{"info+1", testTime, slog.LevelInfo + 1, "m"},
		{"info+3", testTime, slog.LevelInfo + 3, "m"},
		{"warn", testTime, slog.LevelWarn, "m"},
		{"warn+2", testTime, slog.LevelWarn + 2, "m"},
		{"error", testTime, slog.LevelError, "m"},
		{"error+100", testTime, slog.LevelError + 100, "m"},
		{"min", testTime, slog.Level(math.MinInt), "m"},
		{"max", testTime, slog.Level(math.MaxInt), "m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := &slog.HandlerOptions{Level: slog.Level(math.MinInt)}
			for _, chain := range chains {
				r := slog.NewRecord(tc.time, tc.level, tc.msg, 0)
				checkParity(t, opts, chain, r)
				r.AddAttrs(slog.String("a", "b"), slog.Float64("f", 0.25))
				checkParity(t, opts, chain, r)
			}
		})
	}
}

// TestAppendTime compares appendTime, which formats most times itself,
// with appendTimeSlow, which uses time.Time.AppendFormat as slog does.
func TestAppendTime(t *testing.T) {
	zones := []*time.Location{
		time.UTC, time.Local,
		time.FixedZone("", 0), time.FixedZone("IST", 5*3600+30*60), time.FixedZone("W", -8*3600-15*60),
		time.FixedZone("LMT", -1050), time.FixedZone("S", 59), time.FixedZone("NS", -59),
		time.FixedZone("max", 100*3600-1), time.FixedZone("min", -100*3600+1),
		time.FixedZone("over", 100*3600), time.FixedZone("under", -100*3600), time.FixedZone("huge", math.MaxInt32),
	}
	times := []time.Time{
		{},
		time.Unix(0, 0), time.Unix(-1, 999999999), time.Unix(1, 1), time.Unix(1700000000, 120000000),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 2, 29, 12, 0, 0, 0, time.UTC), time.Date(0, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 2, 29, 1, 2, 3, 4, time.UTC), time.Date(1900, 2, 28, 23, 59, 59, 10, time.UTC), time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-400, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(292277026596, 12, 4, 0, 0, 0, 0, time.UTC),
		time.Now(),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		times = append(times, time.Unix(rng.Int64N(maxFastSec-minFastSec+4e6)+minFastSec-2e6, rng.Int64N(1e9)))
	}
	for _, tt := range times {
		for _, z := range zones {
			tz := tt.In(z)
			if got, want := string(appendTime(nil, tz)), string(appendTimeSlow(nil, tz)); got != want {
				t.Fatalf("appendTime(%v) = %s, want %s", tz, got, want)
			}
		}
	}
}

// TestDelegation checks that options the fast path does not implement give
// slog's own handler, and that it writes what slog writes.
func TestDelegation(t *testing.T) {
	replace := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	tests := []struct {
		name     string
		opts     *slog.HandlerOptions
		delegate bool
	}{
		{"nil options", nil, false},
		{"level only", &slog.HandlerOptions{Level: slog.LevelDebug}, false},
		{"add source", &slog.HandlerOptions{AddSource: true}, true},
		{"replace attr", &slog.HandlerOptions{ReplaceAttr: replace}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, isSlog := New(io.Discard, tc.opts).(*slog.JSONHandler)
			if isSlog != tc.delegate {
				t.Fatalf("delegated = %v, want %v", isSlog, tc.delegate)
			}
			for _, chain := range chains {
				checkParity(t, tc.opts, chain, newRecord(slog.Int("a", 1), slog.Group("g", slog.String("b", "c"))))
			}
		})
	}
}

// TestEnabled checks level filtering with a LevelVar and the default level.
func TestEnabled(t *testing.T) {
	var lv slog.LevelVar
	tests := []struct {
		name  string
		level slog.Leveler // nil: default
		set   slog.Level   // value of lv, when level is &lv
		check slog.Level
		want  bool
	}{
		{"default info", nil, 0, slog.LevelInfo, true},
		{"default debug", nil, 0, slog.LevelDebug, false},
		{"default info-1", nil, 0, slog.LevelInfo - 1, false},
		{"default error", nil, 0, slog.LevelError, true},
		{"var debug allows debug", &lv, slog.LevelDebug, slog.LevelDebug, true},
		{"var debug blocks debug-1", &lv, slog.LevelDebug, slog.LevelDebug - 1, false},
		{"var warn blocks info", &lv, slog.LevelWarn, slog.LevelInfo, false},
		{"var warn allows warn", &lv, slog.LevelWarn, slog.LevelWarn, true},
		{"var error allows error+4", &lv, slog.LevelError, slog.LevelError + 4, true},
		{"fixed level", slog.LevelWarn, 0, slog.LevelInfo, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lv.Set(tc.set)
			opts := &slog.HandlerOptions{Level: tc.level}
			h := New(io.Discard, opts)
			derived := h.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)})
			for _, h := range []slog.Handler{h, derived} {
				if got := h.Enabled(context.Background(), tc.check); got != tc.want {
					t.Errorf("Enabled(%v) = %v, want %v", tc.check, got, tc.want)
				}
				if want := slog.NewJSONHandler(io.Discard, opts).Enabled(context.Background(), tc.check); want != tc.want {
					t.Errorf("slog Enabled(%v) = %v: test case is wrong", tc.check, want)
				}
			}
		})
	}
}

// unsyncWriter collects writes without locking, so the race detector sees
// any write the handler does not serialize.
type unsyncWriter struct{ buf []byte }

// Write implements io.Writer.
func (w *unsyncWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// TestConcurrent logs from several goroutines through derived handlers and
// checks every line is complete, valid JSON.
func TestConcurrent(t *testing.T) {
	const goroutines, lines = 8, 200
	var w unsyncWriter
	root := New(&w, nil)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := root.WithAttrs([]slog.Attr{slog.Int("g", g)})
			if g%2 == 0 {
				h = h.WithGroup("grp").WithAttrs([]slog.Attr{slog.String("s", "x")})
			}
			for i := range lines {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "concurrent", 0)
				r.AddAttrs(slog.Int("i", i), slog.Float64("f", float64(i)/3), slog.Any("any", point{X: i}))
				if err := h.Handle(context.Background(), r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(string(w.buf), "\n"), "\n")
	if len(got) != goroutines*lines {
		t.Fatalf("%d lines, want %d", len(got), goroutines*lines)
	}
	for _, line := range got {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("invalid line %q: %v", line, err)
		}
		if m["msg"] != "concurrent" {
			t.Fatalf("incomplete line %q", line)
		}
	}
}

// TestAccessLineAllocs checks the access log line allocates at most once
// per record (none with a warm buffer pool).
func TestAccessLineAllocs(t *testing.T) {
	h := New(io.Discard, nil)
	r := accessRecord()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() { _ = h.Handle(ctx, r) })
	if allocs > 1 {
		t.Errorf("%v allocations per record, want at most 1", allocs)
	}
}

// accessRecord returns the record the API server logs per HTTP request.
func accessRecord() slog.Record {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "http request", 0)
	r.AddAttrs(
		slog.String("method", "GET"),
		slog.String("path", "/2/compliance/jobs/2125959300458217477"),
		slog.String("route", "GET /2/compliance/jobs/{id}"),
		slog.Int("status", 200),
		slog.Int64("bytes", 463),
		slog.Float64("duration_ms", 1.234),
		slog.String("remote", "127.0.0.1:43210"),
	)
	r.AddAttrs(slog.String("request_id", "b9341e389bd17ed56242396d")) // as the request-id wrapper handler does
	return r
}

// FuzzParity compares the handler with slog.JSONHandler on arbitrary keys,
// strings, floats and group names.
func FuzzParity(f *testing.F) {
	f.Add("key", "value", 1.234, "g", int64(0), int64(1700000000), int64(123456789), int32(0))
	f.Add("", "", 0.0, "", int64(-4), int64(0), int64(0), int32(3600))
	f.Add("k\"\\", "a\u2028\xff\x00", 1e21, "\xc3", int64(9), int64(-62167219201), int64(1), int32(-1050))
	f.Add("x", "🦜<&>", 1e-7, "grp", int64(3), int64(253402300799), int64(999999999), int32(-359999))
	f.Add("n", "\t", math.Inf(1), "", int64(1<<40), int64(-1<<40), int64(-1), int32(math.MaxInt32))
	f.Fuzz(func(t *testing.T, key, val string, fl float64, group string, level, sec, nsec int64, offset int32) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("", int(offset)))
		r := slog.NewRecord(tm, slog.Level(level), val, 0)
		r.AddAttrs(
			slog.Time(key, tm),
			slog.Time("utc", tm.UTC()),
			slog.String(key, val),
			slog.Float64(key, fl),
			slog.Float64("neg", -fl),
			slog.Float64("f32", float64(float32(fl))),
			slog.Group(group, slog.String(val, key), slog.Float64("f", fl)),
			slog.Any(key, map[string]any{val: fl}),
			slog.Any(val, errors.New(key)),
		)
		opts := &slog.HandlerOptions{Level: slog.Level(math.MinInt)}
		for _, chain := range [][]step{
			nil,
			{withGroup(group)},
			{withAttrs(slog.String(val, key), slog.Float64(key, fl)), withGroup(group)},
			{withGroup(group), withAttrs(slog.Group(key, slog.String(val, val)))},
		} {
			checkParity(t, opts, chain, r)
		}
	})
}
