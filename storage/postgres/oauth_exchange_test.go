package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestExchangeOAuth1Token: concurrent exchanges of one OAuth 1.0a token
// leave exactly one live grant; an exchange leaves the user's
// authorization-code grant alone; a revoked token is ErrNotFound and a
// refusal from check stores nothing.
func TestExchangeOAuth1Token(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	app, _ := db.CreateApp(ctx, "a", "")
	user, _ := db.CreateUser(ctx, "u", "u")
	grant(t, db, app.ID, user.ID, "code-1", "coded-access", "coded-refresh")
	tok, err := db.EnsureAccessToken(ctx, app.ID, user.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(n int) func(storage.AccessToken) (storage.OAuth2Issued, error) {
		now := time.Now()
		return func(at storage.AccessToken) (storage.OAuth2Issued, error) {
			if at.UserID != user.ID || at.AppID != app.ID {
				return storage.OAuth2Issued{}, fmt.Errorf("check saw %+v", at)
			}
			return storage.OAuth2Issued{Access: fmt.Sprintf("x-access-%d", n), Refresh: fmt.Sprintf("x-refresh-%d", n),
				Scopes: []string{"tweet.read", "offline.access"}, AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}, nil
		}
	}
	const racers = 4
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() { _, errs[i] = db.ExchangeOAuth1Token(ctx, tok.Token, time.Now(), issue(i)) })
	}
	wg.Wait()
	live := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		got, err := db.OAuth2Token(ctx, fmt.Sprintf("x-access-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if got.Live(time.Now()) {
			live++
		}
	}
	if live != 1 {
		t.Errorf("%d live exchanged grants, want 1", live)
	}
	if got, err := db.OAuth2Token(ctx, "coded-access"); err != nil || !got.Live(time.Now()) {
		t.Errorf("the authorization-code grant was touched: %+v %v", got, err)
	}

	refused := errors.New("refused")
	if _, err := db.ExchangeOAuth1Token(ctx, tok.Token, time.Now(), func(storage.AccessToken) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{}, refused
	}); !errors.Is(err, refused) {
		t.Errorf("refusal: %v", err)
	}
	if err := db.RevokeAccessToken(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExchangeOAuth1Token(ctx, tok.Token, time.Now(), issue(9)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("revoked token: %v, want ErrNotFound", err)
	}
}
