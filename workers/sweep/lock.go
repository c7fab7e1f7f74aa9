package sweep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisLocker grants leases with SET NX PX and releases only its own lease.
type RedisLocker struct {
	Client redis.UniversalClient
	Prefix string // key prefix, e.g. "aviary:lock:"
}

var releaseScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

// Acquire implements Locker.
func (l RedisLocker) Acquire(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	key := l.Prefix + name
	ok, err := l.Client.SetNX(ctx, key, token, ttl).Result()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", key, err)
	}
	if !ok {
		return nil, false, nil
	}
	release := func() { releaseScript.Run(context.WithoutCancel(ctx), l.Client, []string{key}, token) }
	return release, true, nil
}
