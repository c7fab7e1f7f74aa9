package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/search"
)

// waitSettled waits until the posts created so far are inside the window
// of a search without end_time.
func waitSettled() { time.Sleep(search.Settle + 100*time.Millisecond) }

func searchIDs(body map[string]any) []string {
	var out []string
	data, _ := body["data"].([]any)
	for _, d := range data {
		out = append(out, obj(d, "id").(string))
	}
	return out
}

func TestSearchRecent(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	var gardening []string
	for i := range 13 {
		gardening = append(gardening, b.create(t, "oauth:author", map[string]any{"text": fmt.Sprintf("gardening tip number %d #garden", i)}))
	}
	other := b.create(t, "oauth:reader", map[string]any{"text": "cooking with @author today"})
	me := fmt.Sprint(b.user.ID)
	if r := b.call(t, "POST", "/2/users/"+me+"/retweets", "oauth:reader", "application/json", jsonBody(map[string]any{"tweet_id": gardening[0]})); r.status != 200 {
		t.Fatalf("repost: %d %s", r.status, r.raw)
	}
	fresh := b.get(t, "/2/tweets/search/recent?query=cooking", b.bearer)
	if fresh.body["data"] != nil {
		t.Errorf("a post of the last %s was found: %s", search.Settle, fresh.raw)
	}
	waitSettled()
	slices.Reverse(gardening) // newest first

	// Walk the pages of a keyword search: every post once, newest first, no repost.
	var walked []string
	token := ""
	for page := 0; page < 5; page++ {
		path := "/2/tweets/search/recent?query=gardening&max_results=10"
		if token != "" {
			path += "&next_token=" + url.QueryEscape(token)
		}
		r := b.get(t, path, b.bearer)
		ids := searchIDs(r.body)
		walked = append(walked, ids...)
		meta := r.body["meta"].(map[string]any)
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
	from := b.get(t, "/2/tweets/search/recent?query="+url.QueryEscape("from:reader"), b.bearer)
	if ids := searchIDs(from.body); len(ids) != 2 || ids[1] != other {
		t.Errorf("from:reader = %v, want the repost then %s", ids, other)
	}
	for q, want := range map[string][]string{
		"@author":                   {other},
		"#garden -gardening":        nil,
		"cooking OR \"tip number\"": append([]string{other}, gardening...)[:10],
		"is:retweet":                {searchIDs(from.body)[0]},
	} {
		r := b.get(t, "/2/tweets/search/recent?query="+url.QueryEscape(q), b.bearer)
		if got := searchIDs(r.body); !slices.Equal(got, want) {
			t.Errorf("%q = %v, want %v", q, got, want)
		}
	}
	// Fields and expansions apply to search results too.
	r := b.get(t, "/2/tweets/search/recent?query=cooking&tweet.fields=author_id&expansions=author_id", b.bearer)
	if obj(r.body, "data", "0", "author_id") != me || obj(r.body, "includes", "users", "0", "username") != "reader" {
		t.Errorf("search with expansions = %s", r.raw)
	}
	// No result: meta only.
	if r := b.get(t, "/2/tweets/search/recent?query=nothingmatches", b.bearer); r.body["data"] != nil || obj(r.body, "meta", "result_count") != float64(0) {
		t.Errorf("empty search = %s", r.raw)
	}
}

func TestCountsRecent(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	for i := range 3 {
		b.create(t, "oauth:author", map[string]any{"text": fmt.Sprintf("counting sheep %d", i)})
	}
	waitSettled()
	start := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	r := b.get(t, "/2/tweets/counts/recent?query=sheep&granularity=hour&start_time="+start.Format(time.RFC3339), b.bearer)
	data := r.body["data"].([]any)
	if len(data) < 3 || len(data) > 4 {
		t.Fatalf("buckets = %d, want 3 or 4 hourly buckets: %s", len(data), r.raw)
	}
	var total float64
	for i, d := range data {
		total += obj(d, "tweet_count").(float64)
		if obj(d, "tweet_count") != obj(d, "post_count") {
			t.Errorf("bucket %d counts differ: %v", i, d)
		}
		if i > 0 && obj(d, "start") != obj(data[i-1], "end") {
			t.Errorf("bucket %d does not follow bucket %d: %v %v", i, i-1, data[i-1], d)
		}
	}
	if obj(data, "0", "start") != start.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("first bucket starts %v, want %v", obj(data, "0", "start"), start)
	}
	if total != 3 || obj(r.body, "meta", "total_tweet_count") != float64(3) {
		t.Errorf("total = %v, meta = %v", total, r.body["meta"])
	}
	day := b.get(t, "/2/tweets/counts/recent?query=sheep&granularity=day", b.bearer)
	if n := len(day.body["data"].([]any)); n < 7 || n > 8 {
		t.Errorf("daily buckets over the default 7 days = %d", n)
	}
}

// TestCountsAllPages walks the pages of a counts/all request over 40 days:
// each page covers at most 31 days, starts on a bucket boundary, and the
// pages join without a gap or a split bucket.
func TestCountsAllPages(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	b.create(t, "oauth:author", map[string]any{"text": "paging through counts"})
	waitSettled()
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
		r := b.get(t, p, b.bearer)
		data := r.body["data"].([]any)
		if firstStart != "" && obj(data, fmt.Sprint(len(data)-1), "end") != firstStart {
			t.Errorf("page %d ends at %v, want %s (where the newer page started)", pages, obj(data, fmt.Sprint(len(data)-1), "end"), firstStart)
		}
		firstStart = obj(data, "0", "start").(string)
		if !strings.HasSuffix(firstStart, ":00:00.000Z") {
			t.Errorf("page %d starts at %s, not on an hour", pages, firstStart)
		}
		total += obj(r.body, "meta", "total_tweet_count").(float64)
		token, _ = obj(r.body, "meta", "next_token").(string)
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
	b := setup(t, 100)
	old := time.Now().UTC().Add(-8 * 24 * time.Hour).Format(time.RFC3339)
	now := time.Now().UTC()
	q := func(s string) string { return url.QueryEscape(s) }
	tests := []struct {
		name, path, authz string
		status            int
		params            []string
		detail            string
	}{
		{"no query", "/2/tweets/search/recent", b.bearer, 400, []string{"query"}, ""},
		{"query too long", "/2/tweets/search/recent?query=" + strings.Repeat("a", 513), b.bearer, 400, []string{"query"}, "at most 512"},
		{"query at the all limit", "/2/tweets/search/all?query=" + strings.Repeat("a", 1025), b.bearer, 400, []string{"query"}, "at most 1024"},
		{"unbalanced parenthesis", "/2/tweets/search/recent?query=" + q("(cats OR dogs"), b.bearer, 400, []string{"query"}, "position"},
		{"unknown operator", "/2/tweets/search/recent?query=" + q("cats foo:bar"), b.bearer, 400, []string{"query"}, "position"},
		{"only negation", "/2/tweets/search/recent?query=" + q("-cats"), b.bearer, 400, []string{"query"}, ""},
		{"max_results 9", "/2/tweets/search/recent?query=a&max_results=9", b.bearer, 400, []string{"max_results"}, ""},
		{"max_results 101 recent", "/2/tweets/search/recent?query=a&max_results=101", b.bearer, 400, []string{"max_results"}, ""},
		{"max_results 501 all", "/2/tweets/search/all?query=a&max_results=501", b.bearer, 400, []string{"max_results"}, ""},
		{"start_time older than 7 days", "/2/tweets/search/recent?query=a&start_time=" + old, b.bearer, 400, []string{"start_time"}, ""},
		{"end_time before start_time", "/2/tweets/search/recent?query=a&start_time=" + now.Add(-2*time.Hour).Format(time.RFC3339) + "&end_time=" + now.Add(-3*time.Hour).Format(time.RFC3339), b.bearer, 400, []string{"end_time"}, ""},
		{"end_time in the future", "/2/tweets/search/recent?query=a&end_time=" + now.Add(time.Hour).Format(time.RFC3339), b.bearer, 400, []string{"end_time"}, ""},
		{"bad start_time", "/2/tweets/search/recent?query=a&start_time=yesterday", b.bearer, 400, []string{"start_time"}, ""},
		{"since_id after until_id", "/2/tweets/search/recent?query=a&since_id=20&until_id=10", b.bearer, 400, []string{"since_id"}, ""},
		{"malformed since_id", "/2/tweets/search/recent?query=a&since_id=x", b.bearer, 400, []string{"since_id"}, ""},
		{"bad token", "/2/tweets/search/recent?query=a&next_token=zzz", b.bearer, 400, []string{"next_token"}, ""},
		{"bad sort_order", "/2/tweets/search/recent?query=a&sort_order=best", b.bearer, 400, []string{"sort_order"}, ""},
		{"bad granularity", "/2/tweets/counts/recent?query=a&granularity=week", b.bearer, 400, []string{"granularity"}, ""},
		{"max_results on counts", "/2/tweets/counts/recent?query=a&max_results=10", b.bearer, 400, []string{"max_results"}, ""},
		{"start_time in the future", "/2/tweets/counts/recent?query=a&start_time=" + now.Add(2*time.Hour).Format(time.RFC3339), b.bearer, 400, []string{"start_time"}, "before the request time"},
		{"start_time in year 9999", "/2/tweets/counts/all?query=a&start_time=9999-12-31T00:00:00Z", b.bearer, 400, []string{"start_time"}, ""},
		{"every problem at once", "/2/tweets/search/recent?query=%28a&max_results=5&sort_order=best&next_token=zz", b.bearer, 400, []string{"max_results", "next_token", "query", "sort_order"}, ""},
		{"archive with user context", "/2/tweets/search/all?query=a", "oauth:reader", 403, nil, ""},
		{"counts with user context", "/2/tweets/counts/recent?query=a", "oauth:reader", 403, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.call(t, "GET", tc.path, tc.authz, "", nil)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.raw, tc.status)
			}
			if tc.params != nil && !slices.Equal(paramNames(r.body), tc.params) {
				t.Errorf("parameters = %v, want %v: %s", paramNames(r.body), tc.params, r.raw)
			}
			if !strings.Contains(r.raw, tc.detail) {
				t.Errorf("answer %s does not say %q", r.raw, tc.detail)
			}
		})
	}
}
