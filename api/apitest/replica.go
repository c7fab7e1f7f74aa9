package apitest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// CachedReplica is one API replica on db and rc whose authentication goes
// through an auth.Cache listening on channel. The cache's TTL is an hour:
// within a test only a pub/sub announcement can drop an entry.
func CachedReplica(t testing.TB, db *postgres.DB, rc *redis.Client, prefix, channel string) (*httptest.Server, *api.Server) {
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
		Modules: Modules(t, db, w, log),
		Auth:    authn, Errors: w, Logger: log, RateLimitScale: 1e6,
		Limiter: ratelimit.NewLimiter(rc, prefix, time.Now, w),
	})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv, handler
}
