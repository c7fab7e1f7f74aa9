package httpx

import "testing"

// TestRepeatedKey: the second of two names in one object (case ignored)
// is found and placed from the top of the body; names repeated only
// across objects, and bodies that are not JSON, pass.
func TestRepeatedKey(t *testing.T) {
	tests := []struct {
		body, path string
	}{
		{`{"a":1,"a":2}`, "a"},
		{`{"a":1,"A":2}`, "A"},
		{`[{"t":1},{"t":1,"p":{"u":[1,{"e":1,"E":2}]}}]`, "[1].p.u[1].E"},
		{`{"products":[{"id":1},{"id":2,"title":"a","x":[],"title":"b"}]}`, "products[1].title"},
		{`[[],[{"k":{}, "k":{}}]]`, "[1][0].k"},
		{`{"a":{"b":1},"b":1,"c":[{"b":1},{"b":1}]}`, ""},
		{`{"a":1,"a"`, "a"},
		{`not json`, ""},
	}
	for _, tt := range tests {
		path, ok := RepeatedKey([]byte(tt.body))
		if ok != (tt.path != "") || path != tt.path {
			t.Errorf("RepeatedKey(%s) = %q, %v; want %q", tt.body, path, ok, tt.path)
		}
	}
}
