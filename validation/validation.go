// Package validation checks request input: struct rules through one shared
// go-playground validator (it caches per-struct metadata, so one instance
// serves the whole process) plus Aviary's own rules for ids, enums and
// comma-separated field lists. It reports problems as FieldErrors that the
// API renders in its error envelope; it knows nothing about HTTP.
package validation

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
)

// FieldError is one invalid input field.
type FieldError struct {
	Field   string   // the name the client used (JSON or query name)
	Values  []string // the offending value(s)
	Message string
}

// Validator validates structs tagged with `validate:"..."`.
type Validator struct {
	v *validator.Validate
}

// IDPattern is the pattern of core ids.
const IDPattern = `^[0-9]{1,19}$`

var idRE = regexp.MustCompile(IDPattern)

// New builds a Validator with Aviary's custom tags registered:
// "coreid" (a decimal id matching IDPattern that fits in an int64).
func New() *Validator {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(jsonName)
	_ = v.RegisterValidation("coreid", func(fl validator.FieldLevel) bool {
		_, ok := ParseID(fl.Field().String())
		return ok
	})
	return &Validator{v: v}
}

func jsonName(f reflect.StructField) string {
	name := strings.SplitN(f.Tag.Get("json"), ",", 2)[0]
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// Struct validates s and returns one FieldError per failed rule.
func (v *Validator) Struct(s any) []FieldError {
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
		out = append(out, FieldError{Field: fe.Field(), Values: []string{fmt.Sprint(fe.Value())}, Message: message(fe)})
	}
	return out
}

func message(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return fmt.Sprintf("The `%s` field is required.", fe.Field())
	case "oneof":
		return fmt.Sprintf("The `%s` field value [%v] is not one of [%s]", fe.Field(), fe.Value(), strings.ReplaceAll(fe.Param(), " ", ","))
	case "max":
		return fmt.Sprintf("The `%s` field must be at most %s characters long.", fe.Field(), fe.Param())
	case "min":
		return fmt.Sprintf("The `%s` field must be at least %s characters long.", fe.Field(), fe.Param())
	case "coreid":
		return fmt.Sprintf("The `%s` field value [%v] does not match %s", fe.Field(), fe.Value(), IDPattern)
	default:
		return fmt.Sprintf("The `%s` field value [%v] is invalid (%s).", fe.Field(), fe.Value(), fe.Tag())
	}
}

// ParseID parses a core id: 1 to 19 decimal digits that fit in an int64 and
// are positive.
func ParseID(s string) (int64, bool) {
	if !idRE.MatchString(s) {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// IDError describes a malformed id parameter in the platform's words.
func IDError(param, value string) FieldError {
	return FieldError{Field: param, Values: []string{value},
		Message: fmt.Sprintf("The `%s` query parameter value [%s] does not match %s", param, value, IDPattern)}
}

// Enum checks that value is one of allowed.
func Enum(param, value string, allowed []string) *FieldError {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return &FieldError{Field: param, Values: []string{value},
		Message: fmt.Sprintf("The `%s` query parameter value [%s] is not one of [%s]", param, value, strings.Join(allowed, ","))}
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
