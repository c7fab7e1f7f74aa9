package local_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/local"
)

// TestMultipartStaging checks where an upload's parts live: outside
// objects/ (so no presigned URL reaches them), and gone, with no temp files
// left, once the upload is completed or aborted.
func TestMultipartStaging(t *testing.T) {
	dir := t.TempDir()
	s := newServedStore(t, local.Options{Dir: dir})
	ctx := t.Context()
	done, err := s.CreateMultipart(ctx, "staged/done", "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	aborted, err := s.CreateMultipart(ctx, "staged/aborted", "")
	if err != nil {
		t.Fatal(err)
	}
	part := uploadString(t, s, "staged/done", done, "part data")
	uploadString(t, s, "staged/aborted", aborted, "other data")
	if n := countFiles(t, filepath.Join(dir, "objects")); n != 0 {
		t.Errorf("objects/ holds %d files before completion, want 0", n)
	}
	if n := countFiles(t, filepath.Join(dir, ".uploads")); n != 4 {
		t.Errorf(".uploads/ holds %d files, want 4 (two upload.json, two parts)", n)
	}
	for _, key := range []string{".uploads/" + done + "/upload.json", ".uploads/" + done} {
		if rec := serve(s, http.MethodGet, presign(t, s.PresignGet, key), nil); rec.Code != http.StatusNotFound {
			t.Errorf("presigned GET %s = %d, want 404", key, rec.Code)
		}
	}
	if _, err := s.CompleteMultipart(ctx, "staged/done", done, []blob.Part{part}); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortMultipart(ctx, "staged/aborted", aborted); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{".uploads", "tmp"} {
		if n := countFiles(t, filepath.Join(dir, sub)); n != 0 {
			t.Errorf("%s/ holds %d files after complete and abort, want 0", sub, n)
		}
	}
}

// TestStaleUploadsRemoved checks New deletes uploads idle for over a day.
func TestStaleUploadsRemoved(t *testing.T) {
	dir := t.TempDir()
	s := newServedStore(t, local.Options{Dir: dir})
	stale, err := s.CreateMultipart(t.Context(), "idle/stale", "")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.CreateMultipart(t.Context(), "idle/fresh", "")
	if err != nil {
		t.Fatal(err)
	}
	uploadString(t, s, "idle/stale", stale, "old part")
	old := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".uploads", stale), old, old); err != nil {
		t.Fatal(err)
	}
	reopened := newServedStore(t, local.Options{Dir: dir})
	if _, err := reopened.ListParts(t.Context(), "idle/stale", stale); !errors.Is(err, blob.ErrUploadNotFound) {
		t.Errorf("ListParts of the stale upload: err = %v, want ErrUploadNotFound", err)
	}
	if _, err := reopened.ListParts(t.Context(), "idle/fresh", fresh); err != nil {
		t.Errorf("ListParts of the fresh upload: %v", err)
	}
	if n := countFiles(t, filepath.Join(dir, "tmp")); n != 0 {
		t.Errorf("tmp/ holds %d files, want 0", n)
	}
}

func uploadString(t *testing.T, s *local.Store, key, id, data string) blob.Part {
	t.Helper()
	p, err := s.UploadPart(t.Context(), key, id, 1, strings.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("UploadPart(%s): %v", key, err)
	}
	return p
}

// countFiles counts the regular files under root.
func countFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
