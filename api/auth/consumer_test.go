package auth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// TestVerifyConsumer: requests of the OAuth 1.0a token endpoints, signed
// with consumer credentials and an optional request token.
func TestVerifyConsumer(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	app := storage.App{ID: 3, ConsumerKey: "ck", ConsumerSecret: "cs"}
	secrets := func(_ context.Context, a storage.App, token string) (string, error) {
		if a.ID == app.ID && token == "rt" {
			return "rts", nil
		}
		return "", storage.ErrNotFound
	}
	tests := []struct {
		name               string
		token, tokenSecret string
		signedAt           time.Time
		nonce              string
		withSecrets        bool
		wantStatus         int // 0: verified
		wantCallback       string
		repeatToken        bool // oauth_token in the body too, signed once
	}{
		{name: "consumer only", signedAt: now, nonce: "n1", wantCallback: "oob"},
		{name: "nonce replayed", signedAt: now, nonce: "n1", wantStatus: 401},
		{name: "token where none is taken", token: "rt", tokenSecret: "rts", signedAt: now, nonce: "n2", wantStatus: 401},
		{name: "request token", token: "rt", tokenSecret: "rts", signedAt: now, nonce: "n3", withSecrets: true, wantCallback: "oob"},
		{name: "unknown token", token: "zz", tokenSecret: "rts", signedAt: now, nonce: "n4", withSecrets: true, wantStatus: 401},
		{name: "wrong token secret", token: "rt", tokenSecret: "nope", signedAt: now, nonce: "n5", withSecrets: true, wantStatus: 401},
		{name: "token repeated in the body, signed once", token: "rt", tokenSecret: "rts", signedAt: now, nonce: "n7", withSecrets: true, repeatToken: true, wantCallback: "oob"},
		{name: "stale timestamp", signedAt: now.Add(-MaxClockSkew - time.Minute), nonce: "n6", wantStatus: 401},
	}
	store := newFakeStore()
	store.apps = append(store.apps, app)
	a, err := New(store, &memNonces{}, "https://api.example", func() time.Time { return now }, quietWriter)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := url.Values{"oauth_callback": {"oob"}}.Encode()
			r := httptest.NewRequest(http.MethodPost, "https://api.example/oauth/request_token", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if err := SignRequest(r, "https://api.example", "ck", "cs", tt.token, tt.tokenSecret, tt.signedAt, tt.nonce); err != nil {
				t.Fatal(err)
			}
			if tt.repeatToken {
				// The client signed oauth_token once (merged sets); the body
				// sent it again.
				r.Body = io.NopCloser(strings.NewReader(body + "&oauth_token=" + tt.token))
				r.ContentLength = -1
			}
			var ts TokenSecret
			if tt.withSecrets {
				ts = secrets
			}
			c, err := a.VerifyConsumer(r, ts)
			if tt.wantStatus != 0 {
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Status != tt.wantStatus {
					t.Fatalf("err %v, want status %d", err, tt.wantStatus)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.App.ID != app.ID || c.Token != tt.token || c.Params.Get("oauth_callback") != tt.wantCallback || c.Params.Get("oauth_nonce") != tt.nonce {
				t.Errorf("got %+v", c)
			}
		})
	}
}
