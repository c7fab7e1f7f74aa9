package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// grant stores a code for app and user and exchanges it for access (and
// refresh, if not "") tokens.
func grant(t *testing.T, db *postgres.DB, appID, userID int64, code, access, refresh string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	scopes := []string{"tweet.read", "offline.access"}
	if err := db.CreateOAuth2Code(ctx, code, storage.OAuth2Code{AppID: appID, UserID: userID, RedirectURI: "http://cb/", Scopes: scopes,
		Challenge: "c", Method: "plain", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, err := db.ExchangeOAuth2Code(ctx, code, now, func(storage.OAuth2Code) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{Access: access, Refresh: refresh, Scopes: scopes, AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOAuth2RefreshRace: two clients racing with one refresh token get one
// rotation; the other is a reuse and revokes the family, so neither keeps
// a live grant it could share with a thief.
func TestOAuth2RefreshRace(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	app, _ := db.CreateApp(ctx, "a", "")
	user, _ := db.CreateUser(ctx, "u", "u")
	grant(t, db, app.ID, user.ID, "code-1", "access-1", "refresh-1")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			now := time.Now()
			_, errs[i] = db.RefreshOAuth2(ctx, "refresh-1", app.ID, now, func(t storage.OAuth2Token) (storage.OAuth2Issued, error) {
				n := string(rune('a' + i))
				return storage.OAuth2Issued{Access: "access-" + n, Refresh: "refresh-" + n, Scopes: t.Scopes,
					AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}, nil
			})
		})
	}
	wg.Wait()
	ok, reused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, storage.ErrTokenReused):
			reused++
		default:
			t.Fatalf("refresh: %v", err)
		}
	}
	if ok != 1 || reused != 1 {
		t.Fatalf("%d rotations and %d reuses, want 1 and 1", ok, reused)
	}
	for _, tok := range []string{"access-1", "access-a", "access-b"} {
		got, err := db.OAuth2Token(ctx, tok)
		if errors.Is(err, storage.ErrNotFound) {
			continue // the losing rotation's tokens were never stored
		}
		if err != nil || got.Live(time.Now()) {
			t.Errorf("%s: live %v (%v) after the family was revoked", tok, got.Live(time.Now()), err)
		}
	}
}

// TestOAuth2Store covers the store's refusals: another app's refresh
// token, an unknown one, another app revoking, and the client secret
// reset that bootstrap relies on.
func TestOAuth2Store(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	app, _ := db.CreateApp(ctx, "a", "")
	other, _ := db.CreateApp(ctx, "b", "")
	user, _ := db.CreateUser(ctx, "u", "u")
	grant(t, db, app.ID, user.ID, "code-1", "access-1", "refresh-1")
	never := func(storage.OAuth2Token) (storage.OAuth2Issued, error) {
		t.Error("check called for a refused refresh")
		return storage.OAuth2Issued{}, nil
	}
	for name, tc := range map[string]struct {
		token string
		app   int64
	}{"another app's token": {"refresh-1", other.ID}, "unknown token": {"nope", app.ID}, "an access token": {"access-1", app.ID}} {
		if _, err := db.RefreshOAuth2(ctx, tc.token, tc.app, time.Now(), never); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if _, err := db.RevokeOAuth2Token(ctx, "access-1", other.ID, time.Now()); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another app revoked a token: %v", err)
	}
	if tok, _ := db.OAuth2Token(ctx, "access-1"); !tok.Live(time.Now()) {
		t.Error("token not live after refused revocations")
	}

	c, secret, err := db.EnsureOAuth2Client(ctx, app.ID)
	if err != nil || secret == "" || c.Type != storage.ClientConfidential {
		t.Fatalf("client %+v %q %v", c, secret, err)
	}
	if again, s2, _ := db.EnsureOAuth2Client(ctx, app.ID); again.ClientID != c.ClientID || s2 != "" {
		t.Errorf("second EnsureOAuth2Client: %+v secret %q", again, s2)
	}
	if _, changed, err := db.SetOAuth2ClientSecret(ctx, app.ID, "derived"); err != nil || !changed {
		t.Errorf("set secret: changed %v %v", changed, err)
	}
	if _, changed, err := db.SetOAuth2ClientSecret(ctx, app.ID, "derived"); err != nil || changed {
		t.Errorf("same secret again: changed %v %v", changed, err)
	}
	pub, s3, err := db.SetOAuth2Client(ctx, app.ID, storage.ClientPublic)
	if err != nil || s3 != "" || pub.SecretHash != nil || pub.ClientID != c.ClientID {
		t.Errorf("public client %+v %q %v", pub, s3, err)
	}
	if err := db.AddCallbackURL(ctx, app.ID, "http://cb/"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.HasCallbackURL(ctx, app.ID, "http://cb"); ok {
		t.Error("callback URLs matched without the exact string")
	}
	if err := db.RemoveCallbackURL(ctx, app.ID, "http://other/"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("remove unknown callback: %v", err)
	}
}
