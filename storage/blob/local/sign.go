package local

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

const (
	signingKeyFile = ".signing-key"
	signingKeySize = blob.SigningKeySize
)

// PresignPut returns a URL that lets a plain HTTP client PUT key until ttl
// elapses.
func (s *Store) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error) {
	return s.presign("presign put", http.MethodPut, key, ttl)
}

// PresignGet returns a URL that lets a plain HTTP client GET (or HEAD) key
// until ttl elapses.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	return s.presign("presign get", http.MethodGet, key, ttl)
}

// presign signs method on key (the resource, see blob.URLSigner) until ttl
// elapses.
func (s *Store) presign(op, method, key string, ttl time.Duration) (string, error) {
	if err := blob.CheckKey(op, key); err != nil {
		return "", err
	}
	if err := blob.CheckTTL(op, key, ttl); err != nil {
		return "", err
	}
	q := s.signer.Sign(method, key, time.Now().Add(ttl))
	return s.baseURL + pathPrefix + escapeKey(key) + "?" + q.Encode(), nil
}

// verify checks a presigned request for key made with method.
func (s *Store) verify(method, key string, q url.Values, now time.Time) error {
	return s.signer.Verify(method, key, q, now)
}

// escapeKey path-escapes each segment of key.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// loadOrCreateKey reads the signing key at path, creating it atomically
// (temp file + hard link, so concurrent starters agree) if missing.
func loadOrCreateKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("local blob store: create signing key: %w", err)
	}
	return readKey(path)
}

func readKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(key) < signingKeySize {
		return nil, fmt.Errorf("local blob store: signing key %s is shorter than %d bytes", path, signingKeySize)
	}
	return key, nil
}

// createKey writes a random key to a temp file and links it to path; it
// fails with fs.ErrExist if another process got there first.
func createKey(path string) error {
	key := make([]byte, signingKeySize)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".signing-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(key)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return err
	}
	return os.Link(f.Name(), path)
}
