package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRedisNonceStore(t *testing.T) {
	client, prefix := testRedis(t)
	store := NewRedisNonceStore(client, prefix)
	ctx := context.Background()
	steps := []struct {
		key   string
		fresh bool
	}{
		{"a", true}, {"a", false}, {"b", true}, {"a", false}, {"b", false},
	}
	for i, s := range steps {
		fresh, err := store.Use(ctx, s.key, time.Minute)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if fresh != s.fresh {
			t.Errorf("step %d Use(%q) fresh = %v, want %v", i, s.key, fresh, s.fresh)
		}
	}
	ttl, err := client.PTTL(ctx, prefix+"a").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("PTTL = %v (%v), want within (0, 1m]", ttl, err)
	}
}

func TestRedisNonceStoreDown(t *testing.T) {
	store := NewRedisNonceStore(deadRedis(t), "x:")
	if _, err := store.Use(context.Background(), "a", time.Minute); err == nil {
		t.Error("Use on a closed client succeeded, want error")
	}
}

// TestReplayedNonceRejected runs a sequence of requests through the UserContext requirement
// backed by the real Redis nonce store.
func TestReplayedNonceRejected(t *testing.T) {
	client, prefix := testRedis(t)
	a, err := New(newFakeStore(), NewRedisNonceStore(client, prefix), "", func() time.Time { return testNow }, quietWriter)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		req    signed
		status int
	}{
		{"first use", signed{nonce: "n-1"}, http.StatusOK},
		{"replay", signed{nonce: "n-1"}, http.StatusUnauthorized},
		{"replay, other timestamp in window", signed{nonce: "n-1", at: testNow.Add(time.Minute)}, http.StatusUnauthorized},
		{"same nonce, other app and token", signed{nonce: "n-1", key: ck2, secret: cs2, token: at2, tsecret: ts2}, http.StatusOK},
		{"bad signature does not consume the nonce", signed{nonce: "n-2", secret: "wrong"}, http.StatusUnauthorized},
		{"nonce of a rejected request still usable", signed{nonce: "n-2"}, http.StatusOK},
		{"new nonce", signed{nonce: "n-3"}, http.StatusOK},
	}
	for _, s := range steps {
		rec := httptest.NewRecorder()
		a.Middleware(UserContext)(echo).ServeHTTP(rec, s.req.request(t))
		if rec.Code != s.status {
			t.Fatalf("%s: status %d, want %d; body %s", s.name, rec.Code, s.status, rec.Body)
		}
		if s.status != http.StatusOK {
			assertProblem(t, rec, s.status, "")
		}
	}
}

// TestNonceStoreFailureIsUnavailable: without Redis a nonce cannot be
// checked, so the request is refused (fail closed) with 503 and Retry-After,
// not served and not a 500.
func TestNonceStoreFailureIsUnavailable(t *testing.T) {
	a, err := New(newFakeStore(), NewRedisNonceStore(deadRedis(t), "x:"), "", func() time.Time { return testNow }, quietWriter)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	a.Middleware(UserContext)(echo).ServeHTTP(rec, signed{}.request(t))
	assertProblem(t, rec, http.StatusServiceUnavailable, "")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}
