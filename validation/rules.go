package validation

import (
	"reflect"
	"strconv"
	"strings"
)

// sharedRules are the named rules every Validator knows, in the
// platform's words for a request body field.
var sharedRules = map[string]Rule{
	"coreid":  coreID,
	"coreids": coreIDs,
	"length":  length,
}

// coreID: a core id (IDPattern, fits in an int64, positive). An absent
// pointer passes: presence is the `required` tag's business.
func coreID(f Field) *Problem {
	if !f.Given() {
		return nil
	}
	v := f.Value.String()
	if _, ok := ParseID(v); ok {
		return nil
	}
	return Problemf([]string{v}, "The `%[1]s` field value [%[2]s] does not match %[3]s.", v, IDPattern)
}

// coreIDs: every item of a list of strings is a core id; the first that
// is not is the problem.
func coreIDs(f Field) *Problem {
	if !f.Given() {
		return nil
	}
	for _, v := range f.Strings() {
		if _, ok := ParseID(v); !ok {
			return Problemf([]string{v}, "The `%[1]s` value [%[2]s] does not match %[3]s.", v, IDPattern)
		}
	}
	return nil
}

// length=<min>-<max>: a given string of min to max bytes.
func length(f Field) *Problem {
	if !f.Given() {
		return nil
	}
	lo, hi := lengthBounds(f.Param)
	v := f.Value.String()
	if len(v) >= lo && len(v) <= hi {
		return nil
	}
	return Problemf([]string{v}, "The `%[1]s` field must be %[2]d to %[3]d characters.", lo, hi)
}

// lengthBounds parses "<min>-<max>"; a malformed tag is a programming
// error.
func lengthBounds(param string) (int, int) {
	a, b, ok := strings.Cut(param, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo > hi {
		panic("validation: length wants <min>-<max>, got " + strconv.Quote(param))
	}
	return lo, hi
}

// Strings is the items of a []string field (nil when absent), for rules a
// domain registers.
func (f Field) Strings() []string {
	if !f.Given() || f.Value.Kind() != reflect.Slice {
		return nil
	}
	out := make([]string, f.Value.Len())
	for i := range out {
		out[i] = f.Value.Index(i).String()
	}
	return out
}

// Unseen is the problem of a field naming a resource (noun: "post") that
// does not exist or that the caller can not see.
func Unseen(noun, value string) *Problem {
	return Problemf([]string{value}, "The `%[1]s` field names the %[2]s [%[3]s], which does not exist or which you can not see.", noun, value)
}
