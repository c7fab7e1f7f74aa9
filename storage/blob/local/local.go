// Package local is the filesystem blob.Store driver, the default for
// one-machine runs. Objects live under Options.Dir; presigned URLs point at
// the API's own /blobs/ endpoint, served by Store.Handler and authenticated
// by an HMAC-SHA256 signature shared by every process using the directory.
//
// On-disk layout (all under Dir):
//
//	.signing-key             32 random bytes, 0600 (unless Options.SigningKey)
//	.uploads/<id>/           open multipart uploads (see CreateMultipart)
//	tmp/                     in-flight writes, renamed into objects/ when complete
//	objects/a.d/b.d/c.blob   the bytes of key "a/b/c"
//	objects/a.d/b.d/c.meta   JSON sidecar: content type and ETag
//
// Directory segments end in ".d" and objects in ".blob", so keys "a" and
// "a/b" can coexist (as they can in S3) without a file/directory clash. Each
// key segment must fit the filesystem's name limit (255 bytes on most
// filesystems, minus the 5-byte suffix).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

// DefaultMaxUploadBytes is the default limit on one presigned upload.
const DefaultMaxUploadBytes int64 = 10 << 30

const (
	objectsDir = "objects"
	uploadsDir = ".uploads"
	tmpDir     = "tmp"
	dirSuffix  = ".d"
	dataSuffix = ".blob"
	metaSuffix = ".meta"
)

// Options configures a Store.
type Options struct {
	// Dir is the root directory; it is created if missing.
	Dir string
	// BaseURL is the externally visible base URL of the API serving
	// Handler, for example "http://localhost:8080". Presigned URLs are
	// BaseURL + "/blobs/" + key + signature query.
	BaseURL string
	// SigningKey authenticates presigned URLs. If empty, the key is read
	// from Dir/.signing-key, which is created (32 random bytes, mode 0600)
	// if missing, so processes sharing Dir agree on it.
	SigningKey []byte
	// MaxUploadBytes limits a single upload through Handler (413 beyond
	// it). Zero means DefaultMaxUploadBytes. Put itself is not limited.
	MaxUploadBytes int64
	// Logger receives internal errors of Handler; nil means slog.Default().
	Logger *slog.Logger
}

// Store is a blob.Store on the local filesystem. It is safe for concurrent
// use by several goroutines and by several processes sharing Dir.
type Store struct {
	objects string
	uploads string
	tmp     string
	baseURL string
	signer  *blob.URLSigner
	maxPut  int64
	log     *slog.Logger
}

var _ blob.Store = (*Store)(nil)

// New opens (creating if needed) a store rooted at opts.Dir.
func New(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("local blob store: Dir is required")
	}
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	s := &Store{
		objects: filepath.Join(opts.Dir, objectsDir),
		uploads: filepath.Join(opts.Dir, uploadsDir),
		tmp:     filepath.Join(opts.Dir, tmpDir),
		baseURL: base,
		maxPut:  opts.MaxUploadBytes,
		log:     opts.Logger,
	}
	if s.maxPut <= 0 {
		s.maxPut = DefaultMaxUploadBytes
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, d := range []string{s.objects, s.uploads, s.tmp} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("local blob store: %w", err)
		}
	}
	removeStaleTemps(s.tmp, staleTempAge)
	s.removeStaleUploads(staleUploadAge)
	key := opts.SigningKey
	if len(key) == 0 {
		if key, err = loadOrCreateKey(filepath.Join(opts.Dir, signingKeyFile)); err != nil {
			return nil, err
		}
	}
	if s.signer, err = blob.NewURLSigner(key); err != nil {
		return nil, fmt.Errorf("local blob store: %w", err)
	}
	return s, nil
}

// staleTempAge is how old a temp file must be before New deletes it as the
// leftover of a crashed write.
const staleTempAge = 24 * time.Hour

// removeStaleTemps deletes leftovers of crashed writes (files, and
// directories of multipart uploads being created or removed); errors are
// ignored.
func removeStaleTemps(dir string, age time.Duration) {
	for _, name := range staleEntries(dir, age) {
		os.RemoveAll(filepath.Join(dir, name))
	}
}

// staleEntries lists the names of dir's entries last modified more than age
// ago.
func staleEntries(dir string, age time.Duration) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			names = append(names, e.Name())
		}
	}
	return names
}

func parseBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("local blob store: BaseURL %q must be an absolute http(s) URL", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// Put stores r under key atomically: it streams into a temporary file,
// fsyncs it and renames it into place. size is the exact length, or -1.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := blob.CheckKey("put", key); err != nil {
		return err
	}
	if _, err := s.write(ctx, key, r, size, contentType); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Get opens key for reading; the caller closes the reader.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	if err := blob.CheckKey("get", key); err != nil {
		return nil, blob.Info{}, err
	}
	f, info, _, err := s.open(key)
	if err != nil {
		return nil, blob.Info{}, fmt.Errorf("get %s: %w", key, err)
	}
	return f, info, nil
}

// Stat describes key without reading it.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.CheckKey("stat", key); err != nil {
		return blob.Info{}, err
	}
	data, metaPath := s.paths(key)
	fi, err := os.Stat(data)
	if err != nil {
		return blob.Info{}, fmt.Errorf("stat %s: %w", key, notFound(err))
	}
	m := readMeta(metaPath)
	return infoOf(key, fi, m), nil
}

// Delete removes key; deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.CheckKey("delete", key); err != nil {
		return err
	}
	data, metaPath := s.paths(key)
	for _, p := range []string{data, metaPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	s.pruneDirs(filepath.Dir(data))
	return nil
}

// Ping checks that the store's directory is writable.
func (s *Store) Ping(ctx context.Context) error {
	f, err := os.CreateTemp(s.tmp, "ping-*")
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	_, werr := f.Write([]byte{0})
	cerr := f.Close()
	rerr := os.Remove(f.Name())
	if err := errors.Join(werr, cerr, rerr); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// paths maps a valid key to its data and sidecar files.
func (s *Store) paths(key string) (data, meta string) {
	parts := strings.Split(key, "/")
	for i := range parts[:len(parts)-1] {
		parts[i] += dirSuffix
	}
	base := filepath.Join(s.objects, filepath.Join(parts...))
	return base + dataSuffix, base + metaSuffix
}

// open opens key's data file and describes it.
func (s *Store) open(key string) (*os.File, blob.Info, meta, error) {
	data, metaPath := s.paths(key)
	f, err := os.Open(data)
	if err != nil {
		return nil, blob.Info{}, meta{}, notFound(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, blob.Info{}, meta{}, err
	}
	m := readMeta(metaPath)
	return f, infoOf(key, fi, m), m, nil
}

// pruneDirs removes now-empty directories from dir up to the objects root.
// Failures (typically "directory not empty") end the walk silently.
func (s *Store) pruneDirs(dir string) {
	for dir != s.objects && strings.HasPrefix(dir, s.objects) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

func infoOf(key string, fi fs.FileInfo, m meta) blob.Info {
	return blob.Info{Key: key, Size: fi.Size(), LastModified: fi.ModTime().UTC(), ContentType: m.ContentType}
}

// notFound maps a missing file to blob.ErrNotFound, keeping other errors.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return blob.ErrNotFound
	}
	return err
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
