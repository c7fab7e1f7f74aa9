package news_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
)

// Hostile: /2/news ids and news.fields edge cases, and query words outside
// ASCII.
func TestHostileNews(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	now := time.Now().UTC()
	s := apitest.AddStory(t, b.DB, storage.NewsStory{LeadTerm: "émeute", Keywords: []string{"émeute"},
		Name: "Émeute à Paris", Summary: "ÉMEUTE.", Hook: "x"}, now.Add(-time.Hour))

	for _, tc := range []struct {
		name, path string
		status     int
		params     []string
	}{
		{"id beyond int64", "/2/news/99999999999999999999", 400, []string{"id"}},
		{"negative id", "/2/news/-1", 400, []string{"id"}},
		{"repeated field", "/2/news/search?query=a&news.fields=id,id", 400, []string{"news.fields"}},
		{"repeated parameter", "/2/news/search?query=a&max_results=5&max_results=6", 400, []string{"max_results"}},
		{"max_results with sign", "/2/news/search?query=a&max_results=%2B5", 400, []string{"max_results"}},
	} {
		r := b.Call(t, "GET", tc.path, b.Bearer, "", nil)
		if r.Status != tc.status || !slices.Equal(apitest.ParamNames(r.Body), tc.params) {
			t.Errorf("%s: %d %s, want %d naming %v", tc.name, r.Status, r.Raw, tc.status, tc.params)
		}
	}
	// A lookup with leading zeros finds the story or answers with the id sent.
	r := b.Call(t, "GET", fmt.Sprintf("/2/news/00%d", s.ID), b.Bearer, "", nil)
	if r.Status >= 500 {
		t.Errorf("leading zeros: %d %s", r.Status, r.Raw)
	}
	// The name starts with a capital É: a query for the word (lower-cased
	// by KeywordTerms) must find it whatever the database's ctype.
	for _, q := range []string{"Émeute", "émeute", "e\u0301meute"} {
		r := b.Get(t, "/2/news/search?query="+url.QueryEscape(q), b.Bearer)
		if got := storyIDs(r.Body); !slices.Equal(got, []string{fmt.Sprint(s.ID)}) {
			t.Errorf("query %q = %s, want story %d", q, r.Raw, s.ID)
		}
	}
}
