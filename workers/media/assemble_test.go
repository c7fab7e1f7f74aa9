package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/tasks"
)

// plainStore hides the local store's Multiparter.
type plainStore struct{ blob.Store }

// partsSpy records the size of every uploaded part.
type partsSpy struct {
	*local.Store
	mu    sync.Mutex
	sizes []int64
}

func (s *partsSpy) UploadPart(ctx context.Context, key, id string, n int, r io.Reader, size int64) (blob.Part, error) {
	s.mu.Lock()
	s.sizes = append(s.sizes, size)
	s.mu.Unlock()
	return s.Store.UploadPart(ctx, key, id, n, r, size)
}

// TestAssemble: the newest copy of each segment, whatever their sizes and
// arrival order, ends up in order in the original and the working file;
// with multipart uploads, in parts of at least 5 MiB but the last; then
// every segment copy is deleted, and the assembled video processes.
func TestAssemble(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	data := noiseVideo(t)
	head := []int{3 << 20, 1 << 20, 100 << 10, 2 << 20, 300 << 10}
	used := 0
	for _, n := range head {
		used += n
	}
	if len(data) <= used {
		t.Fatalf("noise video is %d bytes, want more than %d", len(data), used)
	}
	sizes := append(slices.Clone(head), len(data)-used)
	tests := []struct {
		name      string
		multipart bool
		wantParts []int64
	}{
		{name: "multipart", multipart: true, wantParts: []int64{6<<20 + 100<<10, int64(300<<10 + len(data) - used)}},
		{name: "plain store", multipart: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := e.record(t, upload{mediaType: "video/mp4", data: data, sizes: sizes, retried: []int{1, 3}, finalize: true})
			keys := e.segmentKeys(t, m.ID)
			if len(keys) != len(sizes)+2 {
				t.Fatalf("%d segment copies stored, want %d", len(keys), len(sizes)+2)
			}
			p, _ := e.processor(t, nil)
			spy := &partsSpy{Store: e.blobs}
			p.Blobs = plainStore{e.blobs}
			if tc.multipart {
				p.Blobs = spy
			}
			path := filepath.Join(t.TempDir(), "original")
			size, err := p.fetch(t.Context(), m, path)
			if err != nil {
				t.Fatalf("fetch: %v", err)
			}
			working, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			original, ctype := e.object(t, storage.MediaOriginalKey(m.ID))
			if size != int64(len(data)) || !bytes.Equal(working, data) || !bytes.Equal(original, data) || ctype != "video/mp4" {
				t.Errorf("assembled %d bytes: working file equal %v, original equal %v (%s)", size,
					bytes.Equal(working, data), bytes.Equal(original, data), ctype)
			}
			if !slices.Equal(spy.sizes, tc.wantParts) {
				t.Errorf("parts %v, want %v", spy.sizes, tc.wantParts)
			}
			e.wantSegmentsGone(t, m, keys)
			if err := process(t, p, m.ID); err != nil {
				t.Fatalf("ProcessTask after assembly: %v", err)
			}
			e.wantVideo(t, m.ID, wantVideo{width: 640, height: 480, outW: 640, outH: 480, aspect: "4:3", durationMS: 1500})
		})
	}
}

func TestPartGroups(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		sizes []int64
		want  [][]int64
	}{
		{[]int64{10}, [][]int64{{10}}},
		{[]int64{mib, mib, mib}, [][]int64{{mib, mib, mib}}},
		{[]int64{5 * mib, 1}, [][]int64{{5 * mib}, {1}}},
		{[]int64{5 * mib, 5 * mib}, [][]int64{{5 * mib}, {5 * mib}}},
		{[]int64{2 * mib, 3*mib - 1, 1, 4 * mib, mib, 2}, [][]int64{{2 * mib, 3*mib - 1, 1}, {4 * mib, mib}, {2}}},
		{[]int64{4 * mib, 512 << 10, 2 * mib, 3 * mib}, [][]int64{{4 * mib, 512 << 10, 2 * mib}, {3 * mib}}},
	}
	for _, tc := range tests {
		segs := make([]storage.MediaSegment, len(tc.sizes))
		for i, n := range tc.sizes {
			segs[i] = storage.MediaSegment{Index: i, Size: n}
		}
		var got [][]int64
		for _, g := range partGroups(segs) {
			var sizes []int64
			for _, s := range g {
				sizes = append(sizes, s.Size)
			}
			got = append(got, sizes)
		}
		if !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("partGroups(%v) = %v, want %v", tc.sizes, got, tc.want)
		}
	}
}

func TestNewestCopies(t *testing.T) {
	segs := []storage.MediaSegment{{Index: 0, Seq: 1}, {Index: 1, Seq: 2}, {Index: 1, Seq: 5}, {Index: 2, Seq: 3},
		{Index: 3, Seq: 4}, {Index: 3, Seq: 6}, {Index: 3, Seq: 7}}
	var got []int64
	for _, s := range newestCopies(segs) {
		got = append(got, s.Seq)
	}
	if want := []int64{1, 5, 3, 7}; !slices.Equal(got, want) {
		t.Errorf("newest copies %v, want seqs %v", got, want)
	}
}

// TestProcessRetryAfterAssembly: an attempt that fails after the original
// was stored leaves the media in progress; the retry works from the
// original (whether or not the segment records were removed).
func TestProcessRetryAfterAssembly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	data := encodeImage(t, "jpeg", 48, 32)
	tests := []struct {
		name string
		fail func(*spyStore)
	}{
		{"complete fails", func(s *spyStore) { s.failComplete = errors.New("database went away") }},
		{"segment records stay", func(s *spyStore) { s.failDeleteSegs = errors.New("database went away") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := e.record(t, upload{mediaType: "image/jpeg", data: data, sizes: []int{10, len(data) - 10}, finalize: true})
			keys := e.segmentKeys(t, m.ID)
			p, spy := e.processor(t, nil)
			tc.fail(spy)
			err := process(t, p, m.ID)
			if err == nil || errors.Is(err, tasks.ErrClientInput) {
				t.Fatalf("first attempt = %v, want a retryable error", err)
			}
			if got := e.load(t, m.ID); got.State != storage.MediaInProgress {
				t.Fatalf("after the failed attempt media is %s, want in_progress", got.State)
			}
			if err := process(t, p, m.ID); err != nil {
				t.Fatalf("retry: %v", err)
			}
			e.wantPhoto(t, m.ID, 48, 32, "jpeg")
			if got := e.load(t, m.ID).Attempts; got != 2 {
				t.Errorf("attempts = %d, want 2", got)
			}
			if original, _ := e.object(t, storage.MediaOriginalKey(m.ID)); !bytes.Equal(original, data) {
				t.Error("original differs from the upload")
			}
			e.wantSegmentsGone(t, m, keys)
		})
	}
}

// TestAssembleMissingSegment: a segment object that is gone is an internal
// error (retried); no original is stored.
func TestAssembleMissingSegment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	data := encodeImage(t, "png", 20, 20)
	m := e.record(t, upload{mediaType: "image/png", data: data, sizes: []int{5, 5, len(data) - 10}, finalize: true})
	keys := e.segmentKeys(t, m.ID)
	if err := e.blobs.Delete(t.Context(), keys[1]); err != nil {
		t.Fatal(err)
	}
	p, _ := e.processor(t, nil)
	err := process(t, p, m.ID)
	if err == nil || errors.Is(err, tasks.ErrClientInput) || !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("ProcessTask = %v, want a retryable error wrapping blob.ErrNotFound", err)
	}
	e.wantNoObject(t, storage.MediaOriginalKey(m.ID))
	if got := e.load(t, m.ID); got.State != storage.MediaInProgress {
		t.Errorf("media is %s, want in_progress", got.State)
	}
	if left := e.segmentKeys(t, m.ID); len(left) != len(keys) {
		t.Errorf("%d segment records left, want all %d", len(left), len(keys))
	}
}
