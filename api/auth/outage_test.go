package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// outageLimit is a generous multiple of the nonce store's bound: it only
// proves a call did not wait for go-redis's defaults (seconds per attempt,
// three retries). The repo has no timed assertions for speed.
const outageLimit = 3 * time.Second

// TestRedisNonceStoreFrozen freezes the nonce store's Redis: Use gives up
// within its bound with storage.ErrUnavailable (rendered as 503) even when
// the caller's context has no deadline; a caller that gives up first is not
// reported as an outage.
func TestRedisNonceStoreFrozen(t *testing.T) {
	r := storagetest.PrivateRedis(t)
	client := redis.NewClient(&redis.Options{Addr: r.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	store := NewRedisNonceStore(client, "x:")
	if _, err := store.Use(context.Background(), "warm", time.Minute); err != nil {
		t.Fatalf("running Redis: %v", err)
	}
	r.Freeze()
	start := time.Now()
	_, err := store.Use(context.Background(), "a", time.Minute)
	if elapsed := time.Since(start); elapsed >= outageLimit {
		t.Errorf("Use returned after %v; want under %v", elapsed.Round(time.Millisecond), outageLimit)
	}
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Use on a frozen Redis: %v; want storage.ErrUnavailable", err)
	}
	gone, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := store.Use(gone, "b", time.Minute); err == nil || errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Use by a caller that gave up: %v; want an error that is not storage.ErrUnavailable", err)
	}
	a, err := New(newFakeStore(), store, "", func() time.Time { return testNow }, quietWriter)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	a.Middleware(UserContext)(echo).ServeHTTP(rec, signed{}.request(t))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("request during the freeze: %d %s; want 503", rec.Code, rec.Body)
	}
}
