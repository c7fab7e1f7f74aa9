package local

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aviary-dev/aviary/storage/blob"
)

// copyBufSize is the chunk size used when streaming into a temp file.
const copyBufSize = 256 << 10

// meta is the JSON sidecar stored next to each object.
type meta struct {
	ContentType string `json:"content_type"`
	ETag        string `json:"etag"`
}

// readMeta loads a sidecar; a missing or unreadable one yields defaults.
func readMeta(path string) meta {
	var m meta
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m.ContentType == "" {
		m.ContentType = blob.DefaultContentType
	}
	return m
}

// readError marks a failure of the caller's reader (as opposed to the disk),
// so Handler can answer 4xx rather than 500.
type readError struct{ err error }

func (e *readError) Error() string { return "read body: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// markReader wraps every non-EOF error of r in *readError.
type markReader struct{ r io.Reader }

func (m markReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// write streams r into key atomically and returns the new object's ETag.
func (s *Store) write(ctx context.Context, key string, r io.Reader, size int64, contentType string) (string, error) {
	tmpData, etag, _, err := s.spool(ctx, r, size)
	if err != nil {
		return "", err
	}
	if contentType == "" {
		contentType = blob.DefaultContentType
	}
	if err := s.commit(key, tmpData, meta{ContentType: contentType, ETag: etag}); err != nil {
		return "", err
	}
	return etag, nil
}

// commit installs the complete temp file tmpData as key's data, with m as
// its sidecar; tmpData is removed on failure. The data file is renamed into
// place before its sidecar, so for a moment a reader may see the new bytes
// with the previous content type.
func (s *Store) commit(key, tmpData string, m meta) error {
	tmpMeta, err := s.writeMetaTemp(m)
	if err != nil {
		os.Remove(tmpData)
		return err
	}
	data, metaPath := s.paths(key)
	if err := install(tmpData, data); err != nil {
		os.Remove(tmpData)
		os.Remove(tmpMeta)
		return err
	}
	if err := install(tmpMeta, metaPath); err != nil {
		os.Remove(tmpMeta)
		return err
	}
	syncDir(filepath.Dir(data))
	return nil
}

// spool copies r into a fresh fsynced temp file and returns its path, ETag
// and length. With size >= 0 the body must be exactly size bytes.
func (s *Store) spool(ctx context.Context, r io.Reader, size int64) (path, etag string, n int64, err error) {
	f, err := os.CreateTemp(s.tmp, "put-*")
	if err != nil {
		return "", "", 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var src io.Reader = markReader{ctxReader{ctx, r}}
	if size >= 0 {
		src = io.LimitReader(src, size+1)
	}
	h := md5.New()
	if n, err = io.CopyBuffer(io.MultiWriter(f, h), src, make([]byte, copyBufSize)); err != nil {
		return "", "", 0, err
	}
	if size >= 0 && n != size {
		return "", "", 0, &readError{fmt.Errorf("body length differs from declared size %d", size)}
	}
	if err := closeSynced(f); err != nil {
		return "", "", 0, err
	}
	return f.Name(), `"` + hex.EncodeToString(h.Sum(nil)) + `"`, n, nil
}

// closeSynced fsyncs and closes f.
func closeSynced(f *os.File) error {
	serr := f.Sync()
	return errors.Join(serr, f.Close())
}

// writeMetaTemp writes m to a fresh fsynced temp file and returns its path.
func (s *Store) writeMetaTemp(m meta) (string, error) {
	return writeJSONTemp(s.tmp, "meta-*", m)
}

// writeJSONTemp writes v as JSON to a fresh fsynced file in dir, named
// after pattern (see os.CreateTemp), and returns its path.
func writeJSONTemp(dir, pattern string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, closeSynced(f)); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// install renames tmp to dst, creating dst's directory. It retries when a
// concurrent Delete pruned the freshly created directory.
func install(tmp, dst string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
			return err
		}
		if err = os.Rename(tmp, dst); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// syncDir fsyncs a directory so a rename into it survives a crash; errors
// are ignored because not every platform supports it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
