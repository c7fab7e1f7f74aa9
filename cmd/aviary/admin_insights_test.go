package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestAdminPlaceSet: `admin place set ID COUNTRY [NAME]` adds or replaces a
// place with an assigned ISO 3166-1 alpha-2 country.
func TestAdminPlaceSet(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	steps := []struct {
		args    []string
		wantErr string
	}{
		{args: []string{"01a9a39529b27f36", "fr", "Paris, France"}},
		{args: []string{"5a110d312052166f", "US"}},
		{args: []string{"01a9a39529b27f36", "FR", "Paris"}},
		{args: []string{"x1", "ZZ"}, wantErr: `country "ZZ"`},
		{args: []string{"x1", "UK"}, wantErr: `country "UK"`},
		{args: []string{"x1", "USA"}, wantErr: `country "USA"`},
		{args: []string{" ", "US"}, wantErr: "must not be blank"},
		{args: []string{"x1"}, wantErr: "want ID COUNTRY [NAME], got 1 arguments"},
		{args: []string{"x1", "US", "a", "b"}, wantErr: "want ID COUNTRY [NAME], got 4 arguments"},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, "place set", adsFlags(t, s.args...))
		if s.wantErr == "" && err != nil || s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)) {
			t.Fatalf("step %d %v: error %v, want %q", i, s.args, err, s.wantErr)
		}
		if err == nil && out.(map[string]any)["country_code"] != strings.ToUpper(s.args[1]) {
			t.Errorf("step %d %v printed %v", i, s.args, out)
		}
	}
	rows, _ := conn.Query(ctx, `SELECT id || ' ' || country_code || ' ' || full_name FROM places ORDER BY id`)
	places, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"01a9a39529b27f36 FR Paris", "5a110d312052166f US "}; strings.Join(places, "|") != strings.Join(want, "|") {
		t.Fatalf("places %q, want %q", places, want)
	}
}

// TestAdminInsightsQueries: `admin insights queries [--since D] [--limit N]`
// prints the logged queries newest first, one JSON object a line.
func TestAdminInsightsQueries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	for i, kw := range []string{"old", "go", "#rust"} {
		l := storage.InsightQueryLog{AppID: 1, UserID: int64(10 + i), AccountID: "acct", Granularity: "DAY", Keywords: []string{kw},
			NegativeKeywords: []string{"x"}, Location: "US", Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
			End: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Buckets: 1, RelatedKeywords: 30, TotalVolume: 15707, Duration: 2500 * time.Microsecond}
		if err := db.RecordInsightQuery(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE insight_queries SET created_at = now() - interval '2 days' WHERE keywords = '{old}'`); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []map[string]any {
		t.Helper()
		out, err := adminCommand(ctx, db, nil, "insights queries", adsFlags(t, args...))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lines, ok := out.(jsonLines)
		if !ok {
			t.Fatalf("%v: output %T, want lines", args, out)
		}
		var buf bytes.Buffer
		if err := lines.encode(json.NewEncoder(&buf)); err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		for line := range strings.Lines(buf.String()) {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			got = append(got, m)
		}
		return got
	}
	keywords := func(got []map[string]any) string {
		var kws []string
		for _, m := range got {
			kws = append(kws, m["keywords"].([]any)[0].(string))
		}
		return strings.Join(kws, " ")
	}
	if got := run(); keywords(got) != "#rust go" {
		t.Fatalf("last 24h: %v", got)
	} else if q := got[1]; q["user_id"] != "11" || q["account_id"] != "acct" || q["granularity"] != "DAY" || q["location"] != "US" ||
		q["start_time"] != "2026-03-01T00:00:00Z" || q["total_volume"] != float64(15707) || q["duration_ms"] != 2.5 {
		t.Errorf("printed %v", q)
	}
	if got := run("--since", "72h"); keywords(got) != "#rust go old" {
		t.Errorf("last 72h: %s", keywords(got))
	}
	if got := run("--since", "72h", "--limit", "1"); keywords(got) != "#rust" {
		t.Errorf("--limit 1: %s", keywords(got))
	}
	for _, args := range [][]string{{"--since", "0s"}, {"--limit", "0"}, {"extra"}} {
		if _, err := adminCommand(ctx, db, nil, "insights queries", adsFlags(t, args...)); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
