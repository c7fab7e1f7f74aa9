package selfdoc

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// ownComponents are Aviary's own schemas, for the operations the platform's
// description does not have: the error bodies of each surface and the ads
// API's envelope (docs/ads-conventions.md).
var ownComponents = map[string]map[string]any{
	"AviaryProblem": {
		"type":     "object",
		"required": []string{"type", "title"},
		"properties": map[string]any{
			"type":   map[string]any{"type": "string"},
			"title":  map[string]any{"type": "string"},
			"detail": map[string]any{"type": "string"},
			"status": map[string]any{"type": "integer"},
		},
		"description": "An RFC 7807 problem, as the core API answers errors (docs/errors.md).",
	},
	"AviaryAdsEnvelope": {
		"type":     "object",
		"required": []string{"request", "data"},
		"properties": map[string]any{
			"request":     map[string]any{"type": "object", "properties": map[string]any{"params": map[string]any{"type": "object"}}},
			"data":        map[string]any{},
			"next_cursor": map[string]any{"type": "string", "nullable": true},
			"total_count": map[string]any{"type": "integer"},
		},
		"description": "The advertising API's answer: the request's parameters echoed, the data (one object or a list) and, for lists, the cursor.",
	},
	"AviaryAdsErrors": {
		"type":     "object",
		"required": []string{"errors"},
		"properties": map[string]any{
			"request": map[string]any{"type": "object"},
			"errors": map[string]any{"type": "array", "items": map[string]any{
				"type":     "object",
				"required": []string{"code", "message"},
				"properties": map[string]any{
					"code":      map[string]any{"type": "string"},
					"message":   map[string]any{"type": "string"},
					"parameter": map[string]any{"type": "string"},
				},
			}},
		},
		"description": "The advertising API's error answer (docs/ads-errors.md).",
	},
}

// ownComponent adds one of ownComponents and refers to it.
func (b *builder) ownComponent(name string) map[string]any {
	if b.components["schemas"][name] == nil {
		b.components["schemas"][name] = deepCopy(toAny(ownComponents[name]))
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// toAny turns a Go literal into its decoded-JSON form ([]string into []any).
func toAny(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// schemaOf derives a schema from a response value's type by reflection,
// following encoding/json's rules: exported fields by their json names,
// omitempty fields optional, the others required.
func (b *builder) schemaOf(v any) map[string]any {
	return typeSchema(reflect.TypeOf(v), map[reflect.Type]bool{})
}

func typeSchema(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := typeSchema(t.Elem(), seen)
		s["nullable"] = true
		return s
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem(), seen)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem(), seen)}
	case reflect.Struct:
		if seen[t] {
			return map[string]any{"type": "object"} // a recursive type: described once
		}
		seen[t] = true
		defer delete(seen, t)
		return structSchema(t, seen)
	}
	return map[string]any{}
}

func structSchema(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	props := map[string]any{}
	var required []any
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = typeSchema(f.Type, seen)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}
