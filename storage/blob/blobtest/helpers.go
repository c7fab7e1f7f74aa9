package blobtest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

// onlyReader hides every method but Read (no Seek, no WriteTo, no Len), so
// drivers see the kind of stream an HTTP request body is.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// failingReader yields n bytes of data and then fails with errBoom.
type failingReader struct{ n int }

var errBoom = errors.New("blobtest: reader failed on purpose")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBoom
	}
	p = p[:min(len(p), f.n)]
	for i := range p {
		p[i] = 'x'
	}
	f.n -= len(p)
	return len(p), nil
}

// randomReader is a deterministic pseudo-random stream of n bytes.
func randomReader(seed byte, n int64) io.Reader {
	var s [32]byte
	s[0] = seed
	return io.LimitReader(rand.NewChaCha8(s), n)
}

// put stores data under key (known size) or fails the test.
func put(t *testing.T, s blob.Store, key string, data []byte, contentType string) {
	t.Helper()
	if err := s.Put(t.Context(), key, bytes.NewReader(data), int64(len(data)), contentType); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// get reads key fully or fails the test.
// Read returns the whole object at key of s and its Info, failing the test
// if it cannot be read.
func Read(t testing.TB, s blob.Store, key string) ([]byte, blob.Info) {
	t.Helper()
	rc, info, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q): read: %v", key, err)
	}
	return data, info
}

// mustEqual fails the test if key does not hold want.
func mustEqual(t *testing.T, s blob.Store, key string, want []byte) {
	t.Helper()
	got, _ := Read(t, s, key)
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %q, want %q", key, clip(got), clip(want))
	}
}

// checkInfo compares an Info with what was written.
func checkInfo(t *testing.T, what string, got blob.Info, key string, size int64, contentType string) {
	t.Helper()
	if got.Key != key || got.Size != size || got.ContentType != contentType {
		t.Errorf("%s = {Key:%q Size:%d ContentType:%q}, want {Key:%q Size:%d ContentType:%q}",
			what, got.Key, got.Size, got.ContentType, key, size, contentType)
	}
	if d := time.Since(got.LastModified); d < -time.Minute || d > time.Minute {
		t.Errorf("%s.LastModified = %v, want within a minute of now", what, got.LastModified)
	}
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("%s: err = %v, want errors.Is(err, blob.ErrNotFound)", what, err)
	}
}

// clip shortens data for error messages.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return append(b[:64:64], "..."...)
	}
	return b
}
