package blobtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

type presignFunc func(ctx context.Context, key string, ttl time.Duration) (string, error)

func presigners(s blob.Store) map[string]presignFunc {
	return map[string]presignFunc{"PresignPut": s.PresignPut, "PresignGet": s.PresignGet}
}

// presign returns a URL from fn or fails the test.
func presign(t *testing.T, fn presignFunc, key string, ttl time.Duration) string {
	t.Helper()
	u, err := fn(t.Context(), key, ttl)
	if err != nil {
		t.Fatalf("presign %q: %v", key, err)
	}
	return u
}

// do sends a plain, credential-free HTTP request and returns the status and
// body. header may be nil.
func do(t *testing.T, method, rawURL string, body []byte, header http.Header) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, rawURL, r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, rawURL, err)
	}
	return resp.StatusCode, got
}

// expectStatus sends a request and fails the test unless it gets want.
func expectStatus(t *testing.T, want int, method, rawURL string, body []byte) []byte {
	t.Helper()
	status, got := do(t, method, rawURL, body, nil)
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, rawURL, status, clip(got), want)
	}
	return got
}

func testPresignRoundTrip(t *testing.T, s blob.Store) {
	tests := []struct {
		name string
		key  string
		data []byte
	}{
		{"simple", "uploads/42/data.jsonl", []byte("{\"id\":\"1\"}\n{\"id\":\"2\"}\n")},
		{"key needing escapes", "dir/with space/ü+%&=?#.txt", []byte("escaped key")},
		{"empty body", "uploads/empty", []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			putURL := presign(t, s.PresignPut, tc.key, 10*time.Minute)
			expectStatus(t, http.StatusOK, http.MethodPut, putURL, tc.data)
			mustEqual(t, s, tc.key, tc.data)

			getURL := presign(t, s.PresignGet, tc.key, 10*time.Minute)
			if got := expectStatus(t, http.StatusOK, http.MethodGet, getURL, nil); !bytes.Equal(got, tc.data) {
				t.Errorf("presigned GET = %q, want %q", clip(got), clip(tc.data))
			}
			if len(tc.data) < 6 {
				return
			}
			status, got := do(t, http.MethodGet, getURL, nil, http.Header{"Range": {"bytes=2-5"}})
			if status != http.StatusPartialContent || !bytes.Equal(got, tc.data[2:6]) {
				t.Errorf("presigned ranged GET = %d %q, want 206 %q", status, got, tc.data[2:6])
			}
		})
	}
}

// testPresignExpired waits out a 1-second TTL; this checks expiry is
// enforced, not how precisely.
func testPresignExpired(t *testing.T, s blob.Store) {
	const key = "expiring/object"
	put(t, s, key, []byte("original"), "text/plain")
	getURL := presign(t, s.PresignGet, key, time.Second)
	putURL := presign(t, s.PresignPut, key, time.Second)
	time.Sleep(2 * time.Second)
	expectStatus(t, http.StatusForbidden, http.MethodGet, getURL, nil)
	expectStatus(t, http.StatusForbidden, http.MethodPut, putURL, []byte("too late"))
	mustEqual(t, s, key, []byte("original"))
}

// testPresignTampered points valid URLs at another key.
func testPresignTampered(t *testing.T, s blob.Store) {
	put(t, s, "public/a", []byte("public"), "text/plain")
	put(t, s, "secret/b", []byte("secret"), "text/plain")
	getURL := presign(t, s.PresignGet, "public/a", 10*time.Minute)
	expectStatus(t, http.StatusOK, http.MethodGet, getURL, nil)
	expectStatus(t, http.StatusForbidden, http.MethodGet, retarget(t, getURL, "public/a", "secret/b"), nil)

	putURL := presign(t, s.PresignPut, "public/a", 10*time.Minute)
	expectStatus(t, http.StatusForbidden, http.MethodPut, retarget(t, putURL, "public/a", "secret/b"), []byte("overwritten"))
	mustEqual(t, s, "secret/b", []byte("secret"))
}

// retarget replaces the from key in rawURL's path with to.
func retarget(t *testing.T, rawURL, from, to string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("parse presigned URL: %v", err)
	}
	if !strings.HasSuffix(u.Path, "/"+from) {
		t.Fatalf("presigned URL path %q does not end in the key %q", u.Path, from)
	}
	u.Path = strings.TrimSuffix(u.Path, from) + to
	u.RawPath = ""
	return u.String()
}

// testPresignWrongMethod uses URLs with methods they were not signed for.
func testPresignWrongMethod(t *testing.T, s blob.Store) {
	const key = "method/object"
	put(t, s, key, []byte("original"), "text/plain")
	getURL := presign(t, s.PresignGet, key, 10*time.Minute)
	putURL := presign(t, s.PresignPut, key, 10*time.Minute)
	expectStatus(t, http.StatusForbidden, http.MethodPut, getURL, []byte("overwritten"))
	expectStatus(t, http.StatusForbidden, http.MethodDelete, getURL, nil)
	expectStatus(t, http.StatusForbidden, http.MethodGet, putURL, nil)
	mustEqual(t, s, key, []byte("original"))
}
