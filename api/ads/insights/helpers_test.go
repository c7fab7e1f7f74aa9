package insights_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

const searchPath = "/12/insights/keywords/search"

// fixture is a server with aggregates of a few keywords (the rows
// workers/insights would write): insight_term_hours and the sampled
// insight_term_pairs and insight_term_days, in the US, France and unknown countries around
// 2026-03-02.
type fixture struct {
	s     *adstest.Server
	alice *adstest.Caller
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	s := adstest.New(t)
	f := fixture{s: s, alice: s.User(t, "alice")}
	hours := []struct {
		term, country, hour string
		posts               int
	}{
		{"", "US", "2026-03-01T05:00:00Z", 10},
		{"", "US", "2026-03-02T10:00:00Z", 100},
		{"", "FR", "2026-03-02T10:00:00Z", 20},
		{"", "", "2026-03-02T11:00:00Z", 5},
		{"go", "US", "2026-03-01T05:00:00Z", 3},
		{"go", "US", "2026-03-02T09:00:00Z", 50},
		{"go", "US", "2026-03-02T10:00:00Z", 5},
		{"go", "FR", "2026-03-02T10:00:00Z", 2},
		{"go", "", "2026-03-02T11:00:00Z", 1},
		{"go", "US", "2026-03-02T13:00:00Z", 4},
		{"go", "US", "2026-03-02T14:00:00Z", 100},
		{"go", "US", "2026-03-03T11:00:00Z", 2},
		{"go", "US", "2026-03-03T12:00:00Z", 9},
		{"#go", "US", "2026-03-02T10:00:00Z", 7},
		{"rust", "US", "2026-03-02T10:00:00Z", 10},
		{"rust", "US", "2026-03-02T12:00:00Z", 6},
	}
	for _, h := range hours {
		s.Exec(t, `INSERT INTO insight_term_hours AS a (term, country_code, hour, posts)
			VALUES ($1, $2, $3::timestamptz, $4), ($1, '*', $3::timestamptz, $4)
			ON CONFLICT (term, country_code, hour) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
			h.term, h.country, h.hour, h.posts)
	}
	const d = "2026-03-02"
	pairs := []struct {
		term, country, day, co string
		posts                  int
	}{
		{"", "US", d, "", 1000},
		{"", "FR", d, "", 100},
		{"rust", "US", d, "rust", 5},
		{"rust", "US", d, "go", 1},
		{"rust", "FR", d, "rust", 5},
		{"rust", "FR", d, "go", 5},
		{"go", "US", d, "go", 4},
		{"go", "US", d, "rust", 1},
		{"go", "US", d, "gopher", 10},
		{"go", "US", d, "code", 10},
		{"go", "US", d, "rare", 3},
		{"go", "US", d, "common", 12},
		{"go", "FR", d, "paris", 40},
		{"#go", "US", d, "go", 7},
		{"#go", "US", d, "gopher", 2},
		{"gopher", "US", d, "gopher", 10},
		{"code", "US", d, "code", 100},
		{"rare", "US", d, "rare", 3},
		{"common", "US", d, "common", 1000},
		{"paris", "FR", d, "paris", 40},
	}
	for _, p := range pairs {
		if p.term == p.co { // a term's sampled posts
			s.Exec(t, `INSERT INTO insight_term_days AS a (term, country_code, day, posts)
				VALUES ($1, $2, $3::text::date, $4), ($1, '*', $3::text::date, $4)
				ON CONFLICT (term, country_code, day) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
				p.term, p.country, p.day, p.posts)
			continue
		}
		s.Exec(t, `INSERT INTO insight_term_pairs AS a (term, country_code, day, co_term, posts)
			VALUES ($1, $2, $3::text::date, $4, $5), ($1, '*', $3::text::date, $4, $5)
			ON CONFLICT (term, country_code, day, co_term) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
			p.term, p.country, p.day, p.co, p.posts)
	}
	return f
}

// hourQuery is a valid query: go, every hour of 2026-03-02 10:00 to 14:00.
func hourQuery() url.Values {
	return url.Values{"granularity": {"HOUR"}, "keywords": {"go"},
		"start_time": {"2026-03-02T10:00:00Z"}, "end_time": {"2026-03-02T14:00:00Z"}}
}

// queries counts the logged queries.
func (f fixture) queries(t *testing.T) int {
	t.Helper()
	var n int
	f.s.Scan(t, `SELECT count(*) FROM insight_queries`, nil, &n)
	return n
}

// result is data of a successful search.
func result(t *testing.T, r adstest.Reply) (related []string, volumes []int64) {
	t.Helper()
	d := r.Status(t, http.StatusOK).Data(t)
	rk, ok1 := d["related_keywords"].([]any)
	tv, ok2 := d["tweet_volume"].([]any)
	if !ok1 || !ok2 || len(d) != 2 {
		t.Fatalf("data %s: want related_keywords and tweet_volume arrays", r.Raw)
	}
	related, volumes = []string{}, []int64{}
	for _, v := range rk {
		related = append(related, v.(string))
	}
	for _, v := range tv {
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			t.Fatalf("tweet_volume entry %v is not an integer", v)
		}
		volumes = append(volumes, int64(n))
	}
	return related, volumes
}

// params is request.params of a reply.
func params(t *testing.T, r adstest.Reply) map[string]any {
	t.Helper()
	req, _ := r.Body["request"].(map[string]any)
	p, ok := req["params"].(map[string]any)
	if !ok {
		t.Fatalf("no request.params: %s", r.Raw)
	}
	return p
}

func list(n int, prefix string) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s%c%c", prefix, 'a'+i%26, 'a'+i/26)
	}
	return s
}
