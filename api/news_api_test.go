package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/news"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// addStory stores a news story as the news:refresh worker would, updated
// at at.
func addStory(t *testing.T, db *postgres.DB, s storage.NewsStory, at time.Time) storage.NewsStory {
	t.Helper()
	out, _, err := db.UpsertNewsStory(t.Context(), s, at, nil)
	if err != nil {
		t.Fatalf("store story: %v", err)
	}
	return out
}

func postIDOf(t *testing.T, s string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscan(s, &id); err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return id
}

// newsFixtures stores three stories: a quake story whose cluster holds
// three posts (one of them deleted since, one by a protected author),
// an election story and a quake story of ten days ago.
type newsFixtures struct {
	quake, election, old   storage.NewsStory
	shown, deleted, hidden string
}

func addNewsFixtures(t *testing.T, b *bundle) newsFixtures {
	t.Helper()
	var f newsFixtures
	f.shown = b.create(t, "oauth:author", map[string]any{"text": "Strong #Quake shakes the coast"})
	f.deleted = b.create(t, "oauth:author", map[string]any{"text": "#quake deleted later"})
	if r := b.call(t, "DELETE", "/2/tweets/"+f.deleted, "oauth:author", "", nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	secret := b.addUser(t, "secret", storage.AccessReadWrite)
	f.hidden = b.create(t, "oauth:secret", map[string]any{"text": "#quake from a protected account"})
	if _, err := b.db.SetUserState(t.Context(), secret.ID, "protected", time.Now()); err != nil {
		t.Fatalf("protect: %v", err)
	}
	now := time.Now().UTC()
	f.old = addStory(t, b.db, storage.NewsStory{LeadTerm: "quake", Keywords: []string{"quake"}, Name: "An old quake",
		Summary: "Old posts.", Hook: "Old."}, now.Add(-10*24*time.Hour))
	f.quake = addStory(t, b.db, storage.NewsStory{LeadTerm: "#quake", Keywords: []string{"#quake", "quake", "coast"},
		Name: "Strong #Quake shakes the coast", Summary: "3 posts in the last 24 hours mention #Quake.", Hook: "#Quake is spiking.",
		Contexts: storage.NewsContexts{Topics: []string{"Quake"}, Finance: storage.NewsFinance{Tickers: []string{"NBIS"}}},
		PostIDs:  []int64{postIDOf(t, f.shown), postIDOf(t, f.deleted), postIDOf(t, f.hidden)}, Posts: 3}, now.Add(-2*time.Hour))
	f.election = addStory(t, b.db, storage.NewsStory{LeadTerm: "election", Keywords: []string{"election"},
		Name: "Election night on the coast", Summary: "Results.", Hook: "Votes."}, now.Add(-time.Hour))
	return f
}

func storyIDs(body map[string]any) []string {
	var out []string
	data, _ := body["data"].([]any)
	for _, d := range data {
		out = append(out, obj(d, "id").(string))
	}
	return out
}

func fieldNames(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestNewsSearch(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	f := addNewsFixtures(t, b)
	id := func(s storage.NewsStory) string { return fmt.Sprint(s.ID) }

	// Default fields; the words match names, summaries and keywords.
	r := b.get(t, "/2/news/search?query=quake", b.bearer)
	if got := storyIDs(r.body); !slices.Equal(got, []string{id(f.quake)}) || obj(r.body, "meta", "result_count") != float64(1) {
		t.Fatalf("search quake = %s", r.raw)
	}
	s := obj(r.body, "data", "0")
	if got, want := fieldNames(s), []string{"category", "disclaimer", "hook", "id", "last_updated_at_ms", "name", "summary"}; !slices.Equal(got, want) {
		t.Errorf("default fields = %v, want %v", got, want)
	}
	if obj(s, "category") != "News" || obj(s, "name") != f.quake.Name || obj(s, "disclaimer") != news.Disclaimer ||
		obj(s, "last_updated_at_ms") != f.quake.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("story = %v", s)
	}

	// Asked-for fields; cluster posts the caller may not see are left out.
	r = b.get(t, "/2/news/search?query=%23Quake&news.fields=contexts,cluster_posts_results,keywords,updated_at,id", b.bearer)
	s = obj(r.body, "data", "0")
	if got := fieldNames(s); !slices.Contains(got, "contexts") || !slices.Contains(got, "updated_at") || !slices.Contains(got, "name") {
		t.Errorf("fields = %v", got)
	}
	if obj(s, "updated_at") != obj(s, "last_updated_at_ms") {
		t.Errorf("updated_at %v, last_updated_at_ms %v", obj(s, "updated_at"), obj(s, "last_updated_at_ms"))
	}
	if got := obj(s, "cluster_posts_results"); fmt.Sprint(got) != fmt.Sprintf("[map[post_id:%s]]", f.shown) {
		t.Errorf("cluster posts = %v, want only %s", got, f.shown)
	}
	if fmt.Sprint(obj(s, "keywords")) != "map[#quake:1 coast:3 quake:2]" || fmt.Sprint(obj(s, "contexts", "topics")) != "[Quake]" ||
		fmt.Sprint(obj(s, "contexts", "finance", "tickers")) != "[NBIS]" || fmt.Sprint(obj(s, "contexts", "entities", "people")) != "[]" ||
		fmt.Sprint(obj(s, "contexts", "sports", "teams")) != "[]" {
		t.Errorf("keywords %v, contexts %v", obj(s, "keywords"), obj(s, "contexts"))
	}
	// The protected author sees their own post.
	r = b.get(t, "/2/news/search?query=quake&news.fields=cluster_posts_results", "oauth:secret")
	if got := fmt.Sprint(obj(r.body, "data", "0", "cluster_posts_results")); got != fmt.Sprintf("[map[post_id:%s] map[post_id:%s]]", f.shown, f.hidden) {
		t.Errorf("cluster posts for the protected author = %s", got)
	}

	for q, want := range map[string][]string{
		"query=coast":                                {id(f.election), id(f.quake)}, // newest first
		"query=coast&max_results=1":                  {id(f.election)},              // limited
		"query=quake&max_age_hours=720":              {id(f.quake), id(f.old)},      // older stories
		"query=quake&max_age_hours=1":                nil,                           // too old
		"query=" + url.QueryEscape("the coast"):      {id(f.election), id(f.quake)}, // stopwords left out
		"query=" + url.QueryEscape("coast election"): {id(f.election)},              // every word
		"query=" + url.QueryEscape("!!!"):            nil,                           // no word
		"query=nothing":                              nil,
	} {
		r := b.get(t, "/2/news/search?"+q, b.bearer)
		if got := storyIDs(r.body); !slices.Equal(got, want) || obj(r.body, "meta", "result_count") != float64(len(want)) {
			t.Errorf("%s = %s, want %v", q, r.raw, want)
		}
		if len(want) == 0 && r.body["data"] != nil {
			t.Errorf("%s: data in an empty answer: %s", q, r.raw)
		}
	}
}

func TestNewsLookup(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	f := addNewsFixtures(t, b)
	r := b.get(t, fmt.Sprintf("/2/news/%d?news.fields=contexts,cluster_posts_results", f.quake.ID), "oauth:reader")
	if obj(r.body, "data", "id") != fmt.Sprint(f.quake.ID) || obj(r.body, "data", "hook") != f.quake.Hook ||
		fmt.Sprint(obj(r.body, "data", "cluster_posts_results")) != fmt.Sprintf("[map[post_id:%s]]", f.shown) ||
		obj(r.body, "data", "contexts", "topics", "0") != "Quake" || r.body["errors"] != nil {
		t.Errorf("lookup = %s", r.raw)
	}
	// Unknown: a 200 with only the error, as the other lookups answer.
	r = b.get(t, "/2/news/42", b.bearer)
	if r.body["data"] != nil || obj(r.body, "errors", "0", "type") != problems+"resource-not-found" ||
		obj(r.body, "errors", "0", "resource_type") != "news" || obj(r.body, "errors", "0", "value") != "42" ||
		obj(r.body, "errors", "0", "parameter") != "id" || obj(r.body, "errors", "0", "detail") != "Could not find news with id: [42]." {
		t.Errorf("unknown story = %s", r.raw)
	}
}

func TestNewsRejectedRequests(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	long := strings.Repeat("q", 2049)
	for _, tc := range []struct {
		name, path, authz string
		status            int
		params            []string
	}{
		{"missing query", "/2/news/search", b.bearer, 400, []string{"query"}},
		{"empty query", "/2/news/search?query=", b.bearer, 400, []string{"query"}},
		{"query too long", "/2/news/search?query=" + long, b.bearer, 400, []string{"query"}},
		{"max_results 0", "/2/news/search?query=a&max_results=0", b.bearer, 400, []string{"max_results"}},
		{"max_results 101", "/2/news/search?query=a&max_results=101", b.bearer, 400, []string{"max_results"}},
		{"max_results not a number", "/2/news/search?query=a&max_results=ten", b.bearer, 400, []string{"max_results"}},
		{"max_age_hours 0", "/2/news/search?query=a&max_age_hours=0", b.bearer, 400, []string{"max_age_hours"}},
		{"max_age_hours 721", "/2/news/search?query=a&max_age_hours=721", b.bearer, 400, []string{"max_age_hours"}},
		{"unknown field", "/2/news/search?query=a&news.fields=id,secret", b.bearer, 400, []string{"news.fields"}},
		{"empty fields", "/2/news/search?query=a&news.fields=", b.bearer, 400, []string{"news.fields"}},
		{"every problem at once", "/2/news/search?query=a&max_results=0&max_age_hours=x&news.fields=nope", b.bearer, 400,
			[]string{"max_age_hours", "max_results", "news.fields"}},
		{"unknown parameter", "/2/news/search?query=a&sort_order=recency", b.bearer, 400, []string{"sort_order"}},
		{"lookup malformed id", "/2/news/x", b.bearer, 400, []string{"id"}},
		{"lookup unknown field", "/2/news/1?news.fields=secret", b.bearer, 400, []string{"news.fields"}},
		{"no credentials", "/2/news/search?query=a", "", 401, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.call(t, "GET", tc.path, tc.authz, "", nil)
			if r.status != tc.status || r.header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("status %d (%s), want %d: %s", r.status, r.header.Get("Content-Type"), tc.status, r.raw)
			}
			if tc.status == 400 && r.body["type"] != problems+"invalid-request" {
				t.Errorf("problem = %s", r.raw)
			}
			if got := paramNames(r.body); !slices.Equal(got, tc.params) {
				t.Errorf("parameters %v, want %v: %s", got, tc.params, r.raw)
			}
		})
	}
}
