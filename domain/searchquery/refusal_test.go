package searchquery_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/domain/searchquery"
)

// TestParseSearch: the refusals of search's `query` parameter, worded as
// the API's 400 and the console show them.
func TestParseSearch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw string
		max       int
		detail    string // "" for a query that parses
	}{
		{"fine", "hello OR #aviary -is:retweet", 512, ""},
		{"at the limit", strings.Repeat("é", 12), 12, ""},
		{"too long", strings.Repeat("é", 13), 12, "The `query` query parameter is 13 characters long; the recent search takes at most 12."},
		{"unclosed", "(hello", 512, "There were errors processing your request: "},
		{"stream only", "hello sample:10", 512, `There were errors processing your request: operator "sample:" is not supported by Aviary's search (only by filtered stream rules)`},
	} {
		q, err := searchquery.ParseSearch(tc.raw, "recent", tc.max)
		var refused *searchquery.Refusal
		switch {
		case tc.detail == "" && (err != nil || q == nil):
			t.Errorf("%s: %v", tc.name, err)
		case tc.detail != "" && !errors.As(err, &refused):
			t.Errorf("%s: %v, want a refusal", tc.name, err)
		case tc.detail != "" && !strings.HasPrefix(refused.Detail, tc.detail):
			t.Errorf("%s: %q, want %q", tc.name, refused.Detail, tc.detail)
		}
	}
	_, err := searchquery.ParseSearch("(hello", "recent", 512)
	if !strings.Contains(err.Error(), "position 0") {
		t.Errorf("a parse error names its position: %q", err)
	}
}
