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

// RedisPrefix connects to the test Redis and returns a client plus a key
// prefix unique to this test; every key under the prefix is deleted when the
// test ends. Use it for code that namespaces its keys (rate limits, nonces);
// use RedisDB for asynq, which cannot.
func RedisPrefix(t testing.TB) (*redis.Client, string) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: RedisAddr()})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at %s (set AVIARY_TEST_REDIS_ADDR): %v", RedisAddr(), err)
	}
	prefix := "aviary-test:" + RandomSuffix(8) + ":"
	t.Cleanup(func() {
		deletePrefix(t, client, prefix)
		_ = client.Close()
	})
	return client, prefix
}

func deletePrefix(t testing.TB, client *redis.Client, prefix string) {
	ctx := context.Background()
	iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		if err := client.Del(ctx, iter.Val()).Err(); err != nil {
			t.Errorf("delete %s: %v", iter.Val(), err)
		}
	}
	if err := iter.Err(); err != nil {
		t.Errorf("scan %s*: %v", prefix, err)
	}
}

// DeadRedis returns a client for an address nothing listens on, to test
// behaviour while Redis is unreachable.
func DeadRedis(t testing.TB) *redis.Client {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	return client
}
