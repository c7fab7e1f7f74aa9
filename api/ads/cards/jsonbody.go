package cards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
)

// readJSONObject reads the JSON object body of a component card request:
// the Content-Type must name application/json (the stack refused any
// other one with 415), no field name may repeat, and the body must be
// one JSON object.
func readJSONObject(r *http.Request) (map[string]json.RawMessage, error) {
	if r.Header.Get("Content-Type") == "" {
		return nil, apierr.UnsupportedMediaType(httpx.ContentJSON)
	}
	raw, err := adsx.ReadJSONBody(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, adsx.Invalid("body", "The request body must be a JSON object such as {\"name\": ..., \"components\": [...]}")
	}
	if dec.More() {
		return nil, adsx.Invalid("body", "The request body must hold a single JSON object")
	}
	return obj, nil
}

// jsonReader checks the values of a JSON body, recording each broken rule
// on the request's Params under the value's path (components[0].media_key).
type jsonReader struct{ p *adsx.Params }

// child names key under the path name.
func child(name, key string) string {
	if name == "" {
		return key
	}
	return name + "." + key
}

// index names item i under the path name.
func index(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) }

// only fails every key of obj not in allowed.
func (j jsonReader) only(name string, obj map[string]json.RawMessage, allowed ...string) {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(allowed, k) {
			j.p.Fail(child(name, k), fmt.Sprintf("%s is not a parameter of this object (allowed: %s)", printable(child(name, k)), strings.Join(allowed, ", ")))
		}
	}
}

// object decodes raw as a JSON object.
func (j jsonReader) object(name string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		j.p.Fail(name, fmt.Sprintf("%s must be a JSON object", name))
		return nil, false
	}
	return obj, true
}

// array decodes raw as a JSON array.
func (j jsonReader) array(name string, raw json.RawMessage) ([]json.RawMessage, bool) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		j.p.Fail(name, fmt.Sprintf("%s must be a JSON array", name))
		return nil, false
	}
	return items, true
}

// str decodes raw as a non-empty string of at most maxLen characters
// without NUL.
func (j jsonReader) str(name string, raw json.RawMessage, maxLen int) (string, bool) {
	var s string
	switch err := json.Unmarshal(raw, &s); {
	case err != nil:
		j.p.Fail(name, fmt.Sprintf("%s must be a string", name))
	case s == "":
		j.p.Fail(name, fmt.Sprintf("Expected a value for %s, got an empty string", name))
	case strings.ContainsRune(s, 0):
		j.p.Fail(name, fmt.Sprintf("%s must not contain NUL (U+0000) characters", name))
	case utf8.RuneCountInString(s) > maxLen:
		j.p.Fail(name, fmt.Sprintf("%s must be at most %d characters", name, maxLen))
	default:
		return s, true
	}
	return "", false
}

// required reads the string key of obj, recording MISSING_PARAMETER when
// it is absent.
func (j jsonReader) required(name string, obj map[string]json.RawMessage, key string, maxLen int) (string, bool) {
	raw, ok := obj[key]
	if !ok {
		j.p.FailMissing(child(name, key), fmt.Sprintf("%s is missing", child(name, key)))
		return "", false
	}
	return j.str(child(name, key), raw, maxLen)
}

// optional reads the string key of obj when it is there.
func (j jsonReader) optional(name string, obj map[string]json.RawMessage, key string, maxLen int) (string, bool) {
	raw, ok := obj[key]
	if !ok {
		return "", false
	}
	return j.str(child(name, key), raw, maxLen)
}
