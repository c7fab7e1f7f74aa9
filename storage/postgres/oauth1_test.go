package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestOAuth1RequestTokens: a request token is authorized once, exchanged
// once with its verifier, and refused when expired, denied, another app's
// or presented with a wrong verifier (which spends it).
func TestOAuth1RequestTokens(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	app, _ := db.CreateApp(ctx, "a", "")
	other, _ := db.CreateApp(ctx, "b", "")
	user, _ := db.CreateUser(ctx, "u", "u")
	now := time.Now()
	good := oauth2.HashSecret("v")
	tests := []struct {
		name      string
		expires   time.Duration
		authorize bool
		deny      bool
		app       int64
		verifier  string
		wantErr   error
		again     error // a second exchange with the right verifier
	}{
		{name: "authorized", expires: time.Minute, authorize: true, app: app.ID, verifier: "v", again: storage.ErrVerifier},
		{name: "wrong verifier spends it", expires: time.Minute, authorize: true, app: app.ID, verifier: "w", wantErr: storage.ErrVerifier, again: storage.ErrVerifier},
		{name: "not authorized", expires: time.Minute, app: app.ID, verifier: "v", wantErr: storage.ErrVerifier},
		{name: "denied", expires: time.Minute, deny: true, app: app.ID, verifier: "v", wantErr: storage.ErrVerifier},
		{name: "another app", expires: time.Minute, authorize: true, app: other.ID, verifier: "v", wantErr: storage.ErrNotFound},
		{name: "expired", expires: -time.Second, app: app.ID, verifier: "v", wantErr: storage.ErrVerifier},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := storage.OAuth1RequestToken{Token: "rt" + string(rune('a'+i)), Secret: "s", AppID: app.ID, Callback: "oob",
				AccessLevel: storage.AccessRead, ExpiresAt: now.Add(tt.expires)}
			if err := db.CreateRequestToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
			if tt.authorize {
				if err := db.AuthorizeRequestToken(ctx, tok.Token, user.ID, good, now); err != nil {
					t.Fatal(err)
				}
				if err := db.AuthorizeRequestToken(ctx, tok.Token, user.ID, good, now); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("authorized twice: %v", err)
				}
			}
			if tt.deny {
				if err := db.DenyRequestToken(ctx, tok.Token, now); err != nil {
					t.Fatal(err)
				}
				if err := db.AuthorizeRequestToken(ctx, tok.Token, user.ID, good, now); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("a denied token was authorized: %v", err)
				}
			}
			got, err := db.ExchangeRequestToken(ctx, tok.Token, tt.app, oauth2.HashSecret(tt.verifier), now)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("exchange: %v, want %v", err, tt.wantErr)
			}
			if err == nil && (got.UserID != user.ID || got.AccessLevel != storage.AccessRead || got.Callback != "oob") {
				t.Errorf("exchanged %+v", got)
			}
			if tt.again != nil {
				if _, err := db.ExchangeRequestToken(ctx, tok.Token, app.ID, good, now); !errors.Is(err, tt.again) {
					t.Errorf("second exchange: %v, want %v", err, tt.again)
				}
			}
		})
	}
}

// TestGrantAccessTokenAndSignIn: the app+user token is reused with the
// approved level; approvals and the sign-in setting read back.
func TestGrantAccessTokenAndSignIn(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	app, _ := db.CreateApp(ctx, "a", "")
	user, _ := db.CreateUser(ctx, "u", "u")
	if _, err := db.ApprovedAccess(ctx, app.ID, user.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("approved before any grant: %v", err)
	}
	steps := []struct {
		level       string
		wantChanged bool
	}{{storage.AccessRead, false}, {storage.AccessRead, false}, {storage.AccessReadWrite, true}}
	var first string
	for i, s := range steps {
		tok, changed, err := db.GrantAccessToken(ctx, app.ID, user.ID, s.level)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = tok.Token
		}
		if tok.Token != first || tok.AccessLevel != s.level || changed != s.wantChanged {
			t.Errorf("step %d: %+v changed=%v", i, tok, changed)
		}
		if level, err := db.ApprovedAccess(ctx, app.ID, user.ID); err != nil || level != s.level {
			t.Errorf("step %d: approved %q (%v)", i, level, err)
		}
	}
	for _, on := range []bool{true, false} {
		got, err := db.SetAppSignIn(ctx, app.ID, on)
		if err != nil || got.SignInEnabled != on {
			t.Fatalf("sign-in %v: %+v %v", on, got, err)
		}
		if loaded, _ := db.AppByID(ctx, app.ID); loaded.SignInEnabled != on {
			t.Errorf("loaded sign-in %v, want %v", loaded.SignInEnabled, on)
		}
	}
}
