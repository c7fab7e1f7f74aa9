package insights_test

import (
	"net/http"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

// Hostile: a year-0 window parses (time.Parse takes "0000-01-01") and
// passes the window checks, but PostgreSQL refuses the day '0000-01-01' the
// related keywords query casts from text: the caller gets a 500 instead of
// INVALID_PARAMETER naming start_time.
func TestHostileYearZeroWindowIsNot500(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.alice.Get(t, searchPath, adstest.With(hourQuery(), "start_time", "0000-01-01", "end_time", "0000-01-02"))
	if r.Code >= 500 {
		t.Fatalf("start_time=0000-01-01&end_time=0000-01-02: %d %s, want a 400 naming start_time (or an answer)", r.Code, r.Raw)
	}
}

// Hostile: the edge cases that held, kept as a guard.
func TestHostileEdgesHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ok := []struct {
		name string
		kv   []string
	}{
		{"exactly 7 days", []string{"start_time", "2026-03-01T00:00:00Z", "end_time", "2026-03-08T00:00:00Z"}},
		{"offset +14:00", []string{"start_time", "2026-03-02T20:00:00+14:00", "end_time", "2026-03-02T14:00:00Z"}},
		{"window in the future", []string{"start_time", "2099-03-01T00:00:00Z", "end_time", "2099-03-02T00:00:00Z"}},
		{"window within one hour", []string{"start_time", "2026-03-02T10:10:00Z", "end_time", "2026-03-02T10:50:00Z"}},
		{"NFD keyword", []string{"keywords", "cafe\u0301"}},
		{"64-rune keyword", []string{"keywords", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
		{"SQL-ish hashtag", []string{"keywords", "#_"}},
		{"keyword equal to negative", []string{"keywords", "go", "negative_keywords", "go"}},
		{"year 9999", []string{"start_time", "9999-12-30", "end_time", "9999-12-31T23:00:00Z"}},
	}
	for _, tc := range ok {
		r := f.alice.Get(t, searchPath, adstest.With(hourQuery(), tc.kv...))
		if r.Code != http.StatusOK {
			t.Errorf("%s: %d %s", tc.name, r.Code, r.Raw)
		}
	}
	bad := []struct {
		name, param string
		kv          []string
	}{
		{"7 days + 1 s", "end_time", []string{"start_time", "2026-03-01T00:00:00Z", "end_time", "2026-03-08T00:00:01Z"}},
		{"location *", "location", []string{"location", "*"}},
		{"location ' US'", "location", []string{"location", " US"}},
		{"fullwidth hashtag", "keywords", []string{"keywords", "＃go"}},
		{"zero-width joiner", "keywords", []string{"keywords", "g\u200do"}},
		{"65-rune keyword", "keywords", []string{"keywords", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
		{"SQL-ish", "keywords", []string{"keywords", "go';DROP TABLE posts;--"}},
		{"NUL", "keywords", []string{"keywords", "go\x00"}},
		{"invalid UTF-8", "keywords", []string{"keywords", "go\xff"}},
	}
	for _, tc := range bad {
		r := f.alice.Get(t, searchPath, adstest.With(hourQuery(), tc.kv...))
		if r.Code != http.StatusBadRequest || r.FirstError().Parameter != tc.param {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.name, r.Code, r.Raw, tc.param)
		}
	}
}
