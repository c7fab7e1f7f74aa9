// Package validation checks request input: struct rules through one shared
// go-playground validator (it caches per-struct metadata, so one instance
// serves the whole process) plus Aviary's own rules for ids, enums and
// comma-separated field lists. It reports problems as FieldErrors that the
// API renders in its error envelope; it knows nothing about HTTP.
package validation

import (
	"context"
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
}

// Validator validates structs tagged with `validate:"..."`. Besides the
// go-playground tags it knows "enum=<name>", a value from a list
// registered with RegisterEnum, so every enum is spelled once, where its
// domain defines it, and named Rules: the shared ones of rules.go (coreid,
// coreids, length) and those a domain registers with RegisterRule.
// Field names are the `json` tag, else the Go name.
type Validator struct {
	v *validator.Validate

	mu    sync.RWMutex
	enums map[string][]string
	rules map[string]Rule
}

// Field is what a Rule checks: its value (a nil pointer when it was not
// given, else the value pointed to), the tag's parameter ("4" in "ids=4")
// and the whole request, for rules between fields.
type Field struct {
	Value   reflect.Value
	Param   string
	Request reflect.Value
}

// Given reports whether the field was sent: not a nil pointer, slice or
// map.
func (f Field) Given() bool {
	switch f.Value.Kind() {
	case reflect.Invalid:
		return false
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return !f.Value.IsNil()
	}
	return true
}

// A Rule is a named check of one field, used as `validate:"<name>"` or
// `validate:"<name>=<param>"`: it returns nil when the value is fine, else
// the Problem, in the platform's words. Rules run for absent fields too, so
// a rule decides what absence means. The rules every endpoint shares are
// registered by New (rules.go); a domain registers its own with
// RegisterRule, next to the enums it registers.
type Rule func(f Field) *Problem

// Problem is what a Rule found wrong with a field.
type Problem struct {
	// Message words the problem for the field as the client named it
	// (dotted for nested fields: "media.media_ids").
	Message func(field string) string
	// Values are what the error echoes; nil echoes the value itself.
	Values []string
}

// Problemf is a Problem whose message is format applied to the field's
// name and then args: refer to the name as %[1]s and to args from %[2]v
// (a format without explicit indexes gets args alone).
func Problemf(values []string, format string, args ...any) *Problem {
	return &Problem{Values: values, Message: func(field string) string {
		a := make([]any, 0, len(args)+1)
		if strings.Contains(format, "%[") {
			a = append(a, field)
		}
		return fmt.Sprintf(format, append(a, args...)...)
	}}
}

// ruleFailures collects, in validation order, what the rules that failed
// during one Struct or Query call found.
type ruleFailures struct{ problems []Problem }

type ruleFailuresKey struct{}

// IDPattern is the pattern of core ids.
const IDPattern = `^[0-9]{1,19}$`

// New builds a Validator with Aviary's custom tags registered.
func New() *Validator {
	val := &Validator{v: validator.New(validator.WithRequiredStructEnabled()), enums: map[string][]string{}, rules: map[string]Rule{}}
	val.v.RegisterTagNameFunc(fieldName)
	_ = val.v.RegisterValidation("enum", func(fl validator.FieldLevel) bool {
		return slices.Contains(val.Enum(fl.Param()), fl.Field().String())
	})
	for name, rule := range sharedRules {
		val.MustRegisterRule(name, rule)
	}
	return val
}

// RegisterRule names rule for the `validate:"<name>"` tag. Registering a
// name again keeps the first rule (a module built twice on one Validator
// registers its rules twice); a go-playground tag can not be replaced.
func (v *Validator) RegisterRule(name string, rule Rule) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.rules[name]; ok {
		return nil
	}
	v.rules[name] = rule
	return v.v.RegisterValidationCtx(name, func(ctx context.Context, fl validator.FieldLevel) bool {
		p := rule(Field{Value: fl.Field(), Param: fl.Param(), Request: reflect.Indirect(fl.Top())})
		if p == nil {
			return true
		}
		if failures, ok := ctx.Value(ruleFailuresKey{}).(*ruleFailures); ok {
			failures.problems = append(failures.problems, *p)
		}
		return false
	}, true)
}

// MustRegisterRule is RegisterRule for wiring at start-up: it panics when
// the validator refuses the name.
func (v *Validator) MustRegisterRule(name string, rule Rule) {
	if err := v.RegisterRule(name, rule); err != nil {
		panic(err)
	}
}

func (v *Validator) isRule(name string) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	_, ok := v.rules[name]
	return ok
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
	name := strings.SplitN(f.Tag.Get("json"), ",", 2)[0]
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// Struct validates a decoded request body; messages call its members
// fields. (Queries are read by httpx.Query's getters.)
func (v *Validator) Struct(s any) []FieldError { return v.check(s, "field") }

func (v *Validator) check(s any, noun string) []FieldError {
	failures := &ruleFailures{}
	err := v.v.StructCtx(context.WithValue(context.Background(), ruleFailuresKey{}, failures), s)
	if err == nil {
		return nil
	}
	verrs, ok := err.(validator.ValidationErrors)
	if !ok {
		return []FieldError{{Field: "body", Message: err.Error()}}
	}
	out := make([]FieldError, 0, len(verrs))
	for _, fe := range verrs {
		name := clientName(fe.Namespace())
		if v.isRule(fe.Tag()) && len(failures.problems) > 0 { // rules fail in the order the validator reports them
			p := failures.problems[0]
			failures.problems = failures.problems[1:]
			e := FieldError{Field: name, Values: p.Values, Message: p.Message(name)}
			if e.Values == nil {
				e.Values = valuesOf(fe.Value())
			}
			out = append(out, e)
			continue
		}
		out = append(out, FieldError{Field: name, Values: valuesOf(fe.Value()), Message: v.message(fe, name, noun)})
	}
	return out
}

// clientName is the name the client gave a field: its namespace without
// the request struct's name and without a list index ("createRequest.
// media.media_ids[1]" is "media.media_ids").
func clientName(namespace string) string {
	_, name, ok := strings.Cut(namespace, ".")
	if !ok {
		name = namespace
	}
	if i := strings.IndexByte(name, '['); i >= 0 && strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	return name
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

func (v *Validator) message(fe validator.FieldError, field, noun string) string {
	switch fe.Tag() {
	case "required":
		return fmt.Sprintf("The `%s` %s is required.", field, noun)
	case "oneof":
		return notOneOf(field, noun, fmt.Sprint(fe.Value()), strings.Fields(fe.Param()))
	case "enum":
		return notOneOf(field, noun, fmt.Sprint(fe.Value()), v.Enum(fe.Param()))
	case "max":
		return fmt.Sprintf("The `%s` %s must be at most %s characters long.", field, noun, fe.Param())
	case "min":
		return fmt.Sprintf("The `%s` %s must be at least %s characters long.", field, noun, fe.Param())
	default:
		return fmt.Sprintf("The `%s` %s value [%v] is invalid (%s).", field, noun, fe.Value(), fe.Tag())
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
