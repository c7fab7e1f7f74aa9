package storagetest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisAddr is the Redis server tests use (AVIARY_TEST_REDIS_ADDR, default
// 127.0.0.1:6379).
func RedisAddr() string {
	return cmp.Or(os.Getenv("AVIARY_TEST_REDIS_ADDR"), "127.0.0.1:6379")
}

const claimKey = "aviary:test:claim"

// RedisDB claims a whole Redis logical database (1-15) for this test, so
// queues (asynq has no key prefix) never collide with concurrent test runs.
// The database is flushed when claimed and when released.
func RedisDB(t testing.TB) (addr string, db int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	owner := RandomSuffix(8)
	for time.Now().Before(deadline) {
		for n := 1; n <= 15; n++ {
			if claimRedisDB(ctx, t, n, owner) {
				t.Cleanup(func() { releaseRedisDB(n, owner) })
				return RedisAddr(), n
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("no free Redis database on %s after 3 minutes", RedisAddr())
	return "", 0
}

func claimRedisDB(ctx context.Context, t testing.TB, n int, owner string) bool {
	c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
	defer c.Close()
	ok, err := c.SetNX(ctx, claimKey, owner, 30*time.Minute).Result()
	if err != nil {
		t.Fatalf("claim Redis database %d on %s: %v (is Redis running?)", n, RedisAddr(), err)
	}
	if !ok {
		return false
	}
	if err := flushExceptClaim(ctx, c); err != nil {
		t.Fatalf("flush Redis database %d: %v", n, err)
	}
	return true
}

// flushExceptClaim empties the database but keeps the claim key.
func flushExceptClaim(ctx context.Context, c *redis.Client) error {
	owner, err := c.Get(ctx, claimKey).Result()
	if err != nil {
		return fmt.Errorf("read claim: %w", err)
	}
	if err := c.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("flushdb: %w", err)
	}
	return c.Set(ctx, claimKey, owner, 30*time.Minute).Err()
}

func releaseRedisDB(n int, owner string) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
	defer c.Close()
	if cur, err := c.Get(ctx, claimKey).Result(); err != nil || cur != owner {
		return
	}
	c.FlushDB(ctx)
}
