package api_test

import (
	"context"
	"github.com/aviary-dev/aviary/internal/logctx"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// cachedReplica is one API replica on db and rc whose authentication goes
// through an auth.Cache listening on channel. The cache's TTL is an hour:
// within a test only a pub/sub announcement can drop an entry.
func cachedReplica(t testing.TB, db *postgres.DB, rc *redis.Client, prefix, channel string) (*httptest.Server, *api.Server) {
	t.Helper()
	cache := auth.NewCache(time.Hour, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := cache.Start(ctx, rc, channel)
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(5 * time.Second)
	for !cache.Live() {
		if time.Now().After(deadline) {
			t.Fatal("auth cache did not subscribe within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w := apierr.Writer{}
	authn, err := auth.New(auth.CachedStore(db, cache), auth.NewRedisNonceStore(rc, prefix+"nonce:"), "", time.Now, w)
	if err != nil {
		t.Fatalf("auth: %v", err)
	}
	// The handler cmd/aviary logs through (request lines included).
	log := slog.New(logctx.Handler{Handler: slog.NewJSONHandler(io.Discard, nil)})
	handler := api.New(api.Deps{
		Modules: testModules(t, db, w, log),
		Auth:    authn, Errors: w, Logger: log, RateLimitScale: 1e6,
		Limiter: ratelimit.NewLimiter(rc, prefix, time.Now, w),
	})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv, handler
}

// TestRevocationReachesEveryReplica: two replicas share PostgreSQL and
// Redis, each with a warm credential cache; a revoked bearer token, a
// revoked access token and a suspended user are refused by both within one
// second of the change being committed and announced (what aviary admin
// does). The second is the correctness bound, not a speed target.
func TestRevocationReachesEveryReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	rc, prefix := storagetest.RedisPrefix(t)
	channel := prefix + "auth-invalidate"
	first, _ := cachedReplica(t, db, rc, prefix, channel)
	second, _ := cachedReplica(t, db, rc, prefix, channel)
	replicas := []*httptest.Server{first, second}
	pub := auth.NewPublisher(rc, channel)

	app, bearer := newApp(t, db, "replicated")
	suspended, _ := newUser(t, db, app, "to_suspend")
	revokedUser, revokedToken := newUser(t, db, app, "to_revoke")
	_ = revokedUser
	tokenOf := func(u storage.User) storage.AccessToken {
		tok, err := db.EnsureAccessToken(ctx, app.ID, u.ID, storage.AccessReadWrite)
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		return tok
	}
	suspendedToken := tokenOf(suspended)

	var seq int
	send := func(srv *httptest.Server, authz string, tok *storage.AccessToken) int {
		t.Helper()
		var req *http.Request
		if tok == nil {
			req, _ = http.NewRequest(http.MethodGet, srv.URL+"/2/compliance/jobs?type=tweets", nil)
			req.Header.Set("Authorization", authz)
		} else {
			seq++
			body := `{"text":"replica post ` + strconv.Itoa(seq) + `"}`
			req, _ = http.NewRequest(http.MethodPost, srv.URL+"/2/tweets", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if err := auth.SignRequest(req, "", app.ConsumerKey, app.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
				t.Fatalf("sign: %v", err)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	cases := []struct {
		name   string
		authz  string
		token  *storage.AccessToken
		ok     int
		change func() error
		want   int
	}{
		{"revoked bearer token", bearer, nil, http.StatusOK, func() error {
			if err := db.RevokeBearerToken(ctx, strings.TrimPrefix(bearer, "Bearer ")); err != nil {
				return err
			}
			return pub.BearerRevoked(ctx, strings.TrimPrefix(bearer, "Bearer "))
		}, http.StatusUnauthorized},
		{"revoked access token", "", &revokedToken, http.StatusCreated, func() error {
			if err := db.RevokeAccessToken(ctx, revokedToken.Token); err != nil {
				return err
			}
			return pub.AccessTokenRevoked(ctx, revokedToken.Token)
		}, http.StatusUnauthorized},
		{"suspended user", "", &suspendedToken, http.StatusCreated, func() error {
			if _, err := db.SetUserState(ctx, suspended.ID, "suspended", time.Now()); err != nil {
				return err
			}
			return pub.UserChanged(ctx, suspended.ID)
		}, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Warm both caches, twice each: the second answer comes from the cache.
			for _, srv := range replicas {
				for range 2 {
					if got := send(srv, tc.authz, tc.token); got != tc.ok {
						t.Fatalf("before the change: status %d, want %d", got, tc.ok)
					}
				}
			}
			if err := tc.change(); err != nil {
				t.Fatalf("change: %v", err)
			}
			changed := time.Now()
			for i, srv := range replicas {
				var got int
				for {
					if got = send(srv, tc.authz, tc.token); got == tc.want || time.Since(changed) > time.Second {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				if got != tc.want {
					t.Errorf("replica %d: status %d 1s after the change, want %d", i, got, tc.want)
				}
			}
		})
	}
}
