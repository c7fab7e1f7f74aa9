package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
)

// NonceStore remembers used OAuth nonces so a signed request cannot be
// replayed.
type NonceStore interface {
	// Use records key for ttl. fresh is true when key was not already
	// recorded, false when it was (a replay). An error wrapping
	// storage.ErrUnavailable means the store could not answer: the request
	// is refused with 503 (fail closed), never served unchecked.
	Use(ctx context.Context, key string, ttl time.Duration) (fresh bool, err error)
}

// DefaultNonceTimeout bounds one nonce check of a RedisNonceStore unless
// WithTimeout sets another bound.
const DefaultNonceTimeout = 500 * time.Millisecond

// RedisNonceStore is a NonceStore shared by every API replica: Use is a
// single SET key 1 NX with an expiry, so concurrent replicas agree on which
// request used a nonce first. Nonces live only in Redis: a replay is caught
// only while Redis keeps them (run it with persistence, see
// docs/auth-and-rate-limits.md).
type RedisNonceStore struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
}

// NewRedisNonceStore returns a RedisNonceStore whose keys start with prefix
// and whose checks give up after DefaultNonceTimeout. The client must have
// ContextTimeoutEnabled set, or go-redis ignores the bound and waits for its
// own read timeouts and retries.
func NewRedisNonceStore(client redis.UniversalClient, prefix string) *RedisNonceStore {
	return &RedisNonceStore{client: client, prefix: prefix, timeout: DefaultNonceTimeout}
}

// WithTimeout returns a copy of s whose checks give up after d (d <= 0:
// only the caller's deadline bounds them).
func (s *RedisNonceStore) WithTimeout(d time.Duration) *RedisNonceStore {
	c := *s
	c.timeout = d
	return &c
}

// Use implements NonceStore. Any Redis failure but the caller giving up
// (its context canceled) wraps storage.ErrUnavailable.
func (s *RedisNonceStore) Use(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	fresh, err := s.client.SetNX(ctx, s.prefix+key, 1, ttl).Result()
	if errors.Is(err, context.Canceled) {
		return false, fmt.Errorf("auth: record nonce: %w", err)
	}
	if err != nil {
		return false, fmt.Errorf("auth: record nonce: %w: %w", storage.ErrUnavailable, err)
	}
	return fresh, nil
}

// nonceKey identifies a nonce by consumer key, token and nonce. The parts are
// hashed so arbitrary client strings yield a bounded, unambiguous key.
func nonceKey(consumerKey, token, nonce string) string {
	h := sha256.New()
	for _, part := range []string{consumerKey, token, nonce} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
