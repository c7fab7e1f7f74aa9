package search_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/search"
)

func searchIDs(body map[string]any) []string {
	var out []string
	data, _ := body["data"].([]any)
	for _, d := range data {
		out = append(out, apitest.Obj(d, "id").(string))
	}
	return out
}

func TestSearchRecent(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	var gardening []string
	for i := range 13 {
		gardening = append(gardening, b.Create(t, "oauth:author", map[string]any{"text": fmt.Sprintf("gardening tip number %d #garden", i)}))
	}
	other := b.Create(t, "oauth:reader", map[string]any{"text": "cooking with @author today"})
	me := fmt.Sprint(b.User.ID)
	if r := b.Call(t, "POST", "/2/users/"+me+"/retweets", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{"tweet_id": gardening[0]})); r.Status != 200 {
		t.Fatalf("repost: %d %s", r.Status, r.Raw)
	}
	fresh := b.Get(t, "/2/tweets/search/recent?query=cooking", b.Bearer)
	if fresh.Body["data"] != nil {
		t.Errorf("a post of the last %s was found: %s", search.Settle, fresh.Raw)
	}
	apitest.WaitSettled()
	slices.Reverse(gardening) // newest first

	// Walk the pages of a keyword search: every post once, newest first, no repost.
	var walked []string
	token := ""
	for page := 0; page < 5; page++ {
		path := "/2/tweets/search/recent?query=gardening&max_results=10"
		if token != "" {
			path += "&next_token=" + url.QueryEscape(token)
		}
		r := b.Get(t, path, b.Bearer)
		ids := searchIDs(r.Body)
		walked = append(walked, ids...)
		meta := r.Body["meta"].(map[string]any)
		if meta["result_count"] != float64(len(ids)) || (len(ids) > 0 && (meta["newest_id"] != ids[0] || meta["oldest_id"] != ids[len(ids)-1])) {
			t.Errorf("meta = %v for %v", meta, ids)
		}
		token, _ = meta["next_token"].(string)
		if token == "" {
			break
		}
	}
	if !slices.Equal(walked, gardening) {
		t.Errorf("walked %v, want %v", walked, gardening)
	}
	// Operators find reposts; keywords do not.
	from := b.Get(t, "/2/tweets/search/recent?query="+url.QueryEscape("from:reader"), b.Bearer)
	if ids := searchIDs(from.Body); len(ids) != 2 || ids[1] != other {
		t.Errorf("from:reader = %v, want the repost then %s", ids, other)
	}
	for q, want := range map[string][]string{
		"@author":                   {other},
		"#garden -gardening":        nil,
		"cooking OR \"tip number\"": append([]string{other}, gardening...)[:10],
		"is:retweet":                {searchIDs(from.Body)[0]},
	} {
		r := b.Get(t, "/2/tweets/search/recent?query="+url.QueryEscape(q), b.Bearer)
		if got := searchIDs(r.Body); !slices.Equal(got, want) {
			t.Errorf("%q = %v, want %v", q, got, want)
		}
	}
	// Fields and expansions apply to search results too.
	r := b.Get(t, "/2/tweets/search/recent?query=cooking&tweet.fields=author_id&expansions=author_id", b.Bearer)
	if apitest.Obj(r.Body, "data", "0", "author_id") != me || apitest.Obj(r.Body, "includes", "users", "0", "username") != "reader" {
		t.Errorf("search with expansions = %s", r.Raw)
	}
	// No result: meta only.
	if r := b.Get(t, "/2/tweets/search/recent?query=nothingmatches", b.Bearer); r.Body["data"] != nil || apitest.Obj(r.Body, "meta", "result_count") != float64(0) {
		t.Errorf("empty search = %s", r.Raw)
	}
}

func TestCountsRecent(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	for i := range 3 {
		b.Create(t, "oauth:author", map[string]any{"text": fmt.Sprintf("counting sheep %d", i)})
	}
	apitest.WaitSettled()
	start := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	r := b.Get(t, "/2/tweets/counts/recent?query=sheep&granularity=hour&start_time="+start.Format(time.RFC3339), b.Bearer)
	data := r.Body["data"].([]any)
	if len(data) < 3 || len(data) > 4 {
		t.Fatalf("buckets = %d, want 3 or 4 hourly buckets: %s", len(data), r.Raw)
	}
	var total float64
	for i, d := range data {
		total += apitest.Obj(d, "tweet_count").(float64)
		if apitest.Obj(d, "tweet_count") != apitest.Obj(d, "post_count") {
			t.Errorf("bucket %d counts differ: %v", i, d)
		}
		if i > 0 && apitest.Obj(d, "start") != apitest.Obj(data[i-1], "end") {
			t.Errorf("bucket %d does not follow bucket %d: %v %v", i, i-1, data[i-1], d)
		}
	}
	if apitest.Obj(data, "0", "start") != start.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("first bucket starts %v, want %v", apitest.Obj(data, "0", "start"), start)
	}
	if total != 3 || apitest.Obj(r.Body, "meta", "total_tweet_count") != float64(3) {
		t.Errorf("total = %v, meta = %v", total, r.Body["meta"])
	}
	day := b.Get(t, "/2/tweets/counts/recent?query=sheep&granularity=day", b.Bearer)
	if n := len(day.Body["data"].([]any)); n < 7 || n > 8 {
		t.Errorf("daily buckets over the default 7 days = %d", n)
	}
}

// TestCountsAllPages walks the pages of a counts/all request over 40 days:
// each page covers at most 31 days, starts on a bucket boundary, and the
// pages join without a gap or a split bucket.
func TestCountsAllPages(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	b.Create(t, "oauth:author", map[string]any{"text": "paging through counts"})
	apitest.WaitSettled()
	start := time.Now().UTC().Add(-40 * 24 * time.Hour).Truncate(time.Hour)
	path := "/2/tweets/counts/all?query=paging&granularity=hour&start_time=" + start.Format(time.RFC3339)
	var firstStart string
	var total float64
	pages := 0
	for token := ""; pages == 0 || token != ""; pages++ {
		p := path
		if token != "" {
			p += "&next_token=" + url.QueryEscape(token)
		}
		r := b.Get(t, p, b.Bearer)
		data := r.Body["data"].([]any)
		if firstStart != "" && apitest.Obj(data, fmt.Sprint(len(data)-1), "end") != firstStart {
			t.Errorf("page %d ends at %v, want %s (where the newer page started)", pages, apitest.Obj(data, fmt.Sprint(len(data)-1), "end"), firstStart)
		}
		firstStart = apitest.Obj(data, "0", "start").(string)
		if !strings.HasSuffix(firstStart, ":00:00.000Z") {
			t.Errorf("page %d starts at %s, not on an hour", pages, firstStart)
		}
		total += apitest.Obj(r.Body, "meta", "total_tweet_count").(float64)
		token, _ = apitest.Obj(r.Body, "meta", "next_token").(string)
		if pages > 3 {
			t.Fatal("too many pages")
		}
	}
	if pages != 2 || total != 1 || firstStart != start.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("%d pages, %v posts counted, oldest bucket %s; want 2 pages, 1 post, %s", pages, total, firstStart, start)
	}
}

func TestSearchRejects(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	old := time.Now().UTC().Add(-8 * 24 * time.Hour).Format(time.RFC3339)
	now := time.Now().UTC()
	q := func(s string) string { return url.QueryEscape(s) }
	tests := []struct {
		name, path, authz string
		status            int
		params            []string
		detail            string
	}{
		{"no query", "/2/tweets/search/recent", b.Bearer, 400, []string{"query"}, ""},
		{"query too long", "/2/tweets/search/recent?query=" + strings.Repeat("a", 513), b.Bearer, 400, []string{"query"}, "at most 512"},
		{"query at the all limit", "/2/tweets/search/all?query=" + strings.Repeat("a", 1025), b.Bearer, 400, []string{"query"}, "at most 1024"},
		{"unbalanced parenthesis", "/2/tweets/search/recent?query=" + q("(cats OR dogs"), b.Bearer, 400, []string{"query"}, "position"},
		{"unknown operator", "/2/tweets/search/recent?query=" + q("cats foo:bar"), b.Bearer, 400, []string{"query"}, "position"},
		{"only negation", "/2/tweets/search/recent?query=" + q("-cats"), b.Bearer, 400, []string{"query"}, ""},
		// Operators only the filtered stream's rules take: a 400 naming
		// them, never a query the store cannot compile.
		{"stream-only has:", "/2/tweets/search/recent?query=" + q("cats has:hashtags"), b.Bearer, 400, []string{"query"}, "not supported by Aviary's search"},
		{"stream-only is: in a group", "/2/tweets/search/all?query=" + q("(cats OR dogs is:verified)"), b.Bearer, 400, []string{"query"}, `\"is:verified\" is not supported`},
		{"stream-only sample: in counts", "/2/tweets/counts/recent?query=" + q("cats sample:10"), b.Bearer, 400, []string{"query"}, "sample:"},
		{"stream-only place:", "/2/tweets/search/recent?query=" + q("place:seattle"), b.Bearer, 400, []string{"query"}, "not supported by Aviary's search"},
		{"max_results 9", "/2/tweets/search/recent?query=a&max_results=9", b.Bearer, 400, []string{"max_results"}, ""},
		{"max_results 101 recent", "/2/tweets/search/recent?query=a&max_results=101", b.Bearer, 400, []string{"max_results"}, ""},
		{"max_results 501 all", "/2/tweets/search/all?query=a&max_results=501", b.Bearer, 400, []string{"max_results"}, ""},
		{"start_time older than 7 days", "/2/tweets/search/recent?query=a&start_time=" + old, b.Bearer, 400, []string{"start_time"}, ""},
		{"end_time before start_time", "/2/tweets/search/recent?query=a&start_time=" + now.Add(-2*time.Hour).Format(time.RFC3339) + "&end_time=" + now.Add(-3*time.Hour).Format(time.RFC3339), b.Bearer, 400, []string{"end_time"}, ""},
		{"end_time in the future", "/2/tweets/search/recent?query=a&end_time=" + now.Add(time.Hour).Format(time.RFC3339), b.Bearer, 400, []string{"end_time"}, ""},
		{"bad start_time", "/2/tweets/search/recent?query=a&start_time=yesterday", b.Bearer, 400, []string{"start_time"}, ""},
		{"since_id after until_id", "/2/tweets/search/recent?query=a&since_id=20&until_id=10", b.Bearer, 400, []string{"since_id"}, ""},
		{"malformed since_id", "/2/tweets/search/recent?query=a&since_id=x", b.Bearer, 400, []string{"since_id"}, ""},
		{"bad token", "/2/tweets/search/recent?query=a&next_token=zzz", b.Bearer, 400, []string{"next_token"}, ""},
		{"bad sort_order", "/2/tweets/search/recent?query=a&sort_order=best", b.Bearer, 400, []string{"sort_order"}, ""},
		{"bad granularity", "/2/tweets/counts/recent?query=a&granularity=week", b.Bearer, 400, []string{"granularity"}, ""},
		{"max_results on counts", "/2/tweets/counts/recent?query=a&max_results=10", b.Bearer, 400, []string{"max_results"}, ""},
		{"start_time in the future", "/2/tweets/counts/recent?query=a&start_time=" + now.Add(2*time.Hour).Format(time.RFC3339), b.Bearer, 400, []string{"start_time"}, "before the request time"},
		{"start_time in year 9999", "/2/tweets/counts/all?query=a&start_time=9999-12-31T00:00:00Z", b.Bearer, 400, []string{"start_time"}, ""},
		{"every problem at once", "/2/tweets/search/recent?query=%28a&max_results=5&sort_order=best&next_token=zz", b.Bearer, 400, []string{"max_results", "next_token", "query", "sort_order"}, ""},
		{"archive with user context", "/2/tweets/search/all?query=a", "oauth:reader", 403, nil, ""},
		{"counts with user context", "/2/tweets/counts/recent?query=a", "oauth:reader", 403, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Call(t, "GET", tc.path, tc.authz, "", nil)
			if r.Status != tc.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Raw, tc.status)
			}
			if tc.params != nil && !slices.Equal(apitest.ParamNames(r.Body), tc.params) {
				t.Errorf("parameters = %v, want %v: %s", apitest.ParamNames(r.Body), tc.params, r.Raw)
			}
			if !strings.Contains(r.Raw, tc.detail) {
				t.Errorf("answer %s does not say %q", r.Raw, tc.detail)
			}
		})
	}
}
