// Package validation checks request input: struct rules through one shared
// go-playground validator (it caches per-struct metadata, so one instance
// serves the whole process) plus Aviary's own rules for ids, enums and
// comma-separated field lists. It reports problems as FieldErrors that the
// API renders in its error envelope; it knows nothing about HTTP.
package validation

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-playground/validator/v10"
)

// FieldError is one invalid input field.
type FieldError struct {
	Field   string   // the name the client used (JSON or query name)
	Values  []string // the offending value(s)
	Message string
	// Missing marks a required field that was absent or empty.
	Missing bool
}

// Validator validates structs tagged with `validate:"..."`. Besides the
// go-playground tags it knows "coreid" (a decimal id matching IDPattern that
// fits in an int64) and "enum=<name>", a value from a list registered with
// RegisterEnum, so every enum is spelled once, where its domain defines it.
// Field names are the `query` tag, else the `json` tag, else the Go name.
type Validator struct {
	v *validator.Validate

	mu    sync.RWMutex
	enums map[string][]string
}

// IDPattern is the pattern of core ids.
const IDPattern = `^[0-9]{1,19}$`

// New builds a Validator with Aviary's custom tags registered.
func New() *Validator {
	val := &Validator{v: validator.New(validator.WithRequiredStructEnabled()), enums: map[string][]string{}}
	val.v.RegisterTagNameFunc(fieldName)
	_ = val.v.RegisterValidation("coreid", func(fl validator.FieldLevel) bool {
		_, ok := ParseID(fl.Field().String())
		return ok
	})
	_ = val.v.RegisterValidation("enum", func(fl validator.FieldLevel) bool {
		return slices.Contains(val.Enum(fl.Param()), fl.Field().String())
	})
	return val
}

// RegisterEnum names a list of allowed values for the "enum=<name>" tag.
// Registering the same list again is a no-op; another list under the same
// name is an error (two domains would disagree on one enum).
func (v *Validator) RegisterEnum(name string, values []string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if old, ok := v.enums[name]; ok && !slices.Equal(old, values) {
		return fmt.Errorf("validation: enum %s registered as %v and %v", name, old, values)
	}
	v.enums[name] = slices.Clone(values)
	return nil
}

// MustRegisterEnum is RegisterEnum for wiring at start-up: it panics on a
// conflict.
func (v *Validator) MustRegisterEnum(name string, values []string) {
	if err := v.RegisterEnum(name, values); err != nil {
		panic(err)
	}
}

// Enum returns the values registered under name (nil if none).
func (v *Validator) Enum(name string) []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.enums[name]
}

func fieldName(f reflect.StructField) string {
	if q := f.Tag.Get("query"); q != "" {
		return q
	}
	name := strings.SplitN(f.Tag.Get("json"), ",", 2)[0]
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// Struct validates a decoded request body; messages call its members fields.
func (v *Validator) Struct(s any) []FieldError { return v.check(s, "field") }

// Query validates decoded query parameters; messages call them query
// parameters.
func (v *Validator) Query(s any) []FieldError { return v.check(s, "query parameter") }

func (v *Validator) check(s any, noun string) []FieldError {
	err := v.v.Struct(s)
	if err == nil {
		return nil
	}
	verrs, ok := err.(validator.ValidationErrors)
	if !ok {
		return []FieldError{{Field: "body", Message: err.Error()}}
	}
	out := make([]FieldError, 0, len(verrs))
	for _, fe := range verrs {
		out = append(out, FieldError{Field: fe.Field(), Values: valuesOf(fe.Value()), Message: v.message(fe, noun),
			Missing: fe.Tag() == "required"})
	}
	return out
}

// valuesOf is the offending value as the error's values: none for a value
// that was not given (a nil pointer, slice or map), rather than "<nil>".
func valuesOf(value any) []string {
	if value == nil {
		return []string{}
	}
	if rv := reflect.ValueOf(value); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.IsNil() {
		return []string{}
	}
	return []string{fmt.Sprint(value)}
}

func (v *Validator) message(fe validator.FieldError, noun string) string {
	switch fe.Tag() {
	case "required":
		return fmt.Sprintf("The `%s` %s is required.", fe.Field(), noun)
	case "oneof":
		return notOneOf(fe.Field(), noun, fmt.Sprint(fe.Value()), strings.Fields(fe.Param()))
	case "enum":
		return notOneOf(fe.Field(), noun, fmt.Sprint(fe.Value()), v.Enum(fe.Param()))
	case "max":
		return fmt.Sprintf("The `%s` %s must be at most %s characters long.", fe.Field(), noun, fe.Param())
	case "min":
		return fmt.Sprintf("The `%s` %s must be at least %s characters long.", fe.Field(), noun, fe.Param())
	case "coreid":
		return fmt.Sprintf("The `%s` %s value [%v] does not match %s", fe.Field(), noun, fe.Value(), IDPattern)
	default:
		return fmt.Sprintf("The `%s` %s value [%v] is invalid (%s).", fe.Field(), noun, fe.Value(), fe.Tag())
	}
}

func notOneOf(field, noun, value string, allowed []string) string {
	return fmt.Sprintf("The `%s` %s value [%s] is not one of [%s]", field, noun, value, strings.Join(allowed, ","))
}

// ParseID parses a core id: 1 to 19 decimal digits that fit in an int64 and
// are positive.
func ParseID(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 19 || strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false // not IDPattern: checked by hand, ids are parsed on every request
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// IDError describes a malformed id parameter in the platform's words.
func IDError(param, value string) FieldError {
	return idError(param, "query parameter", value)
}

// PathIDError is IDError for a path segment (/2/tweets/{id}).
func PathIDError(param, value string) FieldError {
	return idError(param, "path parameter", value)
}

func idError(param, noun, value string) FieldError {
	return patternError(param, noun, value, IDPattern)
}

// UsernamePattern is the platform's username rule.
const UsernamePattern = `^[A-Za-z0-9_]{1,15}$`

// ValidUsername reports whether s matches UsernamePattern.
func ValidUsername(s string) bool {
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// UsernameError describes a malformed username query parameter in the
// platform's words.
func UsernameError(param, value string) FieldError {
	return patternError(param, "query parameter", value, UsernamePattern)
}

// PathUsernameError is UsernameError for a path segment
// (/2/users/by/username/{username}).
func PathUsernameError(param, value string) FieldError {
	return patternError(param, "path parameter", value, UsernamePattern)
}

func patternError(param, noun, value, pattern string) FieldError {
	return FieldError{Field: param, Values: []string{value},
		Message: fmt.Sprintf("The `%s` %s value [%s] does not match %s", param, noun, value, pattern)}
}

// Enum checks that value is one of allowed.
func Enum(param, value string, allowed []string) *FieldError {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return &FieldError{Field: param, Values: []string{value},
		Message: notOneOf(param, "query parameter", value, allowed)}
}

// FieldList parses a comma-separated list whose items must come from
// allowed, be unique and be at least one. It returns the items in request
// order, or one FieldError per problem.
func FieldList(param, value string, allowed []string) ([]string, []FieldError) {
	if value == "" {
		return nil, []FieldError{{Field: param, Values: []string{value},
			Message: fmt.Sprintf("The `%s` query parameter can not be empty", param)}}
	}
	var items []string
	var errs []FieldError
	seen := map[string]bool{}
	for _, item := range strings.Split(value, ",") {
		if e := Enum(param, item, allowed); e != nil {
			errs = append(errs, *e)
			continue
		}
		if seen[item] {
			errs = append(errs, FieldError{Field: param, Values: []string{item},
				Message: fmt.Sprintf("The `%s` query parameter value [%s] is duplicated", param, item)})
			continue
		}
		seen[item] = true
		items = append(items, item)
	}
	return items, errs
}
