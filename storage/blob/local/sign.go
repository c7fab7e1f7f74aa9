package local

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

// Query parameters of a presigned URL.
const (
	paramMethod    = "X-Aviary-Method"
	paramExpires   = "X-Aviary-Expires"
	paramSignature = "X-Aviary-Signature"
)

const (
	signingKeyFile = ".signing-key"
	signingKeySize = 32
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

func (s *Store) presign(op, method, key string, ttl time.Duration) (string, error) {
	if err := blob.CheckKey(op, key); err != nil {
		return "", err
	}
	if err := blob.CheckTTL(op, key, ttl); err != nil {
		return "", err
	}
	expires := strconv.FormatInt(time.Now().Add(ttl).Unix(), 10)
	q := url.Values{
		paramMethod:    {method},
		paramExpires:   {expires},
		paramSignature: {hex.EncodeToString(s.sign(method, key, expires))},
	}
	return s.baseURL + pathPrefix + escapeKey(key) + "?" + q.Encode(), nil
}

// sign is HMAC-SHA256 over method "\n" key "\n" expires.
func (s *Store) sign(method, key, expires string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(method + "\n" + key + "\n" + expires))
	return m.Sum(nil)
}

// Reasons a presigned request is refused.
var (
	errBadSignature = errors.New("the URL's signature is missing or invalid")
	errWrongMethod  = errors.New("the URL was not signed for this method")
	errExpired      = errors.New("the URL has expired")
)

// verify checks a presigned request for key made with method.
func (s *Store) verify(method, key string, q url.Values, now time.Time) error {
	if q.Get(paramMethod) != method {
		return errWrongMethod
	}
	expires := q.Get(paramExpires)
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil {
		return errBadSignature
	}
	sig, err := hex.DecodeString(q.Get(paramSignature))
	if err != nil || !hmac.Equal(sig, s.sign(method, key, expires)) {
		return errBadSignature
	}
	if now.Unix() > exp {
		return errExpired
	}
	return nil
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
