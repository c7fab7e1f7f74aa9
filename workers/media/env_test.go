package media

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/blobtest"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
)

var (
	_ Store      = (*postgres.DB)(nil)
	_ SweepStore = (*postgres.DB)(nil)
)

// fixtureDir holds the media files generated once per test run with
// ffmpeg (nothing binary is committed).
var fixtureDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aviary-media-fixtures-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fixture struct {
	once sync.Once
	data []byte
	err  error
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[string]*fixture{}
)

// generated returns the bytes of file name, made once per run by ffmpeg
// with args (the output path is appended).
func generated(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	fixturesMu.Lock()
	f, ok := fixtures[name]
	if !ok {
		f = &fixture{}
		fixtures[name] = f
	}
	fixturesMu.Unlock()
	f.once.Do(func() {
		path := filepath.Join(fixtureDir, name)
		full := append([]string{"-hide_banner", "-nostdin", "-v", "error", "-y"}, args...)
		if out, err := exec.Command("ffmpeg", append(full, path)...).CombinedOutput(); err != nil {
			f.err = fmt.Errorf("generate %s: %v: %s", name, err, out)
			return
		}
		f.data, f.err = os.ReadFile(path)
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f.data
}

// Generated media used by several tests.
func shortVideo(t *testing.T) []byte { // 3 s, 64x48, 10 fps, with a 440 Hz tone
	return generated(t, "short.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3",
		"-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest")
}

func longVideo(t *testing.T) []byte { // 150 s at 1 fps, no audio: over dm_video's default 140 s
	return generated(t, "long.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=1:duration=150",
		"-c:v", "libx264", "-pix_fmt", "yuv420p")
}

func noiseVideo(t *testing.T) []byte { // random pixels, lossless: several MiB
	return generated(t, "noise.mp4", "-f", "lavfi", "-i", "nullsrc=s=640x480:r=10:d=1.5,geq=random(1)*255:128:128",
		"-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
}

// env is a real PostgreSQL database, a local blob store and an uploader.
type env struct {
	db    *postgres.DB
	blobs *local.Store
	owner storage.User
	log   *slog.Logger
	now   time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db, _ := storagetest.NewDB(t)
	blobs, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://127.0.0.1"})
	if err != nil {
		t.Fatalf("local blob store: %v", err)
	}
	return &env{db: db, blobs: blobs, owner: factory.User(t, db, nil), log: slog.New(slog.DiscardHandler),
		now: time.Now().UTC().Truncate(time.Microsecond)}
}

// upload describes media to record the way the API does.
type upload struct {
	mediaType string
	category  string // "" means storage.DefaultMediaCategory
	data      []byte
	sizes     []int // segment sizes, summing to len(data); nil means one segment
	retried   []int // indexes that also get an older copy with other bytes
	owner     storage.User
	expiresAt time.Time // zero: now + storage.MediaUploadTTL
	finalize  bool
}

// record creates the upload, stores its segments (last index first, as
// segments may arrive in any order) and finalizes it if asked.
func (e *env) record(t *testing.T, u upload) storage.Media {
	t.Helper()
	ctx := t.Context()
	id, err := e.db.NextID(ctx)
	if err != nil {
		t.Fatalf("NextID: %v", err)
	}
	if u.category == "" {
		u.category = storage.DefaultMediaCategory(u.mediaType)
	}
	if u.owner.ID == 0 {
		u.owner = e.owner
	}
	if u.expiresAt.IsZero() {
		u.expiresAt = e.now.Add(storage.MediaUploadTTL)
	}
	kind := storage.MediaKindOf(u.category)
	m, err := e.db.CreateMedia(ctx, storage.Media{ID: id, Key: storage.MediaKey(kind, id), OwnerID: u.owner.ID,
		MediaType: u.mediaType, Category: u.category, Kind: kind, TotalBytes: int64(len(u.data)),
		CreatedAt: u.expiresAt.Add(-storage.MediaUploadTTL), ExpiresAt: u.expiresAt})
	if err != nil {
		t.Fatalf("CreateMedia: %v", err)
	}
	e.storeSegments(t, m, u)
	if !u.finalize {
		return m
	}
	if m, err = e.db.FinalizeMedia(ctx, id, e.now); err != nil {
		t.Fatalf("FinalizeMedia: %v", err)
	}
	return m
}

func (e *env) storeSegments(t *testing.T, m storage.Media, u upload) {
	t.Helper()
	sizes := u.sizes
	if sizes == nil {
		sizes = []int{len(u.data)}
	}
	segs := make([][]byte, len(sizes))
	rest := u.data
	for i, n := range sizes {
		segs[i], rest = rest[:n], rest[n:]
	}
	if len(rest) != 0 {
		t.Fatalf("segment sizes leave %d bytes", len(rest))
	}
	at := m.CreatedAt.Add(time.Minute)
	for _, idx := range u.retried {
		e.segment(t, m, idx, bytes.Repeat([]byte{'x'}, len(segs[idx])+7), at)
	}
	for i := len(segs) - 1; i >= 0; i-- {
		e.segment(t, m, i, segs[i], at)
	}
}

// segment stores one copy of segment idx.
func (e *env) segment(t *testing.T, m storage.Media, idx int, data []byte, at time.Time) storage.MediaSegment {
	t.Helper()
	seg := storage.MediaSegment{MediaID: m.ID, Index: idx, Key: storage.MediaSegmentKey(m.ID, randomHex(t)), Size: int64(len(data))}
	if err := e.blobs.Put(t.Context(), seg.Key, bytes.NewReader(data), seg.Size, "application/octet-stream"); err != nil {
		t.Fatalf("Put segment: %v", err)
	}
	if _, err := e.db.AddMediaSegment(t.Context(), seg, at); err != nil {
		t.Fatalf("AddMediaSegment: %v", err)
	}
	return seg
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// processor is a Processor over store (nil: the database) that records
// every progress write.
func (e *env) processor(t *testing.T, store Store) (*Processor, *spyStore) {
	t.Helper()
	if store == nil {
		store = e.db
	}
	spy := &spyStore{Store: store}
	return &Processor{Store: spy, Blobs: e.blobs, Logger: e.log, TempDir: t.TempDir(), ProgressEvery: time.Nanosecond}, spy
}

func process(t *testing.T, p *Processor, id int64) error {
	t.Helper()
	task, err := tasks.NewMediaProcess(id)
	if err != nil {
		t.Fatalf("NewMediaProcess: %v", err)
	}
	return p.ProcessTask(t.Context(), task)
}

func (e *env) load(t *testing.T, id int64) storage.Media {
	t.Helper()
	m, err := e.db.Media(t.Context(), id)
	if err != nil {
		t.Fatalf("Media %d: %v", id, err)
	}
	return m
}

// object returns the bytes and content type of key.
func (e *env) object(t *testing.T, key string) ([]byte, string) {
	t.Helper()
	b, info := blobtest.Read(t, e.blobs, key)
	return b, info.ContentType
}

func (e *env) wantNoObject(t *testing.T, key string) {
	t.Helper()
	if _, err := e.blobs.Stat(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat %s = %v, want blob.ErrNotFound", key, err)
	}
}

// wantSegmentsGone checks that no segment record or object of m is left.
func (e *env) wantSegmentsGone(t *testing.T, m storage.Media, keys []string) {
	t.Helper()
	segs, err := e.db.MediaSegments(t.Context(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 0 {
		t.Errorf("media %d still has %d segment records", m.ID, len(segs))
	}
	for _, k := range keys {
		e.wantNoObject(t, k)
	}
}

func (e *env) segmentKeys(t *testing.T, id int64) []string {
	t.Helper()
	segs, err := e.db.MediaSegments(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(segs))
	for i, s := range segs {
		keys[i] = s.Key
	}
	return keys
}

// wantFailed checks that processing failed for the client's bytes.
func (e *env) wantFailed(t *testing.T, err error, id int64, code int, name, msg string) {
	t.Helper()
	if !errors.Is(err, tasks.ErrClientInput) {
		t.Errorf("ProcessTask error = %v, want one wrapping tasks.ErrClientInput", err)
	}
	m := e.load(t, id)
	if m.State != storage.MediaFailed || m.ErrorCode != code || m.ErrorName != name || !strings.Contains(m.ErrorMessage, msg) {
		t.Errorf("media = %s code %d %s %q, want failed code %d %s containing %q", m.State, m.ErrorCode, m.ErrorName,
			m.ErrorMessage, code, name, msg)
	}
	if m.OutputKey != "" || m.ProcessedAt == nil {
		t.Errorf("failed media output_key %q processed_at %v", m.OutputKey, m.ProcessedAt)
	}
}

// spyStore records progress writes and can fail chosen calls once.
type spyStore struct {
	Store
	mu             sync.Mutex
	progress       []int
	failComplete   error
	failDeleteSegs error
}

func (s *spyStore) SetMediaProgress(ctx context.Context, id int64, percent int) error {
	err := s.Store.SetMediaProgress(ctx, id, percent)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.progress = append(s.progress, percent)
	return err
}

func (s *spyStore) CompleteMedia(ctx context.Context, id int64, r storage.MediaResult, at time.Time) error {
	s.mu.Lock()
	err := s.failComplete
	s.failComplete = nil
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Store.CompleteMedia(ctx, id, r, at)
}

func (s *spyStore) DeleteMediaSegments(ctx context.Context, id int64) error {
	s.mu.Lock()
	err := s.failDeleteSegs
	s.failDeleteSegs = nil
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Store.DeleteMediaSegments(ctx, id)
}

func (s *spyStore) progressWrites() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.progress...)
}
