// Package blob defines Aviary's object storage seam: one Store interface with
// interchangeable drivers (local filesystem and S3-compatible servers) that
// pass one shared contract suite (package blobtest).
//
// Keys are slash-separated relative paths such as
// "compliance/1858374/upload". A key never starts with "/" and never contains
// "..", "//" or a NUL byte; drivers reject such keys with ErrInvalidKey.
package blob

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// ErrNotFound is returned when the object does not exist.
var ErrNotFound = errors.New("blob: object not found")

// ErrInvalidKey is returned for keys that are empty or could escape the
// store's namespace.
var ErrInvalidKey = errors.New("blob: invalid key")

// MaxPresignTTL is the longest lifetime a presigned URL may have (the S3
// signature v4 limit, which both drivers enforce).
const MaxPresignTTL = 7 * 24 * time.Hour

// Info describes a stored object.
type Info struct {
	Key          string
	Size         int64
	LastModified time.Time
	ContentType  string
}

// Store is the object storage every tier uses.
//
// Put writes the whole object atomically: readers see either the previous
// object or the complete new one, never a partial write. size may be -1 when
// unknown; drivers must then stream without buffering the whole object in
// memory. Get returns ErrNotFound (wrapped) for a missing object; the caller
// closes the returned reader. Presigned URLs let plain HTTP clients PUT or
// GET one key without credentials until they expire (ttl between 1 s and
// MaxPresignTTL).
type Store interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	Stat(ctx context.Context, key string) (Info, error)
	Delete(ctx context.Context, key string) error
	PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error)
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	// Ping reports whether the store is reachable and usable (readiness).
	Ping(ctx context.Context) error
}

// ValidKey reports whether key is acceptable to every driver.
func ValidKey(key string) bool {
	if key == "" || len(key) > 1024 || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return false
	}
	if strings.ContainsRune(key, 0) || strings.Contains(key, "//") || strings.Contains(key, "\\") {
		return false
	}
	for _, part := range strings.Split(key, "/") {
		if part == "." || part == ".." {
			return false
		}
	}
	return true
}

// ValidTTL reports whether ttl is an acceptable presign lifetime.
func ValidTTL(ttl time.Duration) bool {
	return ttl >= time.Second && ttl <= MaxPresignTTL
}
