package httpx

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
)

// decodeValues sets the fields of the struct v points to from values: each
// field named by its `json` tag takes the single
// value of that name, which must be valid UTF-8 (a %-escaped byte such as
// %FF would otherwise be stored as is). Supported kinds: string, bool, the
// integer kinds, []string (comma-separated) and pointers to them. noun names
// the values in errors ("query parameter" or "field").
func decodeValues(values url.Values, v any, noun string) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("httpx: decode into %T, want a pointer to a struct", v))
	}
	st := rv.Elem()
	var errs []apierr.ParamError
	for i := range st.NumField() {
		name := valueName(st.Type().Field(i))
		if name == "" || !values.Has(name) {
			continue
		}
		raw := values.Get(name)
		if !utf8.ValidString(raw) {
			errs = append(errs, apierr.Param(name, fmt.Sprintf("The `%s` %s value must be valid UTF-8", name, noun), strings.ToValidUTF8(raw, "\uFFFD")))
			continue
		}
		if err := setValue(st.Field(i), raw); err != nil {
			errs = append(errs, apierr.Param(name, fmt.Sprintf("The `%s` %s value [%s] %v", name, noun, raw, err), raw))
		}
	}
	if len(errs) > 0 {
		return apierr.InvalidRequest(errs...)
	}
	return nil
}

func valueName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func setValue(f reflect.Value, raw string) error {
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		if err := setValue(p.Elem(), raw); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("is not a boolean")
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("is not an integer")
		}
		f.SetInt(n)
	case reflect.Slice:
		if f.Type().Elem().Kind() != reflect.String {
			panic(fmt.Sprintf("httpx: unsupported slice type %s", f.Type()))
		}
		f.Set(reflect.ValueOf(strings.Split(raw, ",")).Convert(f.Type()))
	default:
		panic(fmt.Sprintf("httpx: unsupported field type %s", f.Type()))
	}
	return nil
}
