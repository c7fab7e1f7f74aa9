package validation

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseID checks core (snowflake) ids as every path, query and body
// parameter reads them: ParseID takes exactly 1 to 19 ASCII digits whose
// value is above 0 and fits an int64, and the id prints back to the
// digits sent without their leading zeros. FieldList returns distinct
// allowed names in request order, or an error for each bad one.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "1334987486343299072", "9223372036854775807", "9223372036854775808", "0", "00", "01",
		"0000000000000000001", "00000000000000000001", "-1", "+1", "1e3", " 1", "1 ", "١", "", "99999999999999999999", "0x10"} {
		f.Add(s, "id,text,id,,author_id")
	}
	allowed := []string{"id", "text", "author_id", "created_at"}
	f.Fuzz(func(t *testing.T, s, list string) {
		id, ok := ParseID(s)
		digits := s != "" && len(s) <= 19 && strings.Trim(s, "0123456789") == ""
		n, err := strconv.ParseInt(s, 10, 64)
		want := digits && err == nil && n > 0
		if ok != want || (ok && id != n) {
			t.Fatalf("ParseID(%q) = %d, %v; want %d, %v", s, id, ok, n, want)
		}
		if ok && strconv.FormatInt(id, 10) != strings.TrimLeft(s, "0") {
			t.Fatalf("ParseID(%q) = %d prints as another id", s, id)
		}
		items, errs := FieldList("tweet.fields", list, allowed)
		if list == "" && len(errs) != 1 {
			t.Fatalf("FieldList(%q) = %q, %v", list, items, errs)
		}
		seen := map[string]bool{}
		for _, it := range items {
			if seen[it] || Enum("tweet.fields", it, allowed) != nil {
				t.Fatalf("FieldList(%q) = %q: %q", list, items, it)
			}
			seen[it] = true
		}
		bad := 0
		for _, it := range strings.Split(list, ",") {
			if Enum("tweet.fields", it, allowed) != nil {
				bad++
			}
		}
		if list != "" && len(items)+len(errs) != len(strings.Split(list, ",")) || len(errs) < bad {
			t.Fatalf("FieldList(%q) = %q with %d errors", list, items, len(errs))
		}
	})
}
