package httpx

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/validation"
)

// checkQuery parses the raw query string (see parseQuery) and reports, in
// name order, every parameter that is not known and every known one given
// more than once; nil when there is none.
func checkQuery(rawQuery string, known map[string]bool, allowed []string) error {
	query, err := parseQuery(rawQuery)
	if err != nil || len(query) == 0 {
		return err
	}
	var errs []apierr.ParamError
	for _, name := range slices.Sorted(maps.Keys(query)) {
		switch {
		case !known[name]:
			errs = append(errs, apierr.UnknownParam(name, allowed))
		case len(query[name]) > 1:
			errs = append(errs, apierr.RepeatedParam(name, query[name]))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierr.InvalidRequest(errs...)
}

// parseQuery parses a raw query string like url.ParseQuery, but a pair it
// cannot decode (a bad %-escape, a ';' separator) is an invalid-request
// error naming that parameter. (url.URL.Query drops such a pair silently,
// so `?type=%zz` would read as a missing type.)
func parseQuery(rawQuery string) (url.Values, error) {
	if rawQuery == "" {
		return nil, nil // reads of a nil url.Values find nothing, as of an empty one
	}
	values, err := url.ParseQuery(rawQuery)
	if err == nil {
		return values, nil
	}
	var errs []apierr.ParamError
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if pe, bad := malformedPair(pair); bad {
			errs = append(errs, pe)
		}
	}
	if len(errs) == 0 { // not a pair's fault (for example too many parameters)
		return nil, apierr.InvalidParam("query", fmt.Sprintf("The query string is malformed: %v", err))
	}
	return nil, apierr.InvalidRequest(errs...)
}

// malformedPair reports the invalid-request entry of one name=value pair
// of a query string that url.ParseQuery rejects; false when it is fine.
func malformedPair(pair string) (apierr.ParamError, bool) {
	rawName, rawValue, _ := strings.Cut(pair, "=")
	name, err := url.QueryUnescape(rawName)
	if err == nil && strings.Contains(rawName, ";") {
		err = errors.New("invalid semicolon separator in query")
	}
	if err != nil {
		return apierr.Param(rawName, fmt.Sprintf("The query parameter name [%s] is malformed: %v", rawName, err), rawName), true
	}
	if _, err := url.QueryUnescape(rawValue); err != nil {
		return apierr.Param(name, fmt.Sprintf("The `%s` query parameter value is malformed: %v", name, err), rawValue), true
	}
	if strings.Contains(rawValue, ";") {
		return apierr.Param(name, fmt.Sprintf("The `%s` query parameter value is malformed: ';' is not a separator; escape it as %%3B", name), rawValue), true
	}
	return apierr.ParamError{}, false
}

// BindQuery decodes the query string into the struct v points to (fields
// named by their `query` tags) and validates it with val. A required
// parameter that is absent or empty is answered alone, as a missing
// parameter; other failures are answered together.
func BindQuery(r *http.Request, val *validation.Validator, v any) error {
	query, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	if err := decodeValues(query, v, "query parameter"); err != nil {
		return err
	}
	errs := val.Query(v)
	for _, e := range errs {
		if e.Missing {
			return apierr.MissingParam(e.Field)
		}
	}
	return FieldErrors(errs)
}

// ObjectFields describes the fields of one response object type (a
// compliance job, a post, a user, a media item) for its `<object>.fields`
// parameter: the fields every response shows and the ones the parameter may
// name. Declare one per object type, next to its renderer.
type ObjectFields struct {
	// Default are the fields shown without asking (the platform's default
	// fields of the object).
	Default []string
	// Allowed are the fields the parameter may name, Default included.
	Allowed []string
}

// FieldSet is the set of fields a response object shows: its type's
// default fields plus the ones a `<object>.fields` parameter added. Build
// it with Fields or ObjectFields.With; the zero FieldSet shows no field.
type FieldSet struct {
	// The defaults (the ObjectFields' own slice, shared) and the fields
	// added: an object type has a few dozen fields at most, so scanning
	// two short slices costs no more than a map lookup and the set costs
	// no allocation on every request.
	defaults, added []string
}

// With returns the FieldSet of the default fields plus requested (which
// it keeps: the caller must not change it afterwards).
func (o ObjectFields) With(requested ...string) FieldSet {
	return FieldSet{defaults: o.Default, added: requested}
}

// Fields parses the comma-separated `param` (for example
// "compliance_job.fields") against obj.Allowed and returns obj's default
// fields plus the listed ones: the parameter adds fields, it never removes
// a default one. Without the parameter the defaults are shown.
func Fields(r *http.Request, param string, obj ObjectFields) (FieldSet, error) {
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return FieldSet{}, err
	}
	if !q.Has(param) {
		return obj.With(), nil
	}
	items, errs := validation.FieldList(param, q.Get(param), obj.Allowed)
	if err := FieldErrors(errs); err != nil {
		return FieldSet{}, err
	}
	return obj.With(items...), nil
}

// Has reports whether field is shown.
func (s FieldSet) Has(field string) bool {
	return slices.Contains(s.defaults, field) || slices.Contains(s.added, field)
}
