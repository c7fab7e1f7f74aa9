package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/blobtest"
	"github.com/aviary-dev/aviary/storage/blob/local"
)

func TestContract(t *testing.T) {
	blobtest.Exercise(t, func(t *testing.T) blob.Store {
		return newServedStore(t, local.Options{Dir: t.TempDir()})
	})
}

// newServedStore opens a store whose presigned URLs are served by an
// httptest.Server running its Handler.
func newServedStore(t *testing.T, opts local.Options) *local.Store {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	opts.BaseURL = "http://" + srv.Listener.Addr().String()
	s, err := local.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv.Config.Handler = s.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := map[string]local.Options{
		"no dir":         {BaseURL: "http://localhost:8080"},
		"no base URL":    {Dir: t.TempDir()},
		"relative URL":   {Dir: t.TempDir(), BaseURL: "localhost:8080"},
		"non-http URL":   {Dir: t.TempDir(), BaseURL: "ftp://localhost"},
		"short key file": {Dir: dirWithKeyFile(t, []byte("short")), BaseURL: "http://localhost"},
		"dir is a file":  {Dir: filepath.Join(dirWithKeyFile(t, []byte("x")), ".signing-key"), BaseURL: "http://localhost"},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := local.New(opts); err == nil {
				t.Errorf("New(%+v) succeeded, want an error", opts)
			}
		})
	}
}

func dirWithKeyFile(t *testing.T, key []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".signing-key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSigningKeySharedThroughDir checks that stores opened concurrently on
// one directory (an API and a worker) accept each other's URLs, and a store
// on another directory does not.
func TestSigningKeySharedThroughDir(t *testing.T) {
	dir := t.TempDir()
	stores := make([]*local.Store, 8)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			s, err := local.New(local.Options{Dir: dir, BaseURL: "http://api.test"})
			if err != nil {
				t.Errorf("New: %v", err)
			}
			stores[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	fi, err := os.Stat(filepath.Join(dir, ".signing-key"))
	if err != nil || fi.Size() != 32 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key file: %v, %v; want 32 bytes, mode 0600", fi, err)
	}
	if err := stores[0].Put(t.Context(), "k", strings.NewReader("shared"), 6, "text/plain"); err != nil {
		t.Fatal(err)
	}
	url, err := stores[0].PresignGet(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range stores[1:] {
		if rec := serve(s, http.MethodGet, url, nil); rec.Code != http.StatusOK || rec.Body.String() != "shared" {
			t.Errorf("store %d: GET = %d %q, want 200 %q", i+1, rec.Code, rec.Body, "shared")
		}
	}
	other, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://api.test"})
	if err != nil {
		t.Fatal(err)
	}
	if rec := serve(other, http.MethodGet, url, nil); rec.Code != http.StatusForbidden {
		t.Errorf("store with another key: GET = %d, want 403", rec.Code)
	}
}

func TestExplicitSigningKey(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	a, errA := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://a.test", SigningKey: key})
	b, errB := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://b.test", SigningKey: key})
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	url, err := a.PresignPut(t.Context(), "x/y", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://a.test/blobs/x/y?") {
		t.Errorf("PresignPut = %q, want it under http://a.test/blobs/x/y", url)
	}
	if rec := serve(b, http.MethodPut, url, strings.NewReader("body")); rec.Code != http.StatusOK {
		t.Errorf("PUT on a store sharing the key = %d %s, want 200", rec.Code, rec.Body)
	}
}

// serve runs one request through s.Handler.
func serve(s *local.Store, method, url string, body io.Reader) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(method, url, body))
	return rec
}

func TestHandlerProblems(t *testing.T) {
	s := newServedStore(t, local.Options{Dir: t.TempDir()})
	if err := s.Put(t.Context(), "exists", strings.NewReader("x"), 1, ""); err != nil {
		t.Fatal(err)
	}
	getURL := presign(t, s.PresignGet, "exists")
	tests := []struct {
		name   string
		method string
		url    string
		want   int
	}{
		{"no signature", http.MethodGet, strings.Split(getURL, "?")[0], http.StatusForbidden},
		{"bad signature", http.MethodGet, strings.Replace(getURL, "X-Aviary-Signature=", "X-Aviary-Signature=00", 1), http.StatusForbidden},
		{"moved expiry", http.MethodGet, strings.Replace(getURL, "X-Aviary-Expires=", "X-Aviary-Expires=9", 1), http.StatusForbidden},
		{"wrong method", http.MethodPost, getURL, http.StatusForbidden},
		{"missing object", http.MethodGet, presign(t, s.PresignGet, "missing"), http.StatusNotFound},
		{"outside prefix", http.MethodGet, "http://api.test/other/exists", http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(s, tc.method, tc.url, nil)
			checkProblem(t, rec, tc.want)
		})
	}
}

func checkProblem(t *testing.T, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status = %d %s, want %d", rec.Code, rec.Body, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != want || p.Title == "" || p.Detail == "" {
		t.Errorf("problem body %s (err %v), want title, detail and status %d", rec.Body, err, want)
	}
}

func presign(t *testing.T, fn func(context.Context, string, time.Duration) (string, error), key string) string {
	t.Helper()
	u, err := fn(t.Context(), key, time.Minute)
	if err != nil {
		t.Fatalf("presign %q: %v", key, err)
	}
	return u
}

func TestHandlerUploadTooLarge(t *testing.T) {
	s := newServedStore(t, local.Options{Dir: t.TempDir(), MaxUploadBytes: 10})
	tests := []struct {
		name          string
		body          io.Reader
		contentLength int64
		want          int
	}{
		{"declared length over limit", strings.NewReader("01234567890"), 11, http.StatusRequestEntityTooLarge},
		{"chunked body over limit", io.MultiReader(strings.NewReader("01234567890")), -1, http.StatusRequestEntityTooLarge},
		{"exactly the limit", strings.NewReader("0123456789"), 10, http.StatusOK},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "limit/" + string(rune('a'+i))
			req := httptest.NewRequest(http.MethodPut, presign(t, s.PresignPut, key), tc.body)
			req.ContentLength = tc.contentLength
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			_, err := s.Stat(t.Context(), key)
			if tc.want == http.StatusOK {
				if rec.Code != http.StatusOK || err != nil {
					t.Errorf("PUT = %d %s, Stat err %v; want 200 and a stored object", rec.Code, rec.Body, err)
				}
				return
			}
			checkProblem(t, rec, tc.want)
			if !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Stat after refused PUT: err = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestHandlerHeaders checks PUT's ETag and the headers of GET and HEAD.
func TestHandlerHeaders(t *testing.T) {
	s := newServedStore(t, local.Options{Dir: t.TempDir()})
	const body = "id,status\n1,ok\n"
	req := httptest.NewRequest(http.MethodPut, presign(t, s.PresignPut, "r/report.csv"), strings.NewReader(body))
	req.Header.Set("Content-Type", "text/csv")
	put := httptest.NewRecorder()
	s.Handler().ServeHTTP(put, req)
	etag := put.Header().Get("ETag")
	if put.Code != http.StatusOK || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("PUT = %d, ETag %q; want 200 and a quoted ETag", put.Code, etag)
	}
	getURL := presign(t, s.PresignGet, "r/report.csv")
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		rec := serve(s, method, getURL, nil)
		h := rec.Header()
		wantBody := body
		if method == http.MethodHead {
			wantBody = ""
		}
		if rec.Code != http.StatusOK || rec.Body.String() != wantBody {
			t.Errorf("%s = %d %q, want 200 %q", method, rec.Code, rec.Body, wantBody)
		}
		if h.Get("Content-Type") != "text/csv" || h.Get("Content-Length") != strconv.Itoa(len(body)) || h.Get("ETag") != etag {
			t.Errorf("%s headers: Content-Type %q, Content-Length %q, ETag %q; want text/csv, %d, %s",
				method, h.Get("Content-Type"), h.Get("Content-Length"), h.Get("ETag"), len(body), etag)
		}
		if _, err := http.ParseTime(h.Get("Last-Modified")); err != nil {
			t.Errorf("%s Last-Modified %q: %v", method, h.Get("Last-Modified"), err)
		}
	}
}

// TestNoTempFilesLeft checks successful and failed writes clean up.
func TestNoTempFilesLeft(t *testing.T) {
	dir := t.TempDir()
	s := newServedStore(t, local.Options{Dir: dir})
	if err := s.Put(t.Context(), "ok", strings.NewReader("fine"), -1, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "bad", strings.NewReader("short"), 100, ""); err == nil {
		t.Fatal("Put with a short body succeeded")
	}
	entries, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil || len(entries) != 0 {
		t.Errorf("tmp dir holds %v (err %v), want it empty", entries, err)
	}
}

func TestPingFailsWhenUnwritable(t *testing.T) {
	dir := t.TempDir()
	s := newServedStore(t, local.Options{Dir: dir})
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping on a fresh store: %v", err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := errors.Join(os.Remove(tmp), os.WriteFile(tmp, nil, 0o600)); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping succeeded although the store cannot create files")
	}
}
