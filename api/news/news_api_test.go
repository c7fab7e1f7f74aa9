package news_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/news"
	"github.com/aviary-dev/aviary/storage"
)

// newsFixtures stores three stories: a quake story whose cluster holds
// three posts (one of them deleted since, one by a protected author),
// an election story and a quake story of ten days ago.
type newsFixtures struct {
	quake, election, old   storage.NewsStory
	shown, deleted, hidden string
}

func addNewsFixtures(t *testing.T, b *apitest.Bundle) newsFixtures {
	t.Helper()
	var f newsFixtures
	f.shown = b.Create(t, "oauth:author", map[string]any{"text": "Strong #Quake shakes the coast"})
	f.deleted = b.Create(t, "oauth:author", map[string]any{"text": "#quake deleted later"})
	if r := b.Call(t, "DELETE", "/2/tweets/"+f.deleted, "oauth:author", "", nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	secret := b.AddUser(t, "secret", storage.AccessReadWrite)
	f.hidden = b.Create(t, "oauth:secret", map[string]any{"text": "#quake from a protected account"})
	if _, err := b.DB.SetUserState(t.Context(), secret.ID, "protected", time.Now()); err != nil {
		t.Fatalf("protect: %v", err)
	}
	now := time.Now().UTC()
	f.old = apitest.AddStory(t, b.DB, storage.NewsStory{LeadTerm: "quake", Keywords: []string{"quake"}, Name: "An old quake",
		Summary: "Old posts.", Hook: "Old."}, now.Add(-10*24*time.Hour))
	f.quake = apitest.AddStory(t, b.DB, storage.NewsStory{LeadTerm: "#quake", Keywords: []string{"#quake", "quake", "coast"},
		Name: "Strong #Quake shakes the coast", Summary: "3 posts in the last 24 hours mention #Quake.", Hook: "#Quake is spiking.",
		Contexts: storage.NewsContexts{Topics: []string{"Quake"}, Finance: storage.NewsFinance{Tickers: []string{"NBIS"}}},
		PostIDs:  []int64{apitest.PostIDOf(t, f.shown), apitest.PostIDOf(t, f.deleted), apitest.PostIDOf(t, f.hidden)}, Posts: 3}, now.Add(-2*time.Hour))
	f.election = apitest.AddStory(t, b.DB, storage.NewsStory{LeadTerm: "election", Keywords: []string{"election"},
		Name: "Election night on the coast", Summary: "Results.", Hook: "Votes."}, now.Add(-time.Hour))
	return f
}

func storyIDs(body map[string]any) []string {
	var out []string
	data, _ := body["data"].([]any)
	for _, d := range data {
		out = append(out, apitest.Obj(d, "id").(string))
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
	b := apitest.Setup(t, 100)
	f := addNewsFixtures(t, b)
	id := func(s storage.NewsStory) string { return fmt.Sprint(s.ID) }

	// Default fields; the words match names, summaries and keywords.
	r := b.Get(t, "/2/news/search?query=quake", b.Bearer)
	if got := storyIDs(r.Body); !slices.Equal(got, []string{id(f.quake)}) || apitest.Obj(r.Body, "meta", "result_count") != float64(1) {
		t.Fatalf("search quake = %s", r.Raw)
	}
	s := apitest.Obj(r.Body, "data", "0")
	if got, want := fieldNames(s), []string{"category", "disclaimer", "hook", "id", "last_updated_at_ms", "name", "summary"}; !slices.Equal(got, want) {
		t.Errorf("default fields = %v, want %v", got, want)
	}
	if apitest.Obj(s, "category") != "News" || apitest.Obj(s, "name") != f.quake.Name || apitest.Obj(s, "disclaimer") != news.Disclaimer ||
		apitest.Obj(s, "last_updated_at_ms") != f.quake.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("story = %v", s)
	}

	// Asked-for fields; cluster posts the caller may not see are left out.
	r = b.Get(t, "/2/news/search?query=%23Quake&news.fields=contexts,cluster_posts_results,keywords,updated_at,id", b.Bearer)
	s = apitest.Obj(r.Body, "data", "0")
	if got := fieldNames(s); !slices.Contains(got, "contexts") || !slices.Contains(got, "updated_at") || !slices.Contains(got, "name") {
		t.Errorf("fields = %v", got)
	}
	if apitest.Obj(s, "updated_at") != apitest.Obj(s, "last_updated_at_ms") {
		t.Errorf("updated_at %v, last_updated_at_ms %v", apitest.Obj(s, "updated_at"), apitest.Obj(s, "last_updated_at_ms"))
	}
	if got := apitest.Obj(s, "cluster_posts_results"); fmt.Sprint(got) != fmt.Sprintf("[map[post_id:%s]]", f.shown) {
		t.Errorf("cluster posts = %v, want only %s", got, f.shown)
	}
	if fmt.Sprint(apitest.Obj(s, "keywords")) != "map[#quake:1 coast:3 quake:2]" || fmt.Sprint(apitest.Obj(s, "contexts", "topics")) != "[Quake]" ||
		fmt.Sprint(apitest.Obj(s, "contexts", "finance", "tickers")) != "[NBIS]" || fmt.Sprint(apitest.Obj(s, "contexts", "entities", "people")) != "[]" ||
		fmt.Sprint(apitest.Obj(s, "contexts", "sports", "teams")) != "[]" {
		t.Errorf("keywords %v, contexts %v", apitest.Obj(s, "keywords"), apitest.Obj(s, "contexts"))
	}
	// The protected author sees their own post.
	r = b.Get(t, "/2/news/search?query=quake&news.fields=cluster_posts_results", "oauth:secret")
	if got := fmt.Sprint(apitest.Obj(r.Body, "data", "0", "cluster_posts_results")); got != fmt.Sprintf("[map[post_id:%s] map[post_id:%s]]", f.shown, f.hidden) {
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
		r := b.Get(t, "/2/news/search?"+q, b.Bearer)
		if got := storyIDs(r.Body); !slices.Equal(got, want) || apitest.Obj(r.Body, "meta", "result_count") != float64(len(want)) {
			t.Errorf("%s = %s, want %v", q, r.Raw, want)
		}
		if len(want) == 0 && r.Body["data"] != nil {
			t.Errorf("%s: data in an empty answer: %s", q, r.Raw)
		}
	}
}

func TestNewsLookup(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	f := addNewsFixtures(t, b)
	r := b.Get(t, fmt.Sprintf("/2/news/%d?news.fields=contexts,cluster_posts_results", f.quake.ID), "oauth:reader")
	if apitest.Obj(r.Body, "data", "id") != fmt.Sprint(f.quake.ID) || apitest.Obj(r.Body, "data", "hook") != f.quake.Hook ||
		fmt.Sprint(apitest.Obj(r.Body, "data", "cluster_posts_results")) != fmt.Sprintf("[map[post_id:%s]]", f.shown) ||
		apitest.Obj(r.Body, "data", "contexts", "topics", "0") != "Quake" || r.Body["errors"] != nil {
		t.Errorf("lookup = %s", r.Raw)
	}
	// Unknown: a 200 with only the error, as the other lookups answer.
	r = b.Get(t, "/2/news/42", b.Bearer)
	if r.Body["data"] != nil || apitest.Obj(r.Body, "errors", "0", "type") != apitest.Problems+"resource-not-found" ||
		apitest.Obj(r.Body, "errors", "0", "resource_type") != "news" || apitest.Obj(r.Body, "errors", "0", "value") != "42" ||
		apitest.Obj(r.Body, "errors", "0", "parameter") != "id" || apitest.Obj(r.Body, "errors", "0", "detail") != "Could not find news with id: [42]." {
		t.Errorf("unknown story = %s", r.Raw)
	}
}

func TestNewsRejectedRequests(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	long := strings.Repeat("q", 2049)
	for _, tc := range []struct {
		name, path, authz string
		status            int
		params            []string
	}{
		{"missing query", "/2/news/search", b.Bearer, 400, []string{"query"}},
		{"empty query", "/2/news/search?query=", b.Bearer, 400, []string{"query"}},
		{"query too long", "/2/news/search?query=" + long, b.Bearer, 400, []string{"query"}},
		{"max_results 0", "/2/news/search?query=a&max_results=0", b.Bearer, 400, []string{"max_results"}},
		{"max_results 101", "/2/news/search?query=a&max_results=101", b.Bearer, 400, []string{"max_results"}},
		{"max_results not a number", "/2/news/search?query=a&max_results=ten", b.Bearer, 400, []string{"max_results"}},
		{"max_age_hours 0", "/2/news/search?query=a&max_age_hours=0", b.Bearer, 400, []string{"max_age_hours"}},
		{"max_age_hours 721", "/2/news/search?query=a&max_age_hours=721", b.Bearer, 400, []string{"max_age_hours"}},
		{"unknown field", "/2/news/search?query=a&news.fields=id,secret", b.Bearer, 400, []string{"news.fields"}},
		{"empty fields", "/2/news/search?query=a&news.fields=", b.Bearer, 400, []string{"news.fields"}},
		{"every problem at once", "/2/news/search?query=a&max_results=0&max_age_hours=x&news.fields=nope", b.Bearer, 400,
			[]string{"max_age_hours", "max_results", "news.fields"}},
		{"unknown parameter", "/2/news/search?query=a&sort_order=recency", b.Bearer, 400, []string{"sort_order"}},
		{"lookup malformed id", "/2/news/x", b.Bearer, 400, []string{"id"}},
		{"lookup unknown field", "/2/news/1?news.fields=secret", b.Bearer, 400, []string{"news.fields"}},
		{"no credentials", "/2/news/search?query=a", "", 401, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Call(t, "GET", tc.path, tc.authz, "", nil)
			if r.Status != tc.status || r.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("status %d (%s), want %d: %s", r.Status, r.Header.Get("Content-Type"), tc.status, r.Raw)
			}
			if tc.status == 400 && r.Body["type"] != apitest.Problems+"invalid-request" {
				t.Errorf("problem = %s", r.Raw)
			}
			if got := apitest.ParamNames(r.Body); !slices.Equal(got, tc.params) {
				t.Errorf("parameters %v, want %v: %s", got, tc.params, r.Raw)
			}
		})
	}
}
