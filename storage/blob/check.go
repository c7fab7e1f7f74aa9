package blob

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidTTL is returned by PresignPut and PresignGet for a lifetime
// outside [1 s, MaxPresignTTL] (see ValidTTL).
var ErrInvalidTTL = errors.New("blob: invalid presign ttl")

// DefaultContentType is what drivers store and report for an object written
// with an empty content type.
const DefaultContentType = "application/octet-stream"

// CheckKey returns nil for a valid key, else ErrInvalidKey wrapped with op
// and the key, for example "put \"a//b\": blob: invalid key".
func CheckKey(op, key string) error {
	if ValidKey(key) {
		return nil
	}
	return fmt.Errorf("%s %q: %w", op, key, ErrInvalidKey)
}

// CheckTTL returns nil for a valid presign lifetime, else ErrInvalidTTL
// wrapped with op and the key.
func CheckTTL(op, key string, ttl time.Duration) error {
	if ValidTTL(ttl) {
		return nil
	}
	return fmt.Errorf("%s %s: ttl %v: %w", op, key, ttl, ErrInvalidTTL)
}
