package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
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
	return walkKeys(body, func(k keyAt) error {
		return checkKey(k, fields)
	})
}

// RepeatedKey finds the first field name given twice in one object of a
// JSON body, names compared without regard to case as encoding/json
// matches them (it would keep the last of the two). path places the
// second one from the top of the body: `[0].params.expires_at`,
// `products[2].title`, `name`. ok is false when no name repeats, or when
// the body is not JSON (its decoder reports that).
func RepeatedKey(body []byte) (path string, ok bool) {
	err := walkKeys(body, func(k keyAt) error {
		if k.repeated {
			path, ok = k.path(), true
			return errRepeated
		}
		return nil
	})
	return path, ok && err != nil
}

// errRepeated stops RepeatedKey's walk.
var errRepeated = errors.New("repeated key")

// keyAt is one field name of a body, as walkKeys meets it.
type keyAt struct {
	name string
	// repeated says the object already had this name (case ignored).
	repeated bool
	frames   []keyFrame // the open objects and arrays, outermost first
}

// top reports whether the name is a field of the top-level object.
func (k keyAt) top() bool { return len(k.frames) == 1 }

// path places the name from the top of the body.
func (k keyAt) path() string {
	var b strings.Builder
	for i, f := range k.frames {
		switch {
		case f.seen == nil:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		case i == len(k.frames)-1:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k.name)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
	}
	return b.String()
}

// keyFrame is one open object (seen: its names so far, lower-cased; key:
// the name whose value is being read) or array (seen nil; index: of the
// element being read).
type keyFrame struct {
	seen  map[string]bool
	key   string
	index int
}

// walkKeys calls visit for every field name of body, in order, and stops
// at its first error. A body that is not JSON ends the walk quietly.
func walkKeys(body []byte, visit func(keyAt) error) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	var frames []keyFrame
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			frames = frames[:len(frames)-1]
			expectKey = len(frames) > 0 && frames[len(frames)-1].seen != nil
			continue
		}
		if name, ok := tok.(string); ok && expectKey {
			f := &frames[len(frames)-1]
			lower := strings.ToLower(name)
			if err := visit(keyAt{name: name, repeated: f.seen[lower], frames: frames}); err != nil {
				return err
			}
			f.seen[lower] = true
			f.key = name
			expectKey = false
			continue
		}
		if n := len(frames); n > 0 && frames[n-1].seen == nil {
			frames[n-1].index++ // a value of the array begins
		}
		switch tok {
		case json.Delim('{'):
			frames = append(frames, keyFrame{seen: map[string]bool{}})
			expectKey = true
		case json.Delim('['):
			frames = append(frames, keyFrame{index: -1})
			expectKey = false
		default: // a value ended: an enclosing object's next token is a name
			expectKey = len(frames) > 0 && frames[len(frames)-1].seen != nil
		}
	}
}

// checkKey checks one field name of a body decoded into a struct with
// fields (nil: not a struct).
func checkKey(k keyAt, fields map[string]bool) error {
	name := k.name
	// The decoder matches names without regard to case and keeps the last
	// of two, so names that differ only in case are the same field twice.
	if k.repeated {
		return apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is given more than once (names are matched without regard to case).", name))
	}
	if k.top() && fields != nil && !fields[name] {
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
