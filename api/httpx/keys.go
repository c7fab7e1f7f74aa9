package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
)

// checkKeys refuses what encoding/json would quietly accept in a body
// decoded into v: a field name given twice in one object (the last would
// win) and, at the top level, a field name that matches one of v's fields
// only when case is ignored ("Media" for "media"): field names are exact,
// as in the platform's API. A body that is not JSON passes: the typed
// decode reports it.
func checkKeys(body []byte, v any) error {
	fields := jsonFields(v)
	dec := json.NewDecoder(bytes.NewReader(body))
	// seen holds the field names of each open object (nil for an array);
	// expectKey says whether the innermost object's next token is a name.
	var seen []map[string]bool
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				seen = append(seen, map[string]bool{})
				expectKey = true
				continue
			case '[':
				seen = append(seen, nil)
				expectKey = false
				continue
			default:
				seen = seen[:len(seen)-1]
			}
		case string:
			if expectKey {
				if err := checkKey(t, seen, fields); err != nil {
					return err
				}
				seen[len(seen)-1][strings.ToLower(t)] = true
				expectKey = false
				continue
			}
		}
		expectKey = len(seen) > 0 && seen[len(seen)-1] != nil
	}
}

// checkKey checks one field name of the innermost object of seen.
func checkKey(name string, seen []map[string]bool, fields map[string]bool) error {
	// The decoder matches names without regard to case and keeps the last
	// of two, so names that differ only in case are the same field twice.
	if seen[len(seen)-1][strings.ToLower(name)] {
		return apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is given more than once (names are matched without regard to case).", name))
	}
	if len(seen) == 1 && fields != nil && !fields[name] {
		for f := range fields {
			if strings.EqualFold(f, name) {
				return apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is not a valid field for this request; did you mean `%s`?", name, f))
			}
		}
	}
	return nil
}

// jsonFields names the JSON fields of the struct v points to, or nil when
// v is not a pointer to a struct.
func jsonFields(v any) map[string]bool {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	t = t.Elem()
	out := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = true
	}
	return out
}
