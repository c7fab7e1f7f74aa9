package blobtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

func testRoundTrip(t *testing.T, s blob.Store) {
	tests := []struct {
		name        string
		key         string
		data        []byte
		unknownSize bool
		seekable    bool
		contentType string
		wantType    string
	}{
		{"seekable with type", "a.txt", []byte("hello, aviary"), false, true, "text/plain; charset=utf-8", "text/plain; charset=utf-8"},
		{"stream with known size", "compliance/42/upload.json", []byte(`{"id":"42"}`), false, false, "application/json", "application/json"},
		{"stream with unknown size", "compliance/42/result", []byte("line 1\nline 2\n"), true, false, "text/plain", "text/plain"},
		{"empty object", "empty", []byte{}, false, true, "application/json", "application/json"},
		{"empty stream unknown size", "empty-stream", []byte{}, true, false, "text/plain", "text/plain"},
		{"default content type", "no/type", []byte{0, 1, 2, 255}, false, false, "", blob.DefaultContentType},
		{"key needing escapes", "dir/with space/ü+%&=.txt", []byte("escaped"), false, true, "text/plain", "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(tc.data)
			if !tc.seekable {
				r = onlyReader{r}
			}
			size := int64(len(tc.data))
			if tc.unknownSize {
				size = -1
			}
			if err := s.Put(t.Context(), tc.key, r, size, tc.contentType); err != nil {
				t.Fatalf("Put: %v", err)
			}
			info, err := s.Stat(t.Context(), tc.key)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			checkInfo(t, "Stat", info, tc.key, int64(len(tc.data)), tc.wantType)
			got, info := Read(t, s, tc.key)
			checkInfo(t, "Get info", info, tc.key, int64(len(tc.data)), tc.wantType)
			if !bytes.Equal(got, tc.data) {
				t.Errorf("Get = %q, want %q", clip(got), clip(tc.data))
			}
		})
	}
}

func testOverwrite(t *testing.T, s blob.Store) {
	const key = "jobs/1/result.json"
	put(t, s, key, []byte("first version, which is longer"), "text/plain")
	put(t, s, key, []byte(`{"v":2}`), "application/json")
	got, info := Read(t, s, key)
	if string(got) != `{"v":2}` {
		t.Errorf("Get after overwrite = %q, want %q", got, `{"v":2}`)
	}
	checkInfo(t, "Get info", info, key, 7, "application/json")
}

// testParentAndChildKeys checks that "p" and "p/c" are independent objects,
// as in S3.
func testParentAndChildKeys(t *testing.T, s blob.Store) {
	keys := []string{"p", "p/c", "p/c/d"}
	for _, k := range keys {
		put(t, s, k, []byte("data of "+k), "text/plain")
	}
	for _, k := range keys {
		mustEqual(t, s, k, []byte("data of "+k))
	}
	if err := s.Delete(t.Context(), "p/c"); err != nil {
		t.Fatalf("Delete(p/c): %v", err)
	}
	_, err := s.Stat(t.Context(), "p/c")
	wantNotFound(t, "Stat(p/c) after Delete", err)
	mustEqual(t, s, "p", []byte("data of p"))
	mustEqual(t, s, "p/c/d", []byte("data of p/c/d"))
}

// testStreamUnknownSize puts ~12 MiB of unknown length (multipart for S3)
// and verifies it by SHA-256.
func testStreamUnknownSize(t *testing.T, s blob.Store) {
	const key = "big/stream.bin"
	const size = 12<<20 + 12345
	want := sha256.New()
	src := io.TeeReader(randomReader(7, size), want)
	if err := s.Put(t.Context(), key, onlyReader{src}, -1, "application/octet-stream"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	info, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if info.Size != size {
		t.Errorf("Stat size = %d, want %d", info.Size, size)
	}
	rc, _, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer rc.Close()
	got := sha256.New()
	n, err := io.Copy(got, rc)
	if err != nil {
		t.Fatalf("Get: read: %v", err)
	}
	if n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Errorf("Get: read %d bytes sha256 %x, want %d bytes sha256 %x", n, got.Sum(nil), size, want.Sum(nil))
	}
}

// testFailedPutKeepsPrevious checks atomicity: a Put whose body fails or is
// short leaves the previous object untouched.
func testFailedPutKeepsPrevious(t *testing.T, s blob.Store) {
	tests := []struct {
		name string
		body io.Reader
		size int64
	}{
		{"known size, reader fails", &failingReader{n: 1 << 20}, 2 << 20},
		{"unknown size, reader fails", &failingReader{n: 1 << 20}, -1},
		{"unknown size, reader fails after a part", &failingReader{n: 7 << 20}, -1},
		{"body shorter than size", onlyReader{strings.NewReader("short")}, 200},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "atomic/" + string(rune('a'+i))
			put(t, s, key, []byte("original"), "text/plain")
			if err := s.Put(t.Context(), key, tc.body, tc.size, "text/plain"); err == nil {
				t.Fatal("Put with a failing body succeeded")
			}
			mustEqual(t, s, key, []byte("original"))
		})
	}
}

// testConcurrentOverwrite has writers alternate two versions while readers
// check they only ever see one complete version.
func testConcurrentOverwrite(t *testing.T, s blob.Store) {
	const key = "race/object"
	const size = 256 << 10
	versions := [][]byte{bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)}
	put(t, s, key, versions[0], "text/plain")
	done := make(chan struct{})
	var readers, writers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				checkWholeVersion(t, s, key, versions)
			}
		})
	}
	for w := range 2 {
		writers.Go(func() {
			for i := range 8 {
				data := versions[(w+i)%2]
				if err := s.Put(t.Context(), key, onlyReader{bytes.NewReader(data)}, -1, "text/plain"); err != nil {
					t.Errorf("Put: %v", err)
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
}

// checkWholeVersion reads key once and reports a torn or partial object.
// It uses t.Errorf, so it may run on any goroutine.
func checkWholeVersion(t *testing.T, s blob.Store, key string, versions [][]byte) {
	rc, _, err := s.Get(t.Context(), key)
	if err != nil {
		t.Errorf("concurrent Get: %v", err)
		return
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Errorf("concurrent Get: read: %v", err)
		return
	}
	for _, v := range versions {
		if bytes.Equal(got, v) {
			return
		}
	}
	t.Errorf("concurrent Get saw a torn object: %d bytes starting %q", len(got), clip(got))
}

func testNotFound(t *testing.T, s blob.Store) {
	put(t, s, "exists", []byte("x"), "text/plain")
	for _, key := range []string{"missing", "missing/deeper/key", "exists/child"} {
		_, err := s.Stat(t.Context(), key)
		wantNotFound(t, "Stat("+key+")", err)
		rc, _, err := s.Get(t.Context(), key)
		if rc != nil {
			rc.Close()
		}
		wantNotFound(t, "Get("+key+")", err)
	}
}

func testDelete(t *testing.T, s blob.Store) {
	const key = "to/delete"
	put(t, s, key, []byte("bye"), "text/plain")
	if err := s.Delete(t.Context(), key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := s.Stat(t.Context(), key)
	wantNotFound(t, "Stat after Delete", err)
	_, _, err = s.Get(t.Context(), key)
	wantNotFound(t, "Get after Delete", err)
	if err := s.Delete(t.Context(), key); err != nil {
		t.Errorf("second Delete = %v, want nil (deleting a missing key is not an error)", err)
	}
	put(t, s, key, []byte("again"), "text/plain")
	mustEqual(t, s, key, []byte("again"))
}

// invalidKeys are keys every driver must reject with blob.ErrInvalidKey.
var invalidKeys = map[string]string{
	"empty":          "",
	"absolute":       "/etc/passwd",
	"trailing slash": "dir/",
	"double slash":   "a//b",
	"dot dot":        "a/../b",
	"only dot dot":   "..",
	"dot segment":    "./a",
	"backslash":      `a\b`,
	"nul byte":       "a\x00b",
	"too long":       strings.Repeat("k", 1025),
}

func testInvalidKey(t *testing.T, s blob.Store) {
	for name, key := range invalidKeys {
		t.Run(name, func(t *testing.T) {
			for method, err := range callAll(t, s, key) {
				if !errors.Is(err, blob.ErrInvalidKey) {
					t.Errorf("%s(%q): err = %v, want errors.Is(err, blob.ErrInvalidKey)", method, clip([]byte(key)), err)
				}
			}
		})
	}
}

// callAll calls every method that takes a key and returns their errors.
func callAll(t *testing.T, s blob.Store, key string) map[string]error {
	ctx := t.Context()
	_, _, getErr := s.Get(ctx, key)
	_, statErr := s.Stat(ctx, key)
	_, pputErr := s.PresignPut(ctx, key, time.Minute)
	_, pgetErr := s.PresignGet(ctx, key, time.Minute)
	return map[string]error{
		"Put":        s.Put(ctx, key, strings.NewReader("x"), 1, "text/plain"),
		"Get":        getErr,
		"Stat":       statErr,
		"Delete":     s.Delete(ctx, key),
		"PresignPut": pputErr,
		"PresignGet": pgetErr,
	}
}

func testInvalidTTL(t *testing.T, s blob.Store) {
	tests := []struct {
		ttl   time.Duration
		valid bool
	}{
		{0, false},
		{-time.Minute, false},
		{999 * time.Millisecond, false},
		{blob.MaxPresignTTL + time.Second, false},
		{30 * 24 * time.Hour, false},
		{time.Second, true},
		{blob.MaxPresignTTL, true},
	}
	for _, tc := range tests {
		for name, presign := range presigners(s) {
			_, err := presign(t.Context(), "ttl/key", tc.ttl)
			if tc.valid && err != nil {
				t.Errorf("%s(ttl %v) = %v, want success", name, tc.ttl, err)
			}
			if !tc.valid && !errors.Is(err, blob.ErrInvalidTTL) {
				t.Errorf("%s(ttl %v): err = %v, want errors.Is(err, blob.ErrInvalidTTL)", name, tc.ttl, err)
			}
		}
	}
}
