package media

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-5 * time.Hour)
	mk := func(name string, mtime time.Time, files ...string) string {
		path := filepath.Join(dir, name)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			fp := filepath.Join(path, f)
			if err := os.WriteFile(fp, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(fp, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stale := mk("media-1-abc", old, "original", "out.mp4")
	busy := mk("media-2-def", old, "original")
	if err := os.Chtimes(filepath.Join(busy, "original"), now, now); err != nil { // still being written
		t.Fatal(err)
	}
	fresh := mk("media-3-ghi", now)
	other := mk("unrelated-1-x", old)

	p := &Processor{TempDir: dir, Clock: func() time.Time { return now }}
	n, err := p.RemoveStale(3 * time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("RemoveStale = %d, %v; want 1 removed", n, err)
	}
	for path, want := range map[string]bool{stale: false, busy: true, fresh: true, other: true} {
		_, err := os.Stat(path)
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(path), got, want)
		}
	}
}
