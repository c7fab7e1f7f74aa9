package insights_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestBadInputs: every refused query gets the ads envelope naming the
// parameter, and nothing is logged.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base := hourQuery()
	eightDaysAgo := time.Now().Add(-8 * 24 * time.Hour).UTC().Format(time.RFC3339)
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	emptyLocation := hourQuery()
	emptyLocation.Set("location", "")
	cases := []struct {
		name   string
		params url.Values
		code   string
		param  string
	}{
		{"missing granularity", adstest.With(base, "granularity", ""), "MISSING_PARAMETER", "granularity"},
		{"unknown granularity", adstest.With(base, "granularity", "MINUTE"), "INVALID_PARAMETER", "granularity"},
		{"missing keywords", adstest.With(base, "keywords", ""), "MISSING_PARAMETER", "keywords"},
		{"empty keywords", url.Values{"granularity": {"HOUR"}, "keywords": {""}, "start_time": {"2026-03-02"}}, "INVALID_PARAMETER", "keywords"},
		{"empty keyword entry", adstest.With(base, "keywords", "go,,rust"), "INVALID_PARAMETER", "keywords"},
		{"empty negative entry", adstest.With(base, "negative_keywords", "rust, "), "INVALID_PARAMETER", "negative_keywords"},
		{"missing start_time", adstest.With(base, "start_time", ""), "MISSING_PARAMETER", "start_time"},
		{"start_time not a time", adstest.With(base, "start_time", "yesterday"), "INVALID_PARAMETER", "start_time"},
		{"end_time not a time", adstest.With(base, "end_time", "2026-13-01"), "INVALID_PARAMETER", "end_time"},
		{"11 keywords", adstest.With(base, "keywords", list(11, "k")), "INVALID_PARAMETER", "keywords"},
		{"11 entries across keywords and negative_keywords", adstest.With(base, "keywords", list(6, "k"), "negative_keywords", list(5, "n")),
			"INVALID_PARAMETER", "keywords"},
		{"11 entries, repeats counted", adstest.With(base, "keywords", "go,go,go,go,go,go", "negative_keywords", "x1,x1,x1,x1,x1"),
			"INVALID_PARAMETER", "keywords"},
		{"window over 7 days", adstest.With(base, "start_time", "2026-02-23T09:59:59Z"), "INVALID_PARAMETER", "end_time"},
		{"window over 7 days to now", adstest.With(base, "start_time", eightDaysAgo, "end_time", ""), "INVALID_PARAMETER", "start_time"},
		{"end_time before start_time", adstest.With(base, "end_time", "2026-03-02T09:00:00Z"), "INVALID_PARAMETER", "end_time"},
		{"end_time equal to start_time", adstest.With(base, "end_time", "2026-03-02T10:00:00Z"), "INVALID_PARAMETER", "end_time"},
		{"start_time after now", adstest.With(base, "start_time", tomorrow, "end_time", ""), "INVALID_PARAMETER", "start_time"},
		{"unknown location", adstest.With(base, "location", "ZZ"), "INVALID_PARAMETER", "location"},
		{"reserved location", adstest.With(base, "location", "UK"), "INVALID_PARAMETER", "location"},
		{"alpha-3 location", adstest.With(base, "location", "USA"), "INVALID_PARAMETER", "location"},
		{"targeting value location", adstest.With(base, "location", "96683cc9126741d1"), "INVALID_PARAMETER", "location"},
		{"empty location", emptyLocation, "INVALID_PARAMETER", "location"},
		{"multi-word keyword", adstest.With(base, "keywords", "big data"), "INVALID_PARAMETER", "keywords"},
		{"multi-word keyword among others", adstest.With(base, "keywords", "go,big data"), "INVALID_PARAMETER", "keywords"},
		{"multi-word negative keyword", adstest.With(base, "negative_keywords", "big data"), "INVALID_PARAMETER", "negative_keywords"},
		{"punctuation keyword", adstest.With(base, "keywords", "go!"), "INVALID_PARAMETER", "keywords"},
		{"one-letter keyword", adstest.With(base, "keywords", "g"), "INVALID_PARAMETER", "keywords"},
		{"bare hashtag", adstest.With(base, "keywords", "#"), "INVALID_PARAMETER", "keywords"},
		{"unknown parameter", adstest.With(base, "country", "US"), "INVALID_PARAMETER", "country"},
	}
	for _, tc := range cases {
		r := f.alice.Get(t, searchPath, tc.params)
		r.Fails(t, http.StatusBadRequest, tc.code, tc.param)
		if r.Body["data"] != nil {
			t.Errorf("%s: data in an error: %s", tc.name, r.Raw)
		}
	}
	if n := f.queries(t); n != 0 {
		t.Fatalf("%d queries logged, want none", n)
	}
}

// TestErrorsAreReportedTogether: every bad parameter is listed, each with
// its code.
func TestErrorsAreReportedTogether(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.alice.Get(t, searchPath, url.Values{"keywords": {"big data"}, "location": {"XX"}, "end_time": {"nope"}})
	r.Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "granularity")
	var got []string
	for _, e := range r.Body["errors"].([]any) {
		m := e.(map[string]any)
		got = append(got, m["code"].(string)+" "+m["parameter"].(string))
	}
	want := []string{"MISSING_PARAMETER granularity", "INVALID_PARAMETER keywords", "MISSING_PARAMETER start_time",
		"INVALID_PARAMETER end_time", "INVALID_PARAMETER location"}
	if !slices.Equal(got, want) {
		t.Fatalf("errors %q, want %q", got, want)
	}
	r = f.alice.Get(t, searchPath, adstest.With(hourQuery(), "keywords", list(6, "k"), "negative_keywords", list(5, "n")))
	if errs := r.Body["errors"].([]any); len(errs) != 2 || errs[1].(map[string]any)["parameter"] != "negative_keywords" {
		t.Fatalf("11 entries: errors %v, want keywords and negative_keywords", errs)
	}
	if n := f.queries(t); n != 0 {
		t.Fatalf("%d queries logged, want none", n)
	}
}

// TestVolumes: the hourly and daily volumes of the aggregates, the
// window's end exclusive and both ends truncated to the hour, one country
// or all, keywords OR-combined and negatives left out.
func TestVolumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name   string
		params url.Values
		want   []int64
	}{
		{"hours, every country", hourQuery(), []int64{7, 1, 0, 4}},
		{"hours, US", adstest.With(hourQuery(), "location", "US"), []int64{5, 0, 0, 4}},
		{"hours, location in lower case", adstest.With(hourQuery(), "location", "fr"), []int64{2, 0, 0, 0}},
		{"hours, a country without posts", adstest.With(hourQuery(), "location", "de"), []int64{0, 0, 0, 0}},
		{"granularity in lower case, keyword in upper case", adstest.With(hourQuery(), "granularity", "hour", "keywords", "GO"), []int64{7, 1, 0, 4}},
		{"times truncated to the hour", adstest.With(hourQuery(), "start_time", "2026-03-02T12:59:59+02:00", "end_time", "2026-03-02T14:30:00Z"),
			[]int64{7, 1, 0, 4}},
		{"days from a date, partial last day", url.Values{"granularity": {"DAY"}, "keywords": {"go"},
			"start_time": {"2026-03-01"}, "end_time": {"2026-03-03T12:00:00Z"}}, []int64{3, 162, 2}},
		{"a hashtag", adstest.With(hourQuery(), "keywords", "#Go"), []int64{7, 0, 0, 0}},
		// rust overlaps go in 1 of its 5 sampled posts in the US: it counts 0.8.
		{"two keywords", adstest.With(hourQuery(), "keywords", "go, rust", "location", "US"), []int64{13, 0, 5, 4}},
		// go holds rust in 1 of its 4 sampled posts in the US: go counts 0.75.
		{"a negative keyword", adstest.With(hourQuery(), "negative_keywords", "rust", "location", "US"), []int64{4, 0, 0, 3}},
		{"an unknown keyword", adstest.With(hourQuery(), "keywords", "nothing"), []int64{0, 0, 0, 0}},
		{"less than an hour", adstest.With(hourQuery(), "start_time", "2026-03-02T10:10:00Z", "end_time", "2026-03-02T10:50:00Z"), []int64{}},
	}
	for _, tc := range cases {
		_, got := result(t, f.alice.Get(t, searchPath, tc.params))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: tweet_volume %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRelatedKeywords: the co-terms of the keywords in the window's days,
// by co-occurrence weighted by rarity, without the keywords, the negatives
// and a hashtag's word.
func TestRelatedKeywords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"US", adstest.With(hourQuery(), "location", "US"), []string{"gopher", "code", "rare", "common", "rust"}},
		{"every country", hourQuery(), []string{"paris", "gopher", "code", "rare", "common", "rust"}},
		{"a negative keyword is no related one", adstest.With(hourQuery(), "location", "US", "negative_keywords", "rust"),
			[]string{"gopher", "code", "rare", "common"}},
		{"a hashtag's word is no related one", adstest.With(hourQuery(), "keywords", "#go"), []string{"gopher"}},
		{"another day", adstest.With(hourQuery(), "start_time", "2026-03-03T00:00:00Z", "end_time", "2026-03-03T05:00:00Z"), []string{}},
	}
	for _, tc := range cases {
		got, _ := result(t, f.alice.Get(t, searchPath, tc.params))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: related_keywords %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestEchoAndLog: request.params echoes the parsed query and the window
// answered; the answered query is logged with the caller, its lowest-id
// account of the listener and the size of the answer.
func TestEchoAndLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a1, a2 := f.alice.Account(t), f.alice.Account(t)
	lowest := min(a1.ID, a2.ID)
	if len(a1.ID) != len(a2.ID) {
		t.Fatalf("account ids of different lengths: %s %s", a1.ID, a2.ID)
	}
	f.alice.Sandbox().Account(t)
	r := f.alice.Get(t, searchPath, url.Values{"granularity": {"hour"}, "keywords": {"GO,#Go, go"}, "negative_keywords": {"Rust"},
		"location": {"us"}, "start_time": {"2026-03-02T10:15:00Z"}, "end_time": {"2026-03-02T14:00:00Z"}})
	related, volumes := result(t, r)
	got := params(t, r)
	want := map[string]any{"granularity": "HOUR", "keywords": []any{"go", "#go"}, "negative_keywords": []any{"rust"},
		"location": "US", "start_time": "2026-03-02T10:00:00Z", "end_time": "2026-03-02T14:00:00Z"}
	if len(got) != len(want) {
		t.Errorf("request.params %v, want %v", got, want)
	}
	for k, v := range want {
		if !equalJSON(got[k], v) {
			t.Errorf("request.params.%s = %v, want %v", k, got[k], v)
		}
	}
	if r.Header.Get("X-Rate-Limit-Limit") != "1000" {
		t.Errorf("x-rate-limit-limit %q, want 1000 (per user)", r.Header.Get("X-Rate-Limit-Limit"))
	}
	var total int64
	for _, v := range volumes {
		total += v
	}
	var (
		appID, userID             int64
		account, granularity, loc string
		keywords, negatives       []string
		start, end                time.Time
		buckets, relatedN         int
		volume                    int64
		durationMS                float64
	)
	f.s.Scan(t, `SELECT app_id, user_id, account_id, granularity, keywords, negative_keywords, location, start_time, end_time,
		buckets, related_keywords, total_volume, duration_ms FROM insight_queries`, nil,
		&appID, &userID, &account, &granularity, &keywords, &negatives, &loc, &start, &end, &buckets, &relatedN, &volume, &durationMS)
	if appID != f.s.App.ID || userID != f.alice.User.ID || account != lowest || granularity != "HOUR" ||
		!slices.Equal(keywords, []string{"go", "#go"}) || !slices.Equal(negatives, []string{"rust"}) || loc != "US" ||
		!start.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) || !end.Equal(time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)) ||
		buckets != len(volumes) || relatedN != len(related) || volume != total || durationMS <= 0 {
		t.Errorf("logged app %d user %d account %q %s %q %q %q %s..%s buckets %d related %d volume %d %.3fms; want app %d user %d account %q, volumes %v, related %d",
			appID, userID, account, granularity, keywords, negatives, loc, start, end, buckets, relatedN, volume, durationMS,
			f.s.App.ID, f.alice.User.ID, lowest, volumes, len(related))
	}

	// On the sandbox listener: the sandbox account; a user without an
	// account: none.
	sandbox := f.alice.Sandbox()
	result(t, sandbox.Get(t, searchPath, hourQuery()))
	bob := f.s.User(t, "bob")
	result(t, bob.Get(t, searchPath, hourQuery()))
	var sandboxAcct, bobAcct string
	f.s.Scan(t, `SELECT (SELECT account_id FROM insight_queries WHERE user_id = $1 ORDER BY id DESC LIMIT 1),
		(SELECT account_id FROM insight_queries WHERE user_id = $2)`, []any{f.alice.User.ID, bob.User.ID}, &sandboxAcct, &bobAcct)
	if sandboxAcct == "" || sandboxAcct == a1.ID || sandboxAcct == a2.ID || bobAcct != "" {
		t.Errorf("sandbox account %q (production %s, %s), bob's %q", sandboxAcct, a1.ID, a2.ID, bobAcct)
	}
}

func equalJSON(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok || bok {
		return aok && bok && slices.Equal(as, bs)
	}
	return a == b
}

// TestEndTimeDefaultsToNow: without end_time the window ends at the
// moment of the request, echoed to the second: its last bucket is the
// current hour so far, so posts of the current hour count (issue 23).
func TestEndTimeDefaultsToNow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hour := time.Now().UTC().Truncate(time.Hour)
	f.s.Exec(t, `INSERT INTO insight_term_hours (term, country_code, hour, posts) VALUES ('now', 'US', $1, 9), ('now', '*', $1, 9),
		('now', 'US', $2, 5), ('now', '*', $2, 5)`, hour.Add(-2*time.Hour), hour)
	for _, g := range []struct {
		granularity string
		want        []int64
	}{{"HOUR", []int64{0, 9, 0, 5}}, {"DAY", []int64{14}}} {
		before := time.Now().UTC().Truncate(time.Second)
		r := f.alice.Get(t, searchPath, url.Values{"granularity": {g.granularity}, "keywords": {"now"},
			"start_time": {hour.Add(-3 * time.Hour).Format(time.RFC3339)}})
		after := time.Now().UTC()
		_, volumes := result(t, r)
		echoed, err := time.Parse(time.RFC3339, params(t, r)["end_time"].(string))
		if err != nil || echoed.Before(before) || echoed.After(after) {
			t.Fatalf("%s: end_time %v (%v), want the moment of the request, between %s and %s", g.granularity, params(t, r)["end_time"], err, before, after)
		}
		if echoed.Truncate(time.Hour) != hour { // the hour turned meanwhile
			return
		}
		if !slices.Equal(volumes, g.want) {
			t.Errorf("%s: volumes %v, want %v (the current hour's posts in the last, partial bucket)", g.granularity, volumes, g.want)
		}
	}
	// An explicit end_time keeps its rule: truncated to the hour.
	r := f.alice.Get(t, searchPath, url.Values{"granularity": {"HOUR"}, "keywords": {"now"},
		"start_time": {hour.Add(-3 * time.Hour).Format(time.RFC3339)}, "end_time": {hour.Add(30 * time.Minute).Format(time.RFC3339)}})
	if _, volumes := result(t, r); params(t, r)["end_time"] != hour.Format(time.RFC3339) || !slices.Equal(volumes, []int64{0, 9, 0}) {
		t.Errorf("explicit end_time: echoed %v, volumes %v; want %s, [0 9 0]", params(t, r)["end_time"], volumes, hour.Format(time.RFC3339))
	}
}

// TestAnswersFromTheAggregatesOnly: posts not yet applied to the
// aggregates count nothing, and a failure to log the query does not fail
// the answer.
func TestAnswersFromTheAggregatesOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	author := factory.User(t, f.s.DB, nil)
	for range 3 {
		factory.Post(t, f.s.DB, &factory.PostOpts{Author: author, Text: "zebra crossing"})
	}
	now := time.Now().UTC()
	q := url.Values{"granularity": {"DAY"}, "keywords": {"zebra"}, "start_time": {now.Add(-24 * time.Hour).Format(time.RFC3339)},
		"end_time": {now.Add(time.Hour).Format(time.RFC3339)}}
	if _, volumes := result(t, f.alice.Get(t, searchPath, q)); slices.ContainsFunc(volumes, func(v int64) bool { return v != 0 }) {
		t.Fatalf("volumes %v before the aggregates hold the posts, want zeros", volumes)
	}
	f.s.Exec(t, `ALTER TABLE insight_queries RENAME TO insight_queries_gone`)
	_, volumes := result(t, f.alice.Get(t, searchPath, hourQuery()))
	if !slices.Equal(volumes, []int64{7, 1, 0, 4}) {
		t.Fatalf("volumes %v without the query log", volumes)
	}
}

// TestBearerTokensAreRefused: OAuth 1.0a user context only, like every ads
// endpoint.
func TestBearerTokensAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req, err := http.NewRequest(http.MethodGet, f.s.URL+searchPath+"?"+hourQuery().Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", f.s.Bearer)
	adstest.Send(t, req).Fails(t, http.StatusForbidden, "UNAUTHORIZED_ACCESS", "")
	if f.queries(t) != 0 {
		t.Fatal("a refused request was logged")
	}
}
