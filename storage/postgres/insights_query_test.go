package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// termHour is a row of insight_term_hours.
type termHour struct {
	term, country, hour string
	posts               int
}

// termPair is a row of insight_term_pairs, or of insight_term_days when
// term and co are the same (a term's sampled posts).
type termPair struct {
	term, country, day, co string
	posts                  int
}

// insertInsightRows writes the rows as the applier counts them: in their
// country and worldwide ('*').
func insertInsightRows(t *testing.T, pool *pgxpool.Pool, hours []termHour, pairs []termPair) {
	t.Helper()
	ctx := context.Background()
	for _, h := range hours {
		if _, err := pool.Exec(ctx, `INSERT INTO insight_term_hours AS a (term, country_code, hour, posts) VALUES ($1, $2, $3, $4), ($1, '*', $3, $4)
			ON CONFLICT (term, country_code, hour) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
			h.term, h.country, mustTime(t, h.hour), h.posts); err != nil {
			t.Fatalf("insert %+v: %v", h, err)
		}
	}
	for _, p := range pairs {
		sql, args := `INSERT INTO insight_term_pairs AS a (term, country_code, day, co_term, posts)
			VALUES ($1, $2, $3::text::date, $4, $5), ($1, '*', $3::text::date, $4, $5)
			ON CONFLICT (term, country_code, day, co_term) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
			[]any{p.term, p.country, p.day, p.co, p.posts}
		if p.term == p.co { // a term's sampled posts
			sql, args = `INSERT INTO insight_term_days AS a (term, country_code, day, posts)
			VALUES ($1, $2, $3::text::date, $4), ($1, '*', $3::text::date, $4)
			ON CONFLICT (term, country_code, day) DO UPDATE SET posts = a.posts + EXCLUDED.posts`,
				[]any{p.term, p.country, p.day, p.posts}
		}
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("insert %+v: %v", p, err)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestKeywordVolumes: exact hourly counts per bucket (hours and days, the
// window's end exclusive, a partial last day), one country or all, and the
// overlap and negative factors from the sampled pairs of the window's days.
func TestKeywordVolumes(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	insertInsightRows(t, pool, []termHour{
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
		{"rust", "US", "2026-03-02T10:00:00Z", 10},
		{"rust", "US", "2026-03-02T12:00:00Z", 6},
		{"solo", "US", "2026-03-02T10:00:00Z", 3},
	}, []termPair{
		{"", "US", "2026-03-02", "", 50},
		{"", "FR", "2026-03-02", "", 10},
		{"rust", "US", "2026-03-02", "rust", 5},
		{"rust", "US", "2026-03-02", "go", 1},
		{"rust", "FR", "2026-03-02", "rust", 5},
		{"rust", "FR", "2026-03-02", "go", 5},
		{"rust", "US", "2026-03-05", "go", 100}, // another day
		{"go", "US", "2026-03-02", "go", 4},
		{"go", "US", "2026-03-02", "rust", 1},
		{"go", "US", "2026-03-02", "big", 4},
	})
	hour := func(kws, negs []string, country string) storage.InsightQuery {
		return storage.InsightQuery{Keywords: kws, NegativeKeywords: negs, CountryCode: country,
			Start: mustTime(t, "2026-03-02T10:00:00Z"), End: mustTime(t, "2026-03-02T14:00:00Z"), Granularity: time.Hour}
	}
	day := storage.InsightQuery{Keywords: []string{"go"}, Start: mustTime(t, "2026-03-01T00:00:00Z"),
		End: mustTime(t, "2026-03-03T12:00:00Z"), Granularity: 24 * time.Hour}
	dayUS := day
	dayUS.CountryCode = "US"
	empty := hour([]string{"go"}, nil, "")
	empty.End = empty.Start
	cases := []struct {
		name string
		q    storage.InsightQuery
		want []int64
	}{
		{"hours, every country", hour([]string{"go"}, nil, ""), []int64{7, 1, 0, 4}},
		{"hours, US", hour([]string{"go"}, nil, "US"), []int64{5, 0, 0, 4}},
		{"hours, FR", hour([]string{"go"}, nil, "FR"), []int64{2, 0, 0, 0}},
		{"hours, a country without posts", hour([]string{"go"}, nil, "DE"), []int64{0, 0, 0, 0}},
		{"days, partial last day", day, []int64{3, 162, 2}},
		{"days, US", dayUS, []int64{3, 159, 2}},
		{"a repeated keyword counts once", hour([]string{"go", "go"}, nil, "US"), []int64{5, 0, 0, 4}},
		// rust's overlap with go: US 1/5 (factor 0.8), every country 6/10 (0.4).
		{"overlap, US", hour([]string{"go", "rust"}, nil, "US"), []int64{13, 0, 5, 4}},
		{"overlap, every country", hour([]string{"go", "rust"}, nil, ""), []int64{11, 1, 2, 4}},
		// go first: rust's factor; rust first: go's, 1 - 1/4.
		{"overlap, other order", hour([]string{"rust", "go"}, nil, "US"), []int64{14, 0, 6, 3}},
		{"negative", hour([]string{"go"}, []string{"rust"}, "US"), []int64{4, 0, 0, 3}},
		{"negatives beyond the posts: zero", hour([]string{"go"}, []string{"rust", "big"}, "US"), []int64{0, 0, 0, 0}},
		{"no self pair: factor 1", hour([]string{"go", "solo"}, nil, "US"), []int64{8, 0, 0, 4}},
		{"unknown keyword", hour([]string{"nothing"}, nil, ""), []int64{0, 0, 0, 0}},
		{"empty window", empty, []int64{}},
	}
	for _, tc := range cases {
		got, err := db.KeywordVolumes(t.Context(), tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: volumes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRelatedKeywords: candidates by co-occurrence with the keywords in
// the window's days, the keywords, negatives, bare forms of hashtags and
// stopwords left out, scored c * ln(1 + N/df), ties by term; one country or
// all.
func TestRelatedKeywords(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	const d = "2026-03-02"
	insertInsightRows(t, pool, []termHour{{"", "US", "2026-03-02T10:00:00Z", 1}, {"", "FR", "2026-03-02T10:00:00Z", 1}}, []termPair{
		{"", "US", d, "", 1000},
		{"", "FR", d, "", 100},
		{"#go", "US", d, "#go", 60},
		{"#go", "US", d, "go", 50},
		{"#go", "US", d, "bad", 20},
		{"#go", "US", d, "the", 30},
		{"#go", "US", d, "gopher", 10},
		{"#go", "US", d, "code", 10},
		{"#go", "US", d, "rare", 3},
		{"#go", "US", d, "common", 12},
		{"#go", "US", d, "tie2", 5},
		{"#go", "US", d, "tie1", 5},
		{"#go", "US", "2026-03-03", "zzz", 1000}, // another day
		{"#go", "FR", d, "paris", 40},
		{"code", "US", d, "gopher", 30},
		{"code", "US", d, "#go", 10},
		{"gopher", "US", d, "gopher", 10},
		{"code", "US", d, "code", 100},
		{"rare", "US", d, "rare", 3},
		{"common", "US", d, "common", 1000},
		{"tie1", "US", d, "tie1", 50},
		{"tie2", "US", d, "tie2", 50},
		{"paris", "FR", d, "paris", 40},
	})
	q := func(kws, negs []string, country string) storage.InsightQuery {
		return storage.InsightQuery{Keywords: kws, NegativeKeywords: negs, CountryCode: country,
			Start: mustTime(t, d+"T00:00:00Z"), End: mustTime(t, "2026-03-03T00:00:00Z"), Granularity: time.Hour}
	}
	cases := []struct {
		name  string
		q     storage.InsightQuery
		limit int
		want  []string
	}{
		// US: gopher 10 ln(101), code 10 ln(11), rare 3 ln(334.3), tie1 = tie2 5 ln(21), common 12 ln(2).
		{"US", q([]string{"#go"}, []string{"bad"}, "US"), 30, []string{"gopher", "code", "rare", "tie1", "tie2", "common"}},
		{"limit", q([]string{"#go"}, []string{"bad"}, "US"), 3, []string{"gopher", "code", "rare"}},
		{"every country", q([]string{"#go"}, []string{"bad"}, ""), 30, []string{"paris", "gopher", "code", "rare", "tie1", "tie2", "common"}},
		{"FR", q([]string{"#go"}, nil, "FR"), 30, []string{"paris"}},
		{"without the negative", q([]string{"#go"}, nil, "US"), 2, []string{"bad", "gopher"}},
		{"two keywords", q([]string{"#go", "code"}, []string{"bad"}, "US"), 2, []string{"gopher", "rare"}},
		{"no pairs", q([]string{"nothing"}, nil, ""), 30, []string{}},
	}
	for _, tc := range cases {
		got, err := db.RelatedKeywords(t.Context(), tc.q, tc.limit)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: related %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestInsightQueryLog: recorded queries come back newest first, from since
// on, at most limit.
func TestInsightQueryLog(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	base := storage.InsightQueryLog{AppID: 7, UserID: 9, AccountID: "abc", Granularity: "HOUR", Keywords: []string{"go", "#go"},
		Location: "US", Start: mustTime(t, "2026-03-02T10:00:00Z"), End: mustTime(t, "2026-03-02T14:00:00Z"),
		Buckets: 4, RelatedKeywords: 30, TotalVolume: 12, Duration: 1500 * time.Microsecond}
	for i := range 3 {
		l := base
		l.TotalVolume = int64(i)
		if i == 1 {
			l.NegativeKeywords = []string{"rust"}
		}
		if err := db.RecordInsightQuery(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE insight_queries SET created_at = now() - interval '2 hours' WHERE total_volume = 0`); err != nil {
		t.Fatal(err)
	}
	got, err := db.InsightQueries(ctx, time.Now().Add(-time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].TotalVolume != 2 || got[1].TotalVolume != 1 {
		t.Fatalf("queries of the last hour %+v, want volumes 2 then 1", got)
	}
	g := got[1]
	if g.AppID != 7 || g.UserID != 9 || g.AccountID != "abc" || g.Granularity != "HOUR" || !slices.Equal(g.Keywords, base.Keywords) ||
		!slices.Equal(g.NegativeKeywords, []string{"rust"}) || g.Location != "US" || !g.Start.Equal(base.Start) ||
		!g.End.Equal(base.End) || g.Buckets != 4 || g.RelatedKeywords != 30 || g.Duration != base.Duration ||
		g.ID == 0 || g.CreatedAt.IsZero() {
		t.Errorf("stored %+v, recorded %+v", g, base)
	}
	if got[0].NegativeKeywords == nil || len(got[0].NegativeKeywords) != 0 {
		t.Errorf("negative keywords %#v, want empty", got[0].NegativeKeywords)
	}
	if got, _ := db.InsightQueries(ctx, time.Now().Add(-3*time.Hour), 1); len(got) != 1 || got[0].TotalVolume != 2 {
		t.Errorf("limit 1: %+v", got)
	}
	if got, _ := db.InsightQueries(ctx, time.Now().Add(-3*time.Hour), 0); len(got) != 3 {
		t.Errorf("default limit: %d queries, want 3", len(got))
	}
}

// TestLowestAdAccountFor: the live account of the listener's side with the
// lowest base-36 id that the user may use, or "".
func TestLowestAdAccountFor(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	u := factory.User(t, db, nil)
	other := factory.User(t, db, nil)
	if id, err := db.LowestAdAccountFor(ctx, u.ID, false); err != nil || id != "" {
		t.Fatalf("no account: %q, %v", id, err)
	}
	for _, a := range []struct {
		id, owner        string
		sandbox, deleted bool
		grant            bool
	}{
		{"a00000", "u", false, false, false},
		{"zzzzz", "other", false, false, true}, // granted, shorter: lower
		{"9", "u", false, true, false},         // deleted
		{"1", "u", true, false, false},         // sandbox
		{"2", "other", false, false, false},    // not granted
	} {
		owner := u.ID
		if a.owner == "other" {
			owner = other.ID
		}
		if _, err := pool.Exec(ctx, `INSERT INTO ad_accounts (id, name, user_id, sandbox, deleted) VALUES ($1, $1, $2, $3, $4)`,
			a.id, owner, a.sandbox, a.deleted); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO ad_account_users (account_id, user_id) VALUES ($1, $2)`, a.id, owner); err != nil {
			t.Fatal(err)
		}
		if a.grant {
			if err := db.GrantAdAccount(ctx, a.id, u.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if id, err := db.LowestAdAccountFor(ctx, u.ID, false); err != nil || id != "zzzzz" {
		t.Errorf("production: %q, %v; want zzzzz", id, err)
	}
	if id, err := db.LowestAdAccountFor(ctx, u.ID, true); err != nil || id != "1" {
		t.Errorf("sandbox: %q, %v; want 1", id, err)
	}
}
