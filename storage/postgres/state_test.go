package postgres_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

var testBootstrap = postgres.Bootstrap{App: "state-demo", Username: "state_demo"}

// TestStateTablesClassified fails when a migration adds a table that reset
// and snapshots neither handle nor explicitly keep (storage/postgres/state.go).
func TestStateTablesClassified(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	tables, err := db.StateTables(t.Context())
	if err != nil {
		t.Fatalf("StateTables: %v", err)
	}
	if len(tables) < 50 || !slices.Contains(tables, "posts") {
		t.Fatalf("StateTables = %v, want the whole schema", tables)
	}
	if bad := postgres.UnclassifiedTables(tables); len(bad) > 0 {
		t.Errorf("tables neither reset nor kept: %v (classify them in stateTables)", bad)
	}
}

// stateFixture fills db with the bootstrap identity and other records of
// every surface.
type stateFixture struct {
	app       storage.App
	bearer    storage.BearerToken
	user      storage.User
	token     storage.AccessToken
	account   storage.AdAccount
	funding   string
	otherApp  storage.App
	otherUser storage.User
	post      storage.Post
	campaign  string
}

func newStateFixture(t *testing.T, db *postgres.DB) stateFixture {
	t.Helper()
	var f stateFixture
	f.app = factory.App(t, db, &factory.AppOpts{Name: testBootstrap.App})
	f.bearer = factory.BearerToken(t, db, f.app)
	f.user = factory.User(t, db, &factory.UserOpts{Username: testBootstrap.Username})
	f.token = factory.AccessToken(t, db, f.app, f.user, "read-write")
	f.account = factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &f.user})
	f.funding = factory.FundingInstrument(t, db, f.account.ID)
	_ = factory.Campaign(t, db, f.account.ID, f.funding) // the demo account's campaign goes
	f.otherApp = factory.App(t, db, nil)
	factory.BearerToken(t, db, f.otherApp)
	f.otherUser = factory.User(t, db, nil)
	f.post = factory.Post(t, db, &factory.PostOpts{Author: f.otherUser, App: f.otherApp, Text: "hello #state", Likes: 2})
	factory.Post(t, db, &factory.PostOpts{Author: f.user, App: f.app, Text: "demo post", InReplyTo: f.post})
	other := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &f.otherUser})
	_, f.campaign, _ = factory.AdsChain(t, db, other.ID)
	factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: f.otherApp})
	return f
}

func countRows(t *testing.T, db *postgres.DB, table string) int64 {
	t.Helper()
	var out bytes.Buffer
	if err := db.ExportState(t.Context(), &out); err != nil {
		t.Fatalf("ExportState: %v", err)
	}
	s, err := postgres.ReadSnapshot(&out)
	if err != nil {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	for _, tab := range s.Tables {
		if tab.Name == table {
			return int64(len(tab.Rows))
		}
	}
	t.Fatalf("table %s not in the snapshot", table)
	return 0
}

func TestResetStateKeepsBootstrap(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	f := newStateFixture(t, db)
	res, err := db.ResetState(ctx, testBootstrap, nil)
	if err != nil {
		t.Fatalf("ResetState: %v", err)
	}
	if !slices.Equal(res.Surfaces, postgres.Surfaces) || res.Removed["posts"] != 2 || res.Removed["campaigns"] != 2 {
		t.Errorf("ResetState = %+v, want every surface, 2 posts and 2 campaigns removed", res)
	}
	for table, want := range map[string]int64{"apps": 1, "users": 1, "bearer_tokens": 1, "access_tokens": 1, "ad_accounts": 1,
		"funding_instruments": 1, "posts": 0, "likes": 0, "campaigns": 0, "line_items": 0, "compliance_jobs": 0} {
		if got := countRows(t, db, table); got != want {
			t.Errorf("%s after reset: %d rows, want %d", table, got, want)
		}
	}
	app, err := db.AppByBearerToken(ctx, f.bearer.Token)
	if err != nil || app.ID != f.app.ID || app.ConsumerSecret != f.app.ConsumerSecret {
		t.Errorf("bootstrap bearer after reset: %+v, %v", app, err)
	}
	user, err := db.UserByID(ctx, f.user.ID)
	if err != nil || user.Username != f.user.Username {
		t.Errorf("bootstrap user after reset: %+v, %v", user, err)
	}
	if _, err := db.AppByID(ctx, f.otherApp.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("other app after reset: %v, want not found", err)
	}
	if _, err := db.PostByID(ctx, f.post.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("post after reset: %v, want not found", err)
	}
}

func TestResetStateOneSurface(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	f := newStateFixture(t, db)
	res, err := db.ResetState(ctx, testBootstrap, []string{postgres.SurfaceAds})
	if err != nil {
		t.Fatalf("ResetState ads: %v", err)
	}
	if !slices.Equal(res.Surfaces, []string{"ads"}) || res.Removed["ad_accounts"] != 1 || res.Removed["posts"] != 0 {
		t.Errorf("ResetState ads = %+v, want the other account removed and no posts", res)
	}
	if _, err := db.PostByID(ctx, f.post.ID); err != nil {
		t.Errorf("post after an ads reset: %v", err)
	}
	if got := countRows(t, db, "ad_accounts"); got != 1 {
		t.Errorf("ad accounts after an ads reset: %d, want the bootstrap one", got)
	}
	if _, err := db.ResetState(ctx, testBootstrap, []string{"bogus"}); err == nil || !strings.Contains(err.Error(), "unknown surface") {
		t.Errorf("ResetState bogus: %v, want unknown surface", err)
	}
}

// TestStateSnapshotRoundTrip exports, resets, imports and exports again:
// the two snapshots hold the same rows and sequences.
func TestStateSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	f := newStateFixture(t, db)
	var first bytes.Buffer
	if err := db.ExportState(ctx, &first); err != nil {
		t.Fatalf("ExportState: %v", err)
	}
	snap, err := postgres.ReadSnapshot(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	if _, err := db.ResetState(ctx, testBootstrap, nil); err != nil {
		t.Fatalf("ResetState: %v", err)
	}
	if err := db.ImportState(ctx, snap); err != nil {
		t.Fatalf("ImportState: %v", err)
	}
	var second bytes.Buffer
	if err := db.ExportState(ctx, &second); err != nil {
		t.Fatalf("ExportState again: %v", err)
	}
	again, err := postgres.ReadSnapshot(&second)
	if err != nil {
		t.Fatalf("ReadSnapshot again: %v", err)
	}
	if snap.SchemaVersion != again.SchemaVersion || len(snap.Tables) != len(again.Tables) {
		t.Fatalf("schema %d/%d, tables %d/%d", snap.SchemaVersion, again.SchemaVersion, len(snap.Tables), len(again.Tables))
	}
	for i, tab := range snap.Tables {
		a, b := mustJSON(t, tab), mustJSON(t, again.Tables[i])
		if a != b {
			t.Errorf("table %s differs after the round trip:\n%.2000s\n%.2000s", tab.Name, a, b)
		}
	}
	// Sequences come back where they stood, or stay further when the reset
	// drew from them (its triggers' insight changes): never backwards.
	if len(snap.Sequences) != len(again.Sequences) {
		t.Fatalf("sequences %v, then %v", snap.Sequences, again.Sequences)
	}
	for i, seq := range snap.Sequences {
		got := again.Sequences[i]
		switch {
		case seq.LastValue == nil:
		case got.LastValue == nil || *got.LastValue < *seq.LastValue:
			t.Errorf("sequence %s went back from %d to %v", seq.Name, *seq.LastValue, got.LastValue)
		case seq.Name == "aviary_id_seq" || seq.Name == "events_seq":
			if *got.LastValue != *seq.LastValue {
				t.Errorf("sequence %s: %d after the round trip, want %d", seq.Name, *got.LastValue, *seq.LastValue)
			}
		}
	}
	got, err := db.PostByID(ctx, f.post.ID)
	if err != nil || got.Text != f.post.Text || !got.CreatedAt.Equal(f.post.CreatedAt) || got.Metrics.Likes != 2 {
		t.Errorf("post after import: %+v, %v; want %+v", got, err, f.post)
	}
	if app, err := db.AppByBearerToken(ctx, f.bearer.Token); err != nil || app.ID != f.app.ID {
		t.Errorf("bootstrap bearer after import: %+v, %v", app, err)
	}
	// The next id continues past the imported ones.
	next := factory.Post(t, db, &factory.PostOpts{Author: f.otherUser})
	if next.ID <= f.post.ID {
		t.Errorf("post created after import has id %d, not past %d", next.ID, f.post.ID)
	}
}

func TestReadSnapshotRefusesNewer(t *testing.T) {
	t.Parallel()
	migrations, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	latest := migrations[len(migrations)-1].Version
	for _, tc := range []struct {
		name, body, want string
	}{
		{"newer schema", `{"format":"aviary-state","format_version":1,"schema_version":` + itoa(latest+1) + `}`, "written by a newer Aviary"},
		{"newer format", `{"format":"aviary-state","format_version":99,"schema_version":1}`, "format version 99 is not supported"},
		{"not a snapshot", `{"format":"other","format_version":1}`, "not an Aviary state snapshot"},
		{"not JSON", `nope`, "read snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.ReadSnapshot(strings.NewReader(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadSnapshot = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := postgres.ReadSnapshot(strings.NewReader(`{"format":"aviary-state","format_version":1,"schema_version":` + itoa(latest) + `}`)); err != nil {
		t.Errorf("ReadSnapshot of the current version: %v", err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
