package httpx

import (
	"fmt"
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

// Query reads a core endpoint's query parameters: the one way a handler
// reads its query (docs/architecture.md, "How an endpoint reads its
// input"). Each getter parses one parameter and records what is wrong with
// it, so a handler reads them all and Err answers every problem at once,
// in the order the getters ran. A required parameter that is absent or
// empty is answered alone, as a missing parameter. The endpoint's Query
// list has already refused unknown and repeated parameters.
type Query struct {
	values  url.Values
	err     error  // the query string itself is malformed
	missing string // the first required parameter not given
	errs    []apierr.ParamError
}

// ReadQuery parses r's query string (see apierr.ParseQuery).
func ReadQuery(r *http.Request) *Query {
	values, err := apierr.ParseQuery(r.URL.RawQuery)
	return &Query{values: values, err: err}
}

// Has reports whether name was sent (possibly empty).
func (q *Query) Has(name string) bool { return q.values.Has(name) }

// Raw is name's value as sent, unchecked ("" when absent): for echoing it
// in a message about another parameter.
func (q *Query) Raw(name string) string { return q.values.Get(name) }

// Fail records a problem the handler found with name (a rule between
// parameters, or one no getter knows).
func (q *Query) Fail(name, message string, values ...string) {
	q.errs = append(q.errs, apierr.Param(name, message, values...))
}

// FailField records problems a validation rule found.
func (q *Query) FailField(errs ...validation.FieldError) {
	for _, e := range errs {
		q.Fail(e.Field, e.Message, e.Values...)
	}
}

// Err is the malformed query string, else the first missing required
// parameter alone, else every recorded problem as one invalid-request; nil
// when there is none.
func (q *Query) Err() error {
	switch {
	case q.err != nil:
		return q.err
	case q.missing != "":
		return apierr.MissingParam(q.missing)
	case len(q.errs) > 0:
		return apierr.InvalidRequest(q.errs...)
	}
	return nil
}

// value is name's value and whether it was sent and is valid UTF-8 (a
// %-escaped byte such as %FF would otherwise reach the store as is).
func (q *Query) value(name string) (string, bool) {
	if !q.values.Has(name) {
		return "", false
	}
	v := q.values.Get(name)
	if !utf8.ValidString(v) {
		q.Fail(name, fmt.Sprintf("The `%s` query parameter value must be valid UTF-8", name), strings.ToValidUTF8(v, "\uFFFD"))
		return "", false
	}
	return v, true
}

// String is name's value and whether it was sent.
func (q *Query) String(name string) (string, bool) { return q.value(name) }

// Required is name's value; absent or empty, name is missing.
func (q *Query) Required(name string) string {
	v, ok := q.value(name)
	if !ok && !q.values.Has(name) || ok && v == "" {
		if q.missing == "" {
			q.missing = name
		}
	}
	return v
}

// ID is a core id (validation.IDPattern), 0 when absent or malformed.
func (q *Query) ID(name string) int64 {
	v, ok := q.value(name)
	if !ok {
		return 0
	}
	id, ok := validation.ParseID(v)
	if !ok {
		q.FailField(validation.IDError(name, v))
	}
	return id
}

// RequiredID is ID for a required parameter.
func (q *Query) RequiredID(name string) int64 {
	if q.Required(name) == "" {
		return 0
	}
	return q.ID(name)
}

// Int is a decimal integer in [lo, hi], def when absent.
func (q *Query) Int(name string, lo, hi, def int) int {
	v, ok := q.value(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi || v[0] < '0' || v[0] > '9' {
		q.Fail(name, fmt.Sprintf("The `%s` query parameter value [%s] is not between %d and %d", name, v, lo, hi), v)
	}
	return n
}

// Enum is one of allowed, def when absent (a value sent empty is checked
// like any other).
func (q *Query) Enum(name string, allowed []string, def string) string {
	v, ok := q.value(name)
	if !ok {
		return def
	}
	if e := validation.Enum(name, v, allowed); e != nil {
		q.FailField(*e)
	}
	return v
}

// RequiredEnum is Enum for a required parameter.
func (q *Query) RequiredEnum(name string, allowed []string) string {
	if q.Required(name) == "" {
		return ""
	}
	return q.Enum(name, allowed, "")
}

// Time is an RFC 3339 time (YYYY-MM-DDTHH:mm:ssZ) in UTC and whether it
// was sent and well-formed.
func (q *Query) Time(name string) (time.Time, bool) {
	v, ok := q.value(name)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		q.Fail(name, fmt.Sprintf("The `%s` query parameter value [%s] is not a valid RFC 3339 time (YYYY-MM-DDTHH:mm:ssZ)", name, v), v)
		return time.Time{}, false
	}
	return t.UTC(), true
}

// List is a comma-separated list whose items come from allowed, each once
// (see validation.FieldList); nil when absent.
func (q *Query) List(name string, allowed []string) []string {
	v, ok := q.value(name)
	if !ok {
		return nil
	}
	items, errs := validation.FieldList(name, v, allowed)
	q.FailField(errs...)
	return items
}

// Items is a required comma-separated list of at most max items, nil when
// it is missing or too long; noun names the items in that message ("ids",
// "items").
func (q *Query) Items(name string, max int, noun string) []string {
	raw := q.Required(name)
	if raw == "" {
		return nil
	}
	items := strings.Split(raw, ",")
	if len(items) > max {
		q.Fail(name, fmt.Sprintf("The `%s` query parameter lists %d %s; the most is %d.", name, len(items), noun, max), raw)
		return nil
	}
	return items
}

// IDs is Items of core ids, in request order, each id once (a repeated id
// is shown once); every malformed id is a problem.
func (q *Query) IDs(name string, max int, noun string) []int64 {
	items := q.Items(name, max, noun)
	list := make([]int64, 0, len(items))
	for _, item := range items {
		id, ok := validation.ParseID(item)
		if !ok {
			q.FailField(validation.IDError(name, item))
			continue
		}
		if !slices.Contains(list, id) {
			list = append(list, id)
		}
	}
	return list
}
