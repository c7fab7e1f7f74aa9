package usage

import (
	"reflect"
	"strings"
	"sync"
)

// Counts is what one response served: posts in data or includes.tweets,
// users in data or includes.users.
type Counts struct {
	Posts int
	Users int
}

// shape is where a response type keeps the members counted: the struct
// field indexes of data and includes (nil: none), and of tweets and users
// inside includes.
type shape struct {
	data, includes, tweets, users []int
}

// shapes caches the shape of each response type (a handful per server).
var shapes sync.Map // reflect.Type -> *shape

// countBody counts the objects of a response body as WriteJSON gets it: a
// struct (or pointer to one) with json members data and includes, or a
// map[string]any. data holding kind's objects counts them (a slice by its
// length, one object as 1); includes.tweets and includes.users count as
// posts and users read whatever the endpoint.
func countBody(body any, dataKind Resource) Counts {
	v := elem(reflect.ValueOf(body))
	var data, tweets, users reflect.Value
	switch v.Kind() {
	case reflect.Struct:
		s := shapeOf(v.Type())
		data = fieldAt(v, s.data)
		inc := elem(fieldAt(v, s.includes))
		if inc.IsValid() && inc.Kind() == reflect.Struct {
			is := shapeOf(inc.Type())
			tweets, users = fieldAt(inc, is.tweets), fieldAt(inc, is.users)
		} else if inc.IsValid() && inc.Kind() == reflect.Map {
			tweets, users = mapMember(inc, "tweets"), mapMember(inc, "users")
		}
	case reflect.Map:
		data = mapMember(v, "data")
		if inc := elem(mapMember(v, "includes")); inc.IsValid() && inc.Kind() == reflect.Map {
			tweets, users = mapMember(inc, "tweets"), mapMember(inc, "users")
		}
	default:
		return Counts{}
	}
	c := Counts{Posts: size(tweets), Users: size(users)}
	switch dataKind {
	case Posts:
		c.Posts += size(data)
	case Users:
		c.Users += size(data)
	}
	return c
}

// elem follows pointers and interfaces to the value (invalid for nil).
func elem(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// size is a slice's length, 1 for one present object, 0 for nothing.
func size(v reflect.Value) int {
	v = elem(v)
	switch {
	case !v.IsValid():
		return 0
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		return v.Len()
	case v.Kind() == reflect.Map && v.IsNil():
		return 0
	case v.Kind() == reflect.Struct || v.Kind() == reflect.Map:
		return 1
	}
	return 0
}

func fieldAt(v reflect.Value, index []int) reflect.Value {
	if index == nil {
		return reflect.Value{}
	}
	f, err := v.FieldByIndexErr(index)
	if err != nil { // through a nil embedded pointer
		return reflect.Value{}
	}
	return f
}

func mapMember(m reflect.Value, key string) reflect.Value {
	if m.Type().Key().Kind() != reflect.String {
		return reflect.Value{}
	}
	return m.MapIndex(reflect.ValueOf(key).Convert(m.Type().Key()))
}

func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := &shape{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		switch jsonName(f) {
		case "data":
			s.data = f.Index
		case "includes":
			s.includes = f.Index
		case "tweets":
			s.tweets = f.Index
		case "users":
			s.users = f.Index
		}
	}
	shapes.Store(t, s)
	return s
}

// jsonName is the member name encoding/json gives f.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return f.Name
}
