// Package feature is a deliberately wrong API feature for TestScanSQLFindsAColumn:
// its list spec names a column, not a field.
package feature

type spec struct{ Sortable []string }

var list = spec{Sortable: []string{"name", "c.created_at"}}

var message = "The `media.fields` parameter, e.g. the name"
