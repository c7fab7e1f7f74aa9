package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// NonceStore remembers used OAuth nonces so a signed request cannot be
// replayed.
type NonceStore interface {
	// Use records key for ttl. fresh is true when key was not already
	// recorded, false when it was (a replay).
	Use(ctx context.Context, key string, ttl time.Duration) (fresh bool, err error)
}

// RedisNonceStore is a NonceStore shared by every API replica: Use is a
// single SET key 1 NX with an expiry, so concurrent replicas agree on which
// request used a nonce first.
type RedisNonceStore struct {
	client redis.UniversalClient
	prefix string
}

// NewRedisNonceStore returns a RedisNonceStore whose keys start with prefix.
func NewRedisNonceStore(client redis.UniversalClient, prefix string) *RedisNonceStore {
	return &RedisNonceStore{client: client, prefix: prefix}
}

// Use implements NonceStore.
func (s *RedisNonceStore) Use(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	fresh, err := s.client.SetNX(ctx, s.prefix+key, 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("auth: record nonce: %w", err)
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
