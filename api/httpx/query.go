package httpx

import (
	"maps"
	"net/http"
	"slices"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/render"
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

// ObjectFields describes the fields of one response object type for its
// `<object>.fields` parameter (render.ObjectFields: the renderer both
// tiers share declares them; features declare theirs the same way).
type ObjectFields = render.ObjectFields

// FieldSet is the set of fields a response object shows
// (render.FieldSet).
type FieldSet = render.FieldSet

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
