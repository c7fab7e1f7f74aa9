package adsx

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/validation"
)

// MaxIDs is how many ids an id-list filter takes.
const MaxIDs = 200

// Params are an ads request's parameters: the query string merged with a
// form body, each name given at most once. Getters parse one parameter
// each, record what they parsed for request.params, and collect errors;
// Err reports them all at once in the ads envelope.
type Params struct {
	values url.Values
	echo   map[string]any
	errs   []apierr.ParamError
	failed map[string]bool
	// fingerprint binds cursors to the query they page (set by List).
	fingerprint string
	pattern     string
}

// readParams merges r's query string and form body. The query string was
// checked by the endpoint's Query list; the form body is checked here
// against the same names: an unknown name, or one given twice (also once
// in each), is an invalid parameter.
func readParams(r *http.Request, allowed []string) (*Params, error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, Invalid("query", "The query string is malformed")
	}
	form, err := formValues(r)
	if err != nil {
		return nil, err
	}
	var errs []apierr.ParamError
	for _, name := range slices.Sorted(maps.Keys(form)) {
		switch {
		case !slices.Contains(allowed, name):
			errs = append(errs, apierr.UnknownParam(name, allowed))
		case len(form[name])+len(values[name]) > 1:
			errs = append(errs, apierr.RepeatedParam(name, append(values[name], form[name]...)))
		default:
			values[name] = form[name]
		}
	}
	if len(errs) > 0 {
		return nil, apierr.InvalidRequest(errs...)
	}
	p := &Params{values: values, echo: map[string]any{}, failed: map[string]bool{}, pattern: r.Pattern}
	for _, name := range pathNames(r.Pattern) {
		id := r.PathValue(name)
		if !validID(id) {
			return nil, pathNotFound(name, id)
		}
		p.echo[name] = id
	}
	return p, nil
}

// pathCodes are the codes of the 404 a path value that names no entity
// gets (any other: NOT_FOUND).
var pathCodes = map[string]string{
	"campaign_id":            "CAMPAIGN_NOT_FOUND",
	"line_item_id":           "LINE_ITEM_NOT_FOUND",
	"funding_instrument_id":  "FUNDING_INSTRUMENT_NOT_FOUND",
	"promoted_tweet_id":      "PROMOTED_TWEET_NOT_FOUND",
	"targeting_criterion_id": "TARGETING_CRITERION_NOT_FOUND",
	"account_media_id":       "ACCOUNT_MEDIA_NOT_FOUND",
	"media_creative_id":      "MEDIA_CREATIVE_NOT_FOUND",
	"media_key":              "MEDIA_NOT_FOUND",
	"custom_audience_id":     "TAILORED_AUDIENCE_NOT_FOUND",
	"tailored_audience_id":   "TAILORED_AUDIENCE_NOT_FOUND",
}

// pathNotFound is the answer to a path value no entity can have (bytes
// outside the id alphabet, too long): what a well-formed unknown id gets,
// so the store never sees it. The value is not echoed (it may not even be
// UTF-8).
func pathNotFound(name, id string) error {
	shown := strings.ToValidUTF8(strings.ReplaceAll(id, "\x00", ""), "")
	if name == "account_id" {
		return AccountNotFound(shown)
	}
	code, ok := pathCodes[name]
	if !ok {
		code = CodeNotFound
	}
	return NotFound(code, name, shown)
}

// formValues parses a form body of a POST or PUT (the body rule admitted
// only form bodies on ads endpoints).
func formValues(r *http.Request) (url.Values, error) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
		return nil, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	saved := r.URL.RawQuery
	r.URL.RawQuery = "" // ParseForm merges the query; read the body alone
	err := r.ParseForm()
	r.URL.RawQuery = saved
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierr.PayloadTooLarge(tooLarge.Limit)
		}
		return nil, Invalid("body", "The form body is malformed")
	}
	return r.PostForm, nil
}

// pathNames lists the {wildcards} of a ServeMux pattern.
func pathNames(pattern string) []string {
	var names []string
	for seg := range strings.SplitSeq(pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.Trim(seg, "{}"), "..."))
		}
	}
	return names
}

// Has reports whether name was sent.
func (p *Params) Has(name string) bool {
	_, ok := p.values[name]
	return ok
}

// raw is name's value and whether it was sent.
func (p *Params) raw(name string) (string, bool) {
	vs, ok := p.values[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// fail records an invalid-parameter error for name (once per name).
func (p *Params) fail(code, name, message, value string) {
	if p.failed[name] {
		return
	}
	p.failed[name] = true
	e := apierr.Param(name, message, value)
	e.Code = code
	p.errs = append(p.errs, e)
}

// Fail records a rule violation found by the handler for name.
func (p *Params) Fail(name, message string) {
	v, _ := p.raw(name)
	p.fail(CodeInvalidParameter, name, message, v)
}

// FailMissing records a parameter the handler requires in this case.
func (p *Params) FailMissing(name, message string) {
	p.fail(CodeMissingParameter, name, message, "")
}

// Failed reports whether name already has an error.
func (p *Params) Failed(name string) bool { return p.failed[name] }

// Err is every recorded error as one 400, nil if there is none. The code
// of the whole error is that of its first entry.
func (p *Params) Err() error {
	if len(p.errs) == 0 {
		return nil
	}
	e := apierr.InvalidRequest(p.errs...)
	e.AdsCode = p.errs[0].Code
	return e
}

// Echo is request.params: the path values and every parameter parsed.
func (p *Params) Echo() map[string]any { return p.echo }

// value returns name's raw value, recording MISSING_PARAMETER when required
// and absent and INVALID_PARAMETER when sent empty.
func (p *Params) value(name string, required bool) (string, bool) {
	v, ok := p.raw(name)
	switch {
	case !ok && required:
		p.fail(CodeMissingParameter, name, fmt.Sprintf("%s is missing", name), "")
		return "", false
	case !ok:
		return "", false
	case v == "":
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("Expected a value for %s, got an empty string", name), v)
		return "", false
	}
	return v, true
}

// String is an optional string of at most maxLen characters (0: any).
func (p *Params) String(name string, maxLen int) *string {
	v, ok := p.value(name, false)
	if !ok || !p.checkText(name, v, maxLen) {
		return nil
	}
	p.echo[name] = v
	return &v
}

// Required is a required string of at most maxLen characters (0: any).
func (p *Params) Required(name string, maxLen int) string {
	v, ok := p.value(name, true)
	if !ok || !p.checkText(name, v, maxLen) {
		return ""
	}
	p.echo[name] = v
	return v
}

func (p *Params) checkText(name, v string, maxLen int) bool {
	switch {
	case !utf8.ValidString(v):
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%s is not valid UTF-8 text", name), "")
		return false
	case strings.ContainsRune(v, 0):
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%s must not contain NUL (U+0000) characters", name), "")
		return false
	case maxLen > 0 && utf8.RuneCountInString(v) > maxLen:
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%s must be at most %d characters", name, maxLen), v)
		return false
	}
	return true
}

// Int64 is an optional integer in [min, max].
func (p *Params) Int64(name string, min, max int64) *int64 {
	v, ok := p.value(name, false)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("Expected Long, got %q for %s", v, name), v)
		return nil
	case n < min || n > max:
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%s must be between %d and %d", name, min, max), v)
		return nil
	}
	p.echo[name] = n
	return &n
}

// Int is Int64 for int-sized values.
func (p *Params) Int(name string, min, max int) *int {
	n := p.Int64(name, int64(min), int64(max))
	if n == nil {
		return nil
	}
	i := int(*n)
	return &i
}

// Bool is an optional boolean: true or false (any case).
func (p *Params) Bool(name string) *bool {
	v, ok := p.value(name, false)
	if !ok {
		return nil
	}
	var b bool
	switch strings.ToLower(v) {
	case "true":
		b = true
	case "false":
	default:
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("Expected Boolean, got %q for %s", v, name), v)
		return nil
	}
	p.echo[name] = b
	return &b
}

// Flag is Bool with a default.
func (p *Params) Flag(name string, def bool) bool {
	if b := p.Bool(name); b != nil {
		return *b
	}
	return def
}

// Enum is an optional value of allowed, matched without regard to case and
// returned as listed.
func (p *Params) Enum(name string, allowed []string) *string {
	v, ok := p.value(name, false)
	if !ok {
		return nil
	}
	c, ok := p.enumValue(name, v, allowed)
	if !ok {
		return nil
	}
	p.echo[name] = c
	return &c
}

// RequiredEnum is Enum for a required parameter.
func (p *Params) RequiredEnum(name string, allowed []string) string {
	if _, ok := p.value(name, true); !ok {
		return ""
	}
	if v := p.Enum(name, allowed); v != nil {
		return *v
	}
	return ""
}

func (p *Params) enumValue(name, v string, allowed []string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(a, v) {
			return a, true
		}
	}
	p.fail(CodeInvalidParameter, name, fmt.Sprintf("Expected enum value of [%s], got %q for %s", strings.Join(allowed, ", "), v, name), v)
	return "", false
}

// List is an optional comma-separated list of at most maxItems non-empty
// entries (0: any number).
func (p *Params) List(name string, maxItems int) []string {
	v, ok := p.value(name, false)
	if !ok {
		return nil
	}
	items := strings.Split(v, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			p.fail(CodeInvalidParameter, name, fmt.Sprintf("%s has an empty entry", name), v)
			return nil
		}
	}
	if maxItems > 0 && len(items) > maxItems {
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%s takes at most %d values, got %d", name, maxItems, len(items)), v)
		return nil
	}
	if !p.checkText(name, v, 0) {
		return nil
	}
	p.echo[name] = items
	return items
}

// IDs is an id-list filter: a comma list of at most MaxIDs ids.
func (p *Params) IDs(name string) []string {
	ids := p.List(name, MaxIDs)
	for _, id := range ids {
		if !validID(id) {
			p.echo[name] = nil
			delete(p.echo, name)
			p.fail(CodeInvalidParameter, name, fmt.Sprintf("%q is not a valid id for %s", id, name), id)
			return nil
		}
	}
	return ids
}

// ID is an optional single id (1 to 64 of [0-9A-Za-z_-], as IDs takes
// them): anything else, a comma list included, is INVALID_PARAMETER.
func (p *Params) ID(name string) *string {
	v, ok := p.value(name, false)
	if !ok {
		return nil
	}
	if !validID(v) {
		shown := v
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			shown = ""
		}
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%q is not a valid id for %s", shown, name), shown)
		return nil
	}
	p.echo[name] = v
	return &v
}

// EnumList is a comma list of values of allowed (case-insensitive),
// returned as listed.
func (p *Params) EnumList(name string, allowed []string, maxItems int) []string {
	items := p.List(name, maxItems)
	out := make([]string, 0, len(items))
	for _, it := range items {
		c, ok := p.enumValue(name, it, allowed)
		if !ok {
			delete(p.echo, name)
			return nil
		}
		out = append(out, c)
	}
	if items == nil {
		return nil
	}
	p.echo[name] = out
	return out
}

// Time is an optional ISO 8601 timestamp (RFC 3339, with or without
// fractional seconds, or a date), returned in UTC.
func (p *Params) Time(name string) *time.Time {
	v, ok := p.value(name, false)
	if !ok {
		return nil
	}
	t, ok := parseTime(v)
	if !ok {
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("Expected time, got %q for %s", v, name), v)
		return nil
	}
	if msg := validation.OffsetError(t); msg != "" {
		p.fail(CodeInvalidParameter, name, fmt.Sprintf("%q is not a valid time for %s: %s", v, name, msg), v)
		return nil
	}
	p.echo[name] = v
	t = t.UTC()
	return &t
}

// RequiredTime is Time for a required parameter.
func (p *Params) RequiredTime(name string) time.Time {
	if _, ok := p.value(name, true); !ok {
		return time.Time{}
	}
	if t := p.Time(name); t != nil {
		return *t
	}
	return time.Time{}
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"}

// parseTime parses v by the first of timeLayouts that takes it, keeping
// its offset as written.
func parseTime(v string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// validID reports whether s can be an ads id: 1 to 64 of [0-9A-Za-z_-].
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
