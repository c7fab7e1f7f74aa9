package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// t0 is a fixed instant used wherever a test chooses a time itself.
var t0 = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t) // already migrated once
	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if len(applied) != 0 {
		t.Errorf("second Migrate applied %v, want nothing", applied)
	}
}

func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := storagetest.NewDatabaseURL(t)
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatalf("Migrations: %v", err)
	}
	if len(all) == 0 {
		t.Fatal("no embedded migrations")
	}
	const n = 2
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(db.Close)
		dbs[i] = db
	}
	applied := make([][]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Go(func() { applied[i], errs[i] = db.Migrate(ctx) })
	}
	wg.Wait()
	var names []string
	for i := range n {
		if errs[i] != nil {
			t.Errorf("concurrent Migrate %d: %v", i, errs[i])
		}
		names = append(names, applied[i]...)
	}
	// Every migration is applied exactly once, by one of the two.
	slices.Sort(names)
	var want []string
	for _, m := range all {
		want = append(want, m.Name)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("migrations applied across both runs = %v, want each of %v exactly once", names, want)
	}
	again, err := dbs[0].Migrate(ctx)
	if err != nil || len(again) != 0 {
		t.Errorf("Migrate after concurrent runs = %v, %v; want nothing applied", again, err)
	}
	if _, err := dbs[1].NextID(ctx); err != nil {
		t.Errorf("NextID on migrated database: %v", err)
	}
}

func TestNextID(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	before := time.Now()
	var prev int64
	for i := range 1000 {
		id, err := db.NextID(ctx)
		if err != nil {
			t.Fatalf("NextID #%d: %v", i, err)
		}
		if id <= 0 {
			t.Fatalf("NextID #%d = %d, want positive", i, id)
		}
		if id <= prev {
			t.Fatalf("NextID #%d = %d, not greater than previous %d", i, id, prev)
		}
		prev = id
		if i%100 == 0 {
			checkIDTime(t, id, before, time.Now())
		}
	}
	checkIDTime(t, prev, before, time.Now())
}

// checkIDTime checks that the time encoded in id lies in [from, to], with a
// few seconds' slack for clock differences between PostgreSQL and the test.
func checkIDTime(t *testing.T, id int64, from, to time.Time) {
	t.Helper()
	const slack = 5 * time.Second
	got := ids.Time(id)
	if got.Before(from.Add(-slack)) || got.After(to.Add(slack)) {
		t.Errorf("ids.Time(%d) = %v, want between %v and %v", id, got, from, to)
	}
}

// --- identity ---------------------------------------------------------------

// Records a test only needs come from storagetest/factory; each test calls
// the method it is about itself (createApp, CreateUser and CreatePost below
// stay direct calls because their results are what is checked).

func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want errors.Is %v", what, err, target)
	}
}

func TestApps(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := createApp(t, db, "birdwatch")
	if app.ID <= 0 || app.Name != "birdwatch" || app.CallbackURL != "https://example.com/cb" {
		t.Errorf("CreateApp = %+v", app)
	}
	if len(app.ConsumerKey) != 25 || len(app.ConsumerSecret) != 50 {
		t.Errorf("consumer key/secret lengths = %d/%d, want 25/50", len(app.ConsumerKey), len(app.ConsumerSecret))
	}
	other := createApp(t, db, "nestcam")
	if other.ConsumerKey == app.ConsumerKey {
		t.Error("two apps got the same consumer key")
	}

	_, err := db.CreateApp(ctx, "birdwatch", "")
	wantErrIs(t, "CreateApp with a taken name", err, storage.ErrConflict)

	tests := []struct {
		name    string
		load    func() (storage.App, error)
		wantID  int64
		wantErr error
	}{
		{"by name", func() (storage.App, error) { return db.AppByName(ctx, "nestcam") }, other.ID, nil},
		{"by unknown name", func() (storage.App, error) { return db.AppByName(ctx, "nope") }, 0, storage.ErrNotFound},
		{"by consumer key", func() (storage.App, error) { return db.AppByConsumerKey(ctx, app.ConsumerKey) }, app.ID, nil},
		{"by unknown consumer key", func() (storage.App, error) { return db.AppByConsumerKey(ctx, "nope") }, 0, storage.ErrNotFound},
		{"by consumer secret as key", func() (storage.App, error) { return db.AppByConsumerKey(ctx, app.ConsumerSecret) }, 0, storage.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.load()
			if tt.wantErr != nil {
				wantErrIs(t, "load", err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got.ID != tt.wantID {
				t.Errorf("loaded app %d, want %d", got.ID, tt.wantID)
			}
		})
	}
}

// createApp calls CreateApp, which TestApps tests, with a callback URL.
func createApp(t *testing.T, db *postgres.DB, name string) storage.App {
	t.Helper()
	app, err := db.CreateApp(t.Context(), name, "https://example.com/cb")
	if err != nil {
		t.Fatalf("CreateApp %s: %v", name, err)
	}
	return app
}

func TestBearerTokens(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	first, err := db.CreateBearerToken(ctx, app.ID)
	if err != nil {
		t.Fatalf("CreateBearerToken: %v", err)
	}
	second, err := db.CreateBearerToken(ctx, app.ID)
	if err != nil {
		t.Fatalf("CreateBearerToken: %v", err)
	}
	otherTok, err := db.CreateBearerToken(ctx, other.ID)
	if err != nil {
		t.Fatalf("CreateBearerToken: %v", err)
	}
	if first.Token == second.Token {
		t.Fatal("two bearer tokens are equal")
	}
	if err := db.RevokeBearerToken(ctx, first.Token); err != nil {
		t.Fatalf("RevokeBearerToken: %v", err)
	}
	wantErrIs(t, "revoking twice", db.RevokeBearerToken(ctx, first.Token), storage.ErrNotFound)
	wantErrIs(t, "revoking unknown", db.RevokeBearerToken(ctx, "nope"), storage.ErrNotFound)

	tests := []struct {
		name    string
		token   string
		wantApp int64
		wantErr error
	}{
		{"revoked", first.Token, 0, storage.ErrNotFound},
		{"live", second.Token, app.ID, nil},
		{"other app", otherTok.Token, other.ID, nil},
		{"unknown", "AAAAAAAAAAAAAAAAAAAAAnope", 0, storage.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.AppByBearerToken(ctx, tt.token)
			if tt.wantErr != nil {
				wantErrIs(t, "AppByBearerToken", err, tt.wantErr)
				return
			}
			if err != nil || got.ID != tt.wantApp {
				t.Errorf("AppByBearerToken = app %d, %v; want app %d", got.ID, err, tt.wantApp)
			}
		})
	}
	// The revoked token no longer counts as the app's first token.
	got, err := db.FirstBearerToken(ctx, app.ID)
	if err != nil || got.Token != second.Token {
		t.Errorf("FirstBearerToken = %q, %v; want %q", got.Token, err, second.Token)
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, err := db.CreateUser(ctx, "Alice", "Name of Alice")
	if err != nil {
		t.Fatalf("CreateUser Alice: %v", err)
	}
	if alice.ID <= 0 || alice.Username != "Alice" || alice.ProtectedAt != nil || alice.DeletedAt != nil {
		t.Errorf("CreateUser = %+v", alice)
	}
	for _, name := range []string{"Alice", "alice", "ALICE"} {
		_, err := db.CreateUser(ctx, name, "")
		wantErrIs(t, "CreateUser "+name, err, storage.ErrConflict)
	}
	got, err := db.UserByUsername(ctx, "aLiCe")
	if err != nil || got.ID != alice.ID {
		t.Errorf("UserByUsername(aLiCe) = %d, %v; want %d", got.ID, err, alice.ID)
	}
	got, err = db.UserByID(ctx, alice.ID)
	if err != nil || got.Username != "Alice" {
		t.Errorf("UserByID = %+v, %v", got, err)
	}
	_, err = db.UserByID(ctx, alice.ID+1)
	wantErrIs(t, "UserByID unknown", err, storage.ErrNotFound)
	_, err = db.UserByUsername(ctx, "bob")
	wantErrIs(t, "UserByUsername unknown", err, storage.ErrNotFound)
}

func TestAccessTokens(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	alice := factory.User(t, db, nil)

	tok, err := db.EnsureAccessToken(ctx, app.ID, alice.ID, "read")
	if err != nil {
		t.Fatalf("EnsureAccessToken: %v", err)
	}
	if tok.AppID != app.ID || tok.UserID != alice.ID || tok.AccessLevel != "read" || tok.Secret == "" {
		t.Errorf("EnsureAccessToken = %+v", tok)
	}
	if want := ids.Format(alice.ID) + "-"; len(tok.Token) <= len(want) || tok.Token[:len(want)] != want {
		t.Errorf("token %q does not start with the user id", tok.Token)
	}
	again, err := db.EnsureAccessToken(ctx, app.ID, alice.ID, "read-write")
	if err != nil || again != tok {
		t.Errorf("second EnsureAccessToken = %+v, %v; want the same token %+v", again, err, tok)
	}
	otherTok, err := db.EnsureAccessToken(ctx, other.ID, alice.ID, "read-write")
	if err != nil || otherTok.Token == tok.Token {
		t.Errorf("EnsureAccessToken for another app = %+v, %v; want a distinct token", otherTok, err)
	}
	loaded, err := db.AccessToken(ctx, tok.Token)
	if err != nil || loaded != tok {
		t.Errorf("AccessToken = %+v, %v; want %+v", loaded, err, tok)
	}

	if err := db.RevokeAccessToken(ctx, tok.Token); err != nil {
		t.Fatalf("RevokeAccessToken: %v", err)
	}
	_, err = db.AccessToken(ctx, tok.Token)
	wantErrIs(t, "AccessToken after revoke", err, storage.ErrNotFound)
	wantErrIs(t, "revoking twice", db.RevokeAccessToken(ctx, tok.Token), storage.ErrNotFound)
	_, err = db.AccessToken(ctx, "nope")
	wantErrIs(t, "AccessToken unknown", err, storage.ErrNotFound)
	if _, err := db.AccessToken(ctx, otherTok.Token); err != nil {
		t.Errorf("the other app's token was affected by the revoke: %v", err)
	}

	// After a revoke, Ensure issues a fresh token with the requested level.
	fresh, err := db.EnsureAccessToken(ctx, app.ID, alice.ID, "read-write")
	if err != nil {
		t.Fatalf("EnsureAccessToken after revoke: %v", err)
	}
	if fresh.Token == tok.Token || fresh.AccessLevel != "read-write" {
		t.Errorf("EnsureAccessToken after revoke = %+v; want a new read-write token", fresh)
	}
	if _, err := db.AccessToken(ctx, fresh.Token); err != nil {
		t.Errorf("AccessToken(fresh): %v", err)
	}
}

func TestSetUserState(t *testing.T) {
	t.Parallel()
	t1 := t0.Add(time.Hour)
	type stamps struct{ protected, suspended, deactivated, deleted *time.Time }
	tests := []struct {
		state string
		setup []string // applied at t0 before state is applied at t1
		want  stamps
	}{
		{state: "active", setup: []string{"protected", "suspended", "deactivated"}, want: stamps{}},
		// "active" restores an account but never undoes a deletion.
		{state: "active", setup: []string{"protected", "deleted"}, want: stamps{deleted: &t0}},
		{state: "protected", want: stamps{protected: &t1}},
		{state: "protected", setup: []string{"protected"}, want: stamps{protected: &t0}},
		{state: "unprotected", setup: []string{"protected", "suspended"}, want: stamps{suspended: &t0}},
		{state: "suspended", setup: []string{"protected"}, want: stamps{protected: &t0, suspended: &t1}},
		{state: "suspended", setup: []string{"suspended"}, want: stamps{suspended: &t0}}, // keeps the first time
		{state: "unsuspended", setup: []string{"protected", "suspended"}, want: stamps{protected: &t0}},
		{state: "deactivated", want: stamps{deactivated: &t1}},
		{state: "deactivated", setup: []string{"deactivated"}, want: stamps{deactivated: &t0}},
		{state: "reactivated", setup: []string{"deactivated", "protected"}, want: stamps{protected: &t0}},
		{state: "deleted", setup: []string{"protected"}, want: stamps{protected: &t0, deleted: &t1}},
		{state: "deleted", setup: []string{"deleted"}, want: stamps{deleted: &t0}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.state] = true
	}
	for _, s := range storage.UserStates {
		if !covered[s] {
			t.Errorf("state %q of storage.UserStates has no test case", s)
		}
	}

	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s after %v", tt.state, tt.setup), func(t *testing.T) {
			u := factory.User(t, db, nil)
			for _, s := range tt.setup {
				if _, err := db.SetUserState(ctx, u.ID, s, t0); err != nil {
					t.Fatalf("setup SetUserState %s: %v", s, err)
				}
			}
			got, err := db.SetUserState(ctx, u.ID, tt.state, t1)
			if err != nil {
				t.Fatalf("SetUserState %s: %v", tt.state, err)
			}
			loaded, err := db.UserByID(ctx, u.ID)
			if err != nil {
				t.Fatalf("UserByID: %v", err)
			}
			for _, v := range []struct {
				name string
				user storage.User
			}{{"returned", got}, {"stored", loaded}} {
				checkStamp(t, v.name+" protected_at", v.user.ProtectedAt, tt.want.protected)
				checkStamp(t, v.name+" suspended_at", v.user.SuspendedAt, tt.want.suspended)
				checkStamp(t, v.name+" deactivated_at", v.user.DeactivatedAt, tt.want.deactivated)
				checkStamp(t, v.name+" deleted_at", v.user.DeletedAt, tt.want.deleted)
			}
		})
	}

	t.Run("unknown state", func(t *testing.T) {
		u := factory.User(t, db, nil)
		if _, err := db.SetUserState(ctx, u.ID, "banished", t1); err == nil {
			t.Error("SetUserState with an unknown state succeeded")
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		_, err := db.SetUserState(ctx, 42, "protected", t1)
		wantErrIs(t, "SetUserState unknown user", err, storage.ErrNotFound)
	})
}

func checkStamp(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %v, want NULL", what, *got)
	case want != nil && got == nil:
		t.Errorf("%s = NULL, want %v", what, *want)
	case want != nil && !got.Equal(*want):
		t.Errorf("%s = %v, want %v", what, *got, *want)
	}
}

func TestEnsureAdAccount(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	bob := factory.User(t, db, nil)
	base36 := regexp.MustCompile(`^[0-9a-z]+$`)

	first, err := db.EnsureAdAccount(ctx, alice.ID, "Alice ads")
	if err != nil {
		t.Fatalf("EnsureAdAccount: %v", err)
	}
	if !base36.MatchString(first.ID) {
		t.Errorf("ad account id %q is not base-36", first.ID)
	}
	if first.UserID != alice.ID || first.Name != "Alice ads" || first.Deleted {
		t.Errorf("EnsureAdAccount = %+v", first)
	}
	again, err := db.EnsureAdAccount(ctx, alice.ID, "Another name")
	if err != nil || again.ID != first.ID || again.Name != "Alice ads" {
		t.Errorf("second EnsureAdAccount = %+v, %v; want the existing account %s", again, err, first.ID)
	}
	bobs, err := db.EnsureAdAccount(ctx, bob.ID, "Bob ads")
	if err != nil || bobs.ID == first.ID || bobs.UserID != bob.ID || !base36.MatchString(bobs.ID) {
		t.Errorf("EnsureAdAccount(bob) = %+v, %v; want a separate account", bobs, err)
	}
}

// TestEnsureConcurrently runs each Ensure* from 8 goroutines at once: all
// must get the same record (bootstrap may run from several processes).
func TestEnsureConcurrently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	token := func(level string) func(int64) (string, error) {
		return func(user int64) (string, error) {
			tok, err := db.EnsureAccessToken(ctx, app.ID, user, level)
			return fmt.Sprintf("%s %s %s %d", tok.Token, tok.Secret, tok.AccessLevel, tok.UserID), err
		}
	}
	adAccount := func(user int64) (string, error) {
		a, err := db.EnsureAdAccount(ctx, user, "Ads")
		return fmt.Sprintf("%s %d", a.ID, a.UserID), err
	}
	revoked := func(t *testing.T, user int64) string {
		tok, err := db.EnsureAccessToken(ctx, app.ID, user, "read")
		if err != nil {
			t.Fatalf("EnsureAccessToken: %v", err)
		}
		if err := db.RevokeAccessToken(ctx, tok.Token); err != nil {
			t.Fatalf("RevokeAccessToken: %v", err)
		}
		return tok.Token
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, user int64) string // returns a value no result may contain
		ensure  func(user int64) (string, error)
		want    string // a part of every result
	}{
		{"access token, none yet", nil, token("read-write"), " read-write "},
		{"access token replacing a revoked one", revoked, token("read-write"), " read-write "},
		{"ad account, none yet", nil, adAccount, " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := factory.User(t, db, nil)
			gone := "\x00never"
			if tt.prepare != nil {
				gone = tt.prepare(t, user.ID)
			}
			const n = 8
			results := make([]string, n)
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for g := range n {
				wg.Go(func() {
					<-start
					results[g], errs[g] = tt.ensure(user.ID)
				})
			}
			close(start)
			wg.Wait()
			for g := range n {
				if errs[g] != nil {
					t.Fatalf("call %d: %v", g, errs[g])
				}
				if results[g] != results[0] {
					t.Errorf("call %d got %q, call 0 got %q", g, results[g], results[0])
				}
			}
			if again, err := tt.ensure(user.ID); err != nil || again != results[0] {
				t.Errorf("a later call got %q, %v; want %q", again, err, results[0])
			}
			if !strings.Contains(results[0], tt.want) || !strings.HasSuffix(results[0], fmt.Sprintf(" %d", user.ID)) {
				t.Errorf("result %q: want %q in it and user %d", results[0], tt.want, user.ID)
			}
			if strings.Contains(results[0], gone) {
				t.Errorf("result %q still holds the revoked token", results[0])
			}
		})
	}
}

// --- posts ------------------------------------------------------------------

func TestPosts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, nil)

	withApp, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, AppID: app.ID, Text: "hello", PaidPartnership: true})
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	if withApp.ID <= 0 || withApp.AuthorID != alice.ID || withApp.AppID != app.ID || withApp.Text != "hello" ||
		!withApp.PaidPartnership || withApp.DeletedAt != nil || withApp.CreatedAt.IsZero() {
		t.Errorf("CreatePost = %+v", withApp)
	}
	noApp, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "no app"})
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	if noApp.AppID != 0 || noApp.ID <= withApp.ID {
		t.Errorf("CreatePost without app = %+v (previous id %d)", noApp, withApp.ID)
	}
	_, err = db.CreatePost(ctx, storage.Post{AuthorID: alice.ID + 12345, Text: "ghost"})
	if err == nil {
		t.Error("CreatePost for an unknown author succeeded")
	}

	got, err := db.PostByID(ctx, withApp.ID)
	if err != nil || !reflect.DeepEqual(got, withApp) {
		t.Errorf("PostByID = %+v, %v; want %+v", got, err, withApp)
	}
	_, err = db.PostByID(ctx, noApp.ID+1000)
	wantErrIs(t, "PostByID unknown", err, storage.ErrNotFound)

	deleted, err := db.DeletePost(ctx, noApp.ID, t0)
	if err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	checkStamp(t, "deleted post deleted_at", deleted.DeletedAt, &t0)
	_, err = db.DeletePost(ctx, noApp.ID, t0.Add(time.Hour))
	wantErrIs(t, "DeletePost twice", err, storage.ErrNotFound)
	_, err = db.DeletePost(ctx, noApp.ID+1000, t0)
	wantErrIs(t, "DeletePost unknown", err, storage.ErrNotFound)
	got, err = db.PostByID(ctx, noApp.ID)
	if err != nil {
		t.Fatalf("PostByID deleted: %v", err)
	}
	checkStamp(t, "reloaded deleted_at (first delete wins)", got.DeletedAt, &t0)
}

func TestPostStatusesAndUsersByIDs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice"})
	bob := factory.User(t, db, &factory.UserOpts{Username: "bob", SuspendedAt: &t0})
	live := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "live"})
	gone := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "gone", DeletedAt: &t0})
	bobs := factory.Post(t, db, &factory.PostOpts{Author: bob, Text: "bob's"})
	unknown := bobs.ID + 1000

	statuses, err := db.PostStatuses(ctx, []int64{unknown, bobs.ID, live.ID, gone.ID, live.ID})
	if err != nil {
		t.Fatalf("PostStatuses: %v", err)
	}
	byID := map[int64]storage.PostStatus{}
	for _, s := range statuses {
		byID[s.ID] = s
	}
	if len(statuses) != 3 || len(byID) != 3 {
		t.Fatalf("PostStatuses returned %d rows (%d distinct), want the 3 known posts: %+v", len(statuses), len(byID), statuses)
	}
	if _, ok := byID[unknown]; ok {
		t.Error("PostStatuses returned the unknown id")
	}
	tests := []struct {
		post       storage.Post
		author     int64
		deleted    *time.Time
		suspended  *time.Time
		wantAuthor string
	}{
		{live, alice.ID, nil, nil, "alice"},
		{gone, alice.ID, &t0, nil, "alice"},
		{bobs, bob.ID, nil, &t0, "bob"},
	}
	for _, tt := range tests {
		s, ok := byID[tt.post.ID]
		if !ok {
			t.Errorf("post %q missing from PostStatuses", tt.post.Text)
			continue
		}
		if s.Author.ID != tt.author || s.Author.Username != tt.wantAuthor || !s.CreatedAt.Equal(tt.post.CreatedAt) {
			t.Errorf("status of %q = %+v", tt.post.Text, s)
		}
		checkStamp(t, tt.post.Text+" deleted_at", s.DeletedAt, tt.deleted)
		checkStamp(t, tt.post.Text+" author suspended_at", s.Author.SuspendedAt, tt.suspended)
	}

	empty, err := db.PostStatuses(ctx, []int64{unknown})
	if err != nil || len(empty) != 0 {
		t.Errorf("PostStatuses(unknown) = %v, %v; want none", empty, err)
	}

	users, err := db.UsersByIDs(ctx, []int64{bob.ID, unknown, alice.ID})
	if err != nil {
		t.Fatalf("UsersByIDs: %v", err)
	}
	got := map[int64]storage.User{}
	for _, u := range users {
		got[u.ID] = u
	}
	if len(users) != 2 || got[alice.ID].Username != "alice" || got[bob.ID].Username != "bob" {
		t.Errorf("UsersByIDs = %+v; want alice and bob", users)
	}
	checkStamp(t, "bob suspended_at", got[bob.ID].SuspendedAt, &t0)
}

// --- compliance -------------------------------------------------------------

// jobRecord builds the record the API would create for a new job.
func jobRecord(ctx context.Context, db *postgres.DB, appID int64, typ string) (storage.ComplianceJob, error) {
	id, err := db.NextID(ctx)
	if err != nil {
		return storage.ComplianceJob{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	up, res := storage.ComplianceUploadKey(appID, id), storage.ComplianceResultKey(appID, id)
	return storage.ComplianceJob{
		ID: id, AppID: appID, Type: typ, Name: "job " + ids.Format(id),
		UploadKey: up, ResultKey: res, UploadURL: "http://127.0.0.1/blobs/" + up, DownloadURL: "http://127.0.0.1/blobs/" + res,
		UploadExpiresAt: now.Add(storage.ComplianceUploadURLTTL), DownloadExpiresAt: now.Add(storage.ComplianceDownloadURLTTL), CreatedAt: now,
	}, nil
}

// newJob records a created job of app (as the API does, see
// factory.ComplianceJob).
func newJob(t *testing.T, db *postgres.DB, app storage.App, typ string) storage.ComplianceJob {
	t.Helper()
	return factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: typ})
}

func startJob(t *testing.T, db *postgres.DB, id int64, at time.Time) storage.ComplianceJob {
	t.Helper()
	j, started, err := db.StartComplianceJob(t.Context(), id, at)
	if err != nil || !started {
		t.Fatalf("StartComplianceJob(%d) = started %v, %v", id, started, err)
	}
	return j
}

func jobIDs(jobs []storage.ComplianceJob) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func TestCreateComplianceJob(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	rec, err := jobRecord(ctx, db, app.ID, storage.ComplianceTypeTweets)
	if err != nil {
		t.Fatal(err)
	}
	rec.Resumable = true
	created, err := db.CreateComplianceJob(ctx, rec)
	if err != nil {
		t.Fatalf("CreateComplianceJob: %v", err)
	}
	if created.ID != rec.ID || created.AppID != app.ID || created.Type != rec.Type || created.Name != rec.Name ||
		!created.Resumable || created.Status != storage.JobCreated || created.UploadKey != rec.UploadKey ||
		created.ResultKey != rec.ResultKey || created.UploadURL != rec.UploadURL || created.DownloadURL != rec.DownloadURL ||
		!created.UploadExpiresAt.Equal(rec.UploadExpiresAt) || !created.DownloadExpiresAt.Equal(rec.DownloadExpiresAt) ||
		!created.CreatedAt.Equal(rec.CreatedAt) || !created.UpdatedAt.Equal(rec.CreatedAt) ||
		created.EnqueuedAt != nil || created.StartedAt != nil || created.Attempts != 0 || created.FailureReason != "" {
		t.Errorf("CreateComplianceJob = %+v, from %+v", created, rec)
	}
	_, err = db.CreateComplianceJob(ctx, rec)
	wantErrIs(t, "CreateComplianceJob with a taken id", err, storage.ErrConflict)

	got, err := db.AppComplianceJob(ctx, app.ID, rec.ID)
	if err != nil || describeJob(got) != describeJob(jobView(created)) {
		t.Errorf("AppComplianceJob = %+v, %v; want %+v", got, err, jobView(created))
	}
	_, err = db.AppComplianceJob(ctx, other.ID, rec.ID)
	wantErrIs(t, "AppComplianceJob of another app", err, storage.ErrNotFound)
	_, err = db.AppComplianceJob(ctx, app.ID, rec.ID+1)
	wantErrIs(t, "AppComplianceJob unknown", err, storage.ErrNotFound)
	if got, err := db.ComplianceJob(ctx, rec.ID); err != nil || describeJob(got) != describeJob(created) {
		t.Errorf("ComplianceJob = %+v, %v", got, err)
	}
	_, err = db.ComplianceJob(ctx, rec.ID+1)
	wantErrIs(t, "ComplianceJob unknown", err, storage.ErrNotFound)
}

func TestListComplianceJobs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	tw1 := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeTweets,
		Status: storage.JobFailed, FailureReason: "boom", CompletedAt: t0})
	us1 := newJob(t, db, app, storage.ComplianceTypeUsers)
	tw2 := newJob(t, db, app, storage.ComplianceTypeTweets)
	newJob(t, db, other, storage.ComplianceTypeTweets)
	tw3 := newJob(t, db, app, storage.ComplianceTypeTweets)
	startJob(t, db, tw2.ID, t0) // only now: a job in progress blocks creating tw3

	tests := []struct {
		name   string
		filter storage.ComplianceFilter
		want   []int64
	}{
		{"tweets newest first", storage.ComplianceFilter{AppID: app.ID, Type: "tweets"}, []int64{tw3.ID, tw2.ID, tw1.ID}},
		{"users", storage.ComplianceFilter{AppID: app.ID, Type: "users"}, []int64{us1.ID}},
		{"created", storage.ComplianceFilter{AppID: app.ID, Type: "tweets", Status: storage.JobCreated}, []int64{tw3.ID}},
		{"in progress", storage.ComplianceFilter{AppID: app.ID, Type: "tweets", Status: storage.JobInProgress}, []int64{tw2.ID}},
		{"failed", storage.ComplianceFilter{AppID: app.ID, Type: "tweets", Status: storage.JobFailed}, []int64{tw1.ID}},
		{"complete", storage.ComplianceFilter{AppID: app.ID, Type: "tweets", Status: storage.JobComplete}, nil},
		{"limit", storage.ComplianceFilter{AppID: app.ID, Type: "tweets", Limit: 2}, []int64{tw3.ID, tw2.ID}},
		{"other app's users", storage.ComplianceFilter{AppID: other.ID, Type: "users"}, nil},
		{"unknown app", storage.ComplianceFilter{AppID: 1, Type: "tweets"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, err := db.ListComplianceJobs(ctx, tt.filter)
			if err != nil {
				t.Fatalf("ListComplianceJobs: %v", err)
			}
			if got := jobIDs(jobs); !slices.Equal(got, tt.want) {
				t.Errorf("ListComplianceJobs(%+v) = %v, want %v", tt.filter, got, tt.want)
			}
			for _, j := range jobs {
				if j.AppID != tt.filter.AppID {
					t.Errorf("listed job %d of app %d", j.ID, j.AppID)
				}
			}
		})
	}
}

func TestCreateComplianceJobConflict(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	queued := newJob(t, db, app, storage.ComplianceTypeTweets)
	// A created (not yet started) job does not block another one.
	waiting := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeTweets,
		Status: storage.JobInProgress, StartedAt: t0})

	tests := []struct {
		name    string
		appID   int64
		typ     string
		wantErr error
	}{
		{"same app and type", app.ID, storage.ComplianceTypeTweets, storage.ErrConflict},
		{"other type", app.ID, storage.ComplianceTypeUsers, nil},
		{"other app", other.ID, storage.ComplianceTypeTweets, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := jobRecord(ctx, db, tt.appID, tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.CreateComplianceJob(ctx, rec)
			if tt.wantErr != nil {
				wantErrIs(t, "CreateComplianceJob", err, tt.wantErr)
				if _, err := db.ComplianceJob(ctx, rec.ID); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("rejected job was stored anyway (load: %v)", err)
				}
			} else if err != nil {
				t.Errorf("CreateComplianceJob: %v", err)
			}
		})
	}

	// Once the running job finishes, the app may create jobs of that type again.
	if err := db.CompleteComplianceJob(ctx, waiting.ID, storage.ComplianceProgress{}, t0); err != nil {
		t.Fatal(err)
	}
	newJob(t, db, app, storage.ComplianceTypeTweets)
	// Starting the other queued job blocks creation again.
	startJob(t, db, queued.ID, t0)
	rec, err := jobRecord(ctx, db, app.ID, storage.ComplianceTypeTweets)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.CreateComplianceJob(ctx, rec)
	wantErrIs(t, "CreateComplianceJob after a second start", err, storage.ErrConflict)
}

func TestCreateComplianceJobConflictConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	running := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeUsers,
		Status: storage.JobInProgress, StartedAt: t0})

	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec, err := jobRecord(ctx, db, app.ID, storage.ComplianceTypeUsers)
			if err == nil {
				_, err = db.CreateComplianceJob(ctx, rec)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		wantErrIs(t, fmt.Sprintf("concurrent create %d", i), err, storage.ErrConflict)
	}
	jobs, err := db.ListComplianceJobs(ctx, storage.ComplianceFilter{AppID: app.ID, Type: storage.ComplianceTypeUsers})
	if err != nil {
		t.Fatal(err)
	}
	if got := jobIDs(jobs); !slices.Equal(got, []int64{running.ID}) {
		t.Errorf("jobs after concurrent creates = %v, want only the running job %d", got, running.ID)
	}
}

func TestComplianceJobTransitions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	t1, t2, t3 := t0.Add(time.Minute), t0.Add(2*time.Minute), t0.Add(3*time.Minute)
	progress := storage.ComplianceProgress{LinesRead: 10, MalformedLines: 2, ResultLines: 3}

	j := newJob(t, db, app, storage.ComplianceTypeTweets)
	err := db.CompleteComplianceJob(ctx, j.ID, progress, t1)
	wantErrIs(t, "Complete a created job", err, storage.ErrConflict)

	started := startJob(t, db, j.ID, t0)
	if started.Status != storage.JobInProgress || started.Attempts != 1 {
		t.Errorf("after Start: status %s attempts %d, want in_progress 1", started.Status, started.Attempts)
	}
	checkStamp(t, "started_at", started.StartedAt, &t0)
	checkStamp(t, "heartbeat_at", started.HeartbeatAt, &t0)

	if err := db.HeartbeatComplianceJob(ctx, j.ID, progress, t1); err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	beat, err := db.ComplianceJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkStamp(t, "heartbeat_at after heartbeat", beat.HeartbeatAt, &t1)
	if got := progressOf(beat); got != progress {
		t.Errorf("progress after heartbeat = %+v, want %+v", got, progress)
	}

	// A retry starts a new attempt: the recorded counters are kept (the
	// attempt's heartbeats overwrite them; a stored result completes with
	// them), started_at kept.
	retry := startJob(t, db, j.ID, t2)
	if retry.Attempts != 2 || progressOf(retry) != progress {
		t.Errorf("after second Start: attempts %d progress %+v, want 2 and %+v", retry.Attempts, progressOf(retry), progress)
	}
	checkStamp(t, "started_at after retry", retry.StartedAt, &t0)
	checkStamp(t, "heartbeat_at after retry", retry.HeartbeatAt, &t2)

	final := storage.ComplianceProgress{LinesRead: 20, MalformedLines: 1, ResultLines: 4}
	if err := db.CompleteComplianceJob(ctx, j.ID, final, t3); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	done, err := db.ComplianceJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != storage.JobComplete || progressOf(done) != final || done.Attempts != 2 {
		t.Errorf("after Complete: %+v", done)
	}
	checkStamp(t, "completed_at", done.CompletedAt, &t3)

	// Finished jobs do not move any more.
	wantErrIs(t, "Complete twice", db.CompleteComplianceJob(ctx, j.ID, progress, t3), storage.ErrConflict)
	wantErrIs(t, "Fail a complete job", db.FailComplianceJob(ctx, j.ID, "late", t3), storage.ErrConflict)
	if err := db.HeartbeatComplianceJob(ctx, j.ID, progress, t3.Add(time.Hour)); err != nil {
		t.Errorf("Heartbeat of a complete job: %v", err)
	}
	again, ok, err := db.StartComplianceJob(ctx, j.ID, t3.Add(time.Hour))
	if err != nil || ok {
		t.Errorf("Start a complete job = started %v, %v; want false, nil", ok, err)
	}
	if describeJob(again) != describeJob(done) {
		t.Errorf("Start a complete job returned %+v, want it as stored %+v", again, done)
	}
	if after, _ := db.ComplianceJob(ctx, j.ID); describeJob(after) != describeJob(done) {
		t.Errorf("complete job changed by Start/Heartbeat: %+v, was %+v", after, done)
	}

	_, _, err = db.StartComplianceJob(ctx, j.ID+1, t0)
	wantErrIs(t, "Start unknown job", err, storage.ErrNotFound)

	t.Run("fail", func(t *testing.T) {
		tests := []struct {
			name  string
			start bool
		}{{"from created", false}, {"from in_progress", true}}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				opts := &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeUsers}
				if tt.start {
					opts.Status, opts.StartedAt = storage.JobInProgress, t0
				}
				j := factory.ComplianceJob(t, db, opts)
				if err := db.FailComplianceJob(ctx, j.ID, "the reason", t1); err != nil {
					t.Fatalf("Fail: %v", err)
				}
				failed, err := db.ComplianceJob(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if failed.Status != storage.JobFailed || failed.FailureReason != "the reason" {
					t.Errorf("after Fail: status %s reason %q", failed.Status, failed.FailureReason)
				}
				checkStamp(t, "completed_at", failed.CompletedAt, &t1)
				wantErrIs(t, "Fail twice", db.FailComplianceJob(ctx, j.ID, "again", t2), storage.ErrConflict)
				wantErrIs(t, "Complete a failed job", db.CompleteComplianceJob(ctx, j.ID, progress, t2), storage.ErrConflict)
				_, ok, err := db.StartComplianceJob(ctx, j.ID, t2)
				if err != nil || ok {
					t.Errorf("Start a failed job = started %v, %v; want false, nil", ok, err)
				}
				if after, _ := db.ComplianceJob(ctx, j.ID); describeJob(after) != describeJob(failed) {
					t.Errorf("failed job changed: %+v, was %+v", after, failed)
				}
			})
		}
	})
}

// describeJob renders every field of a job comparably (times as UTC
// instants, pointers dereferenced).
// jobView is what AppComplianceJob and ListComplianceJobs read of j: the
// fields a client sees.
func jobView(j storage.ComplianceJob) storage.ComplianceJob {
	return storage.ComplianceJob{ID: j.ID, AppID: j.AppID, Type: j.Type, Name: j.Name, Resumable: j.Resumable,
		Status: j.Status, UploadURL: j.UploadURL, DownloadURL: j.DownloadURL, UploadExpiresAt: j.UploadExpiresAt,
		DownloadExpiresAt: j.DownloadExpiresAt, CreatedAt: j.CreatedAt, FailureReason: j.FailureReason}
}

func describeJob(j storage.ComplianceJob) string {
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	pts := func(t *time.Time) string {
		if t == nil {
			return "NULL"
		}
		return ts(*t)
	}
	return fmt.Sprintf("id=%d app=%d type=%s name=%q resumable=%v status=%s upload=%s result=%s upload_url=%s download_url=%s "+
		"upload_expires=%s download_expires=%s created=%s updated=%s enqueued=%s started=%s heartbeat=%s completed=%s "+
		"attempts=%d lines=%d malformed=%d results=%d reason=%q",
		j.ID, j.AppID, j.Type, j.Name, j.Resumable, j.Status, j.UploadKey, j.ResultKey, j.UploadURL, j.DownloadURL,
		ts(j.UploadExpiresAt), ts(j.DownloadExpiresAt), ts(j.CreatedAt), ts(j.UpdatedAt), pts(j.EnqueuedAt),
		pts(j.StartedAt), pts(j.HeartbeatAt), pts(j.CompletedAt), j.Attempts, j.LinesRead, j.MalformedLines,
		j.ResultLines, j.FailureReason)
}

func progressOf(j storage.ComplianceJob) storage.ComplianceProgress {
	return storage.ComplianceProgress{LinesRead: j.LinesRead, MalformedLines: j.MalformedLines, ResultLines: j.ResultLines}
}

func TestComplianceJobsToReconcile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	appA := factory.App(t, db, nil)
	appB := factory.App(t, db, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	staleBefore := now.Add(-time.Minute)
	old := now.Add(-10 * time.Minute)

	// Each app has at most one job of a type in progress, so none blocks
	// the creation of another.
	job := func(app storage.App, typ string, opts factory.ComplianceJobOpts) storage.ComplianceJob {
		t.Helper()
		opts.App, opts.Type = app, typ
		return factory.ComplianceJob(t, db, &opts)
	}
	tweets, users := storage.ComplianceTypeTweets, storage.ComplianceTypeUsers
	neverEnqueued := job(appA, tweets, factory.ComplianceJobOpts{})
	enqueuedLongAgo := job(appA, tweets, factory.ComplianceJobOpts{EnqueuedAt: &old})
	job(appA, tweets, factory.ComplianceJobOpts{EnqueuedAt: &now}) // enqueued recently
	staleRunning := job(appA, users, factory.ComplianceJobOpts{Status: storage.JobInProgress, StartedAt: old})
	job(appB, users, factory.ComplianceJobOpts{Status: storage.JobInProgress, StartedAt: now})                    // running, fresh
	job(appB, tweets, factory.ComplianceJobOpts{Status: storage.JobComplete, StartedAt: old, CompletedAt: old})   // complete
	job(appB, tweets, factory.ComplianceJobOpts{Status: storage.JobFailed, FailureReason: "x", CompletedAt: old}) // failed

	list := func(limit int) []int64 {
		t.Helper()
		jobs, err := db.ComplianceJobsToReconcile(ctx, staleBefore, limit)
		if err != nil {
			t.Fatalf("ComplianceJobsToReconcile: %v", err)
		}
		return jobIDs(jobs)
	}
	want := []int64{neverEnqueued.ID, enqueuedLongAgo.ID, staleRunning.ID}
	if got := list(100); !slices.Equal(got, want) {
		t.Errorf("to reconcile = %v, want %v (never enqueued, enqueued long ago, stale running)", got, want)
	}

	// A fresh heartbeat takes a job out of the set; a stale one keeps it.
	if err := db.HeartbeatComplianceJob(ctx, staleRunning.ID, storage.ComplianceProgress{LinesRead: 1}, now); err != nil {
		t.Fatal(err)
	}
	want = []int64{neverEnqueued.ID, enqueuedLongAgo.ID}
	if got := list(100); !slices.Equal(got, want) {
		t.Errorf("after heartbeat: to reconcile = %v, want %v", got, want)
	}

	// Checked jobs go after unchecked ones, least recently checked first.
	if err := db.MarkComplianceChecked(ctx, []int64{neverEnqueued.ID}, now); err != nil {
		t.Fatal(err)
	}
	want = []int64{enqueuedLongAgo.ID, neverEnqueued.ID}
	if got := list(100); !slices.Equal(got, want) {
		t.Errorf("after checking the first: to reconcile = %v, want %v", got, want)
	}
	if got := list(1); !slices.Equal(got, want[:1]) {
		t.Errorf("limit 1: to reconcile = %v, want %v", got, want[:1])
	}
	if err := db.MarkComplianceChecked(ctx, []int64{enqueuedLongAgo.ID}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want = []int64{neverEnqueued.ID, enqueuedLongAgo.ID}
	if got := list(100); !slices.Equal(got, want) {
		t.Errorf("after checking both: to reconcile = %v, want %v", got, want)
	}
}
