package httpx

import (
	"maps"
	"net/http"
	"slices"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/validation"
)

// checkQuery parses the raw query string (see apierr.ParseQuery) and reports, in
// name order, every parameter that is not known and every known one given
// more than once; nil when there is none.
func checkQuery(rawQuery string, known map[string]bool, allowed []string) error {
	query, err := apierr.ParseQuery(rawQuery)
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
	q, err := apierr.ParseQuery(r.URL.RawQuery)
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
