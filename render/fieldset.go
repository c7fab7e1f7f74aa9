package render

import "slices"

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
// it with ObjectFields.With (or api/httpx.Fields); the zero FieldSet shows
// no field.
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

// Has reports whether field is shown.
func (s FieldSet) Has(field string) bool {
	return slices.Contains(s.defaults, field) || slices.Contains(s.added, field)
}
