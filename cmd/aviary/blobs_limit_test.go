package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestBlobsLimitedPerJob: the local driver's /blobs/ handler, as the API
// mounts it, is rate limited per compliance job (the object key's job);
// keys of no job are not limited.
func TestBlobsLimitedPerJob(t *testing.T) {
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	srv := httptest.NewUnstartedServer(nil)
	st, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	limiter := ratelimit.NewLimiter(rc, "t:", time.Now, apierr.Writer{})
	srv.Config.Handler = limitBlobsPerJob(limiter, 0.02, st.VerifyRequest, st.Handler()) // 150 per job -> 3
	srv.Start()
	t.Cleanup(srv.Close)
	get := func(key string) int {
		u, err := st.PresignGet(t.Context(), key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	result, other := storage.ComplianceResultKey(1, 5), storage.ComplianceUploadKey(1, 6)
	if err := st.Put(t.Context(), result, strings.NewReader("{}\n"), 3, storage.ComplianceResultContentType); err != nil {
		t.Fatal(err)
	}
	for range 10 { // unsigned requests for job 5 are refused and cost it nothing
		resp, err := http.Get("http://" + srv.Listener.Addr().String() + "/blobs/" + result)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("unsigned GET: %d, want 403", resp.StatusCode)
		}
	}
	for i := range 3 {
		if code := get(result); code != http.StatusOK {
			t.Fatalf("GET %d of job 5's result: %d", i+1, code)
		}
	}
	if code := get(storage.ComplianceUploadKey(1, 5)); code != http.StatusTooManyRequests {
		t.Errorf("fourth request for job 5 (its upload key): %d, want 429", code)
	}
	if code := get(other); code != http.StatusNotFound {
		t.Errorf("request for job 6: %d, want 404 (not limited)", code)
	}
	for range 5 {
		if code := get("media/x"); code != http.StatusNotFound {
			t.Fatalf("key of no job: %d, want 404 (not limited)", code)
		}
	}
}
