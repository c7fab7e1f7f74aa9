package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestConsoleAppsOwnership: ConsoleApps lists an owner's apps only, or
// every app for an administrator, with the owner's username.
func TestConsoleAppsOwnership(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	mine, theirs, orphan := factory.App(t, db, nil), factory.App(t, db, nil), factory.App(t, db, nil)
	for app, owner := range map[int64]int64{mine.ID: alice.ID, theirs.ID: bob.ID} {
		if err := db.SetAppOwner(ctx, app, owner); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetAppOwner(ctx, 1, alice.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("owner of an unknown app: %v", err)
	}
	names := func(all bool) string {
		apps, err := db.ConsoleApps(ctx, alice.ID, all)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range apps {
			out = append(out, a.Name+"@"+a.OwnerUsername)
		}
		return strings.Join(out, " ")
	}
	if got := names(false); got != mine.Name+"@"+alice.Username {
		t.Errorf("alice's apps: %s", got)
	}
	all := names(true)
	for _, want := range []string{mine.Name + "@" + alice.Username, theirs.Name + "@" + bob.Username, orphan.Name + "@"} {
		if !strings.Contains(all, want) {
			t.Errorf("every app %q lacks %q", all, want)
		}
	}
	if owner, err := db.AppOwner(ctx, orphan.ID); err != nil || owner != 0 {
		t.Errorf("orphan's owner %d %v", owner, err)
	}
}

// TestConsoleTokenRefs: tokens are listed masked with a reference that
// finds them again, per app and kind only.
func TestConsoleTokenRefs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app, other := factory.App(t, db, nil), factory.App(t, db, nil)
	bearer, err := db.CreateBearerToken(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	list, err := db.AppBearerTokens(ctx, app.ID)
	if err != nil || len(list) != 1 || strings.Contains(list[0].Masked, bearer.Token) || list[0].Ref != postgres.TokenRefOf(bearer.Token) {
		t.Fatalf("bearer tokens: %+v %v", list, err)
	}
	if got, err := db.AppTokenByRef(ctx, app.ID, true, list[0].Ref); err != nil || got != bearer.Token {
		t.Errorf("by ref: %q %v", got, err)
	}
	for _, tc := range []struct {
		app    int64
		bearer bool
	}{{other.ID, true}, {app.ID, false}} {
		if _, err := db.AppTokenByRef(ctx, tc.app, tc.bearer, list[0].Ref); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("app %d bearer %v: %v, want not found", tc.app, tc.bearer, err)
		}
	}
}

// TestRevokeOAuth2Grant: revoking a user's only grant to an app ends it
// (no longer listed, its tokens refused) and appends oauth.revoke once; a
// grant of another app is not found.
func TestRevokeOAuth2Grant(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app, other := factory.App(t, db, nil), factory.App(t, db, nil)
	user := factory.User(t, db, nil)
	now := time.Now()
	if err := db.CreateOAuth2Code(ctx, "the-code", storage.OAuth2Code{AppID: app.ID, UserID: user.ID, RedirectURI: "https://c.example/cb",
		Scopes: []string{"tweet.read"}, Challenge: strings.Repeat("a", 43), Method: "plain", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExchangeOAuth2Code(ctx, "the-code", now, func(storage.OAuth2Code) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{Access: "the-access", AccessExpires: now.Add(time.Hour), Scopes: []string{"tweet.read"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	grants, err := db.AppOAuth2Grants(ctx, app.ID)
	if err != nil || len(grants) != 1 || grants[0].UserID != user.ID {
		t.Fatalf("grants: %+v %v", grants, err)
	}
	if err := db.RevokeOAuth2Grant(ctx, other.ID, grants[0].ID, now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another app's grant: %v", err)
	}
	head, err := db.EventHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeOAuth2Grant(ctx, app.ID, grants[0].ID, now); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeOAuth2Grant(ctx, app.ID, grants[0].ID, now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("revoke again: %v", err)
	}
	if left, _ := db.AppOAuth2Grants(ctx, app.ID); len(left) != 0 {
		t.Errorf("grants after revoke: %+v", left)
	}
	if tok, err := db.OAuth2Token(ctx, "the-access"); err != nil || tok.Live(time.Now()) {
		t.Errorf("the grant's access token after revoke: %+v %v", tok, err)
	}
	if evs := eventsOf(t, db, head, func(ty events.Type) bool { return ty == events.OAuthRevoke }); len(evs) != 1 {
		t.Errorf("oauth.revoke events: %d, want 1", len(evs))
	}
}
