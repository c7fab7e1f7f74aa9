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
	addr, db, release, err := ClaimRedisDB(context.Background(), 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return addr, db
}

// ClaimRedisDB is RedisDB for programs that are not tests (scripts/load):
// it claims a free logical database (1-15) within wait and returns release,
// which empties it and gives it back.
func ClaimRedisDB(ctx context.Context, wait time.Duration) (addr string, db int, release func(), err error) {
	deadline := time.Now().Add(wait)
	owner := RandomSuffix(8)
	for time.Now().Before(deadline) {
		for n := 1; n <= 15; n++ {
			ok, err := claimRedisDB(ctx, n, owner)
			if err != nil {
				return "", 0, nil, err
			}
			if ok {
				return RedisAddr(), n, func() { releaseRedisDB(n, owner) }, nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return "", 0, nil, fmt.Errorf("no free Redis database on %s after %s", RedisAddr(), wait)
}

// claimRedisDB takes database n for owner if it is free, and empties it.
func claimRedisDB(ctx context.Context, n int, owner string) (bool, error) {
	c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
	defer c.Close()
	ok, err := c.SetNX(ctx, claimKey, owner, 30*time.Minute).Result()
	if err != nil {
		return false, fmt.Errorf("claim Redis database %d on %s: %w (is Redis running?)", n, RedisAddr(), err)
	}
	if !ok {
		return false, nil
	}
	if err := flushKeepingClaim(ctx, c, owner); err != nil {
		return false, fmt.Errorf("flush Redis database %d: %w", n, err)
	}
	return true, nil
}

// flushKeepingClaim empties the database and writes the claim back in one
// MULTI/EXEC, so no other test process ever sees the database unclaimed
// (between a bare FLUSHDB and SET it could claim it too, and the two runs
// would wipe each other's queues).
func flushKeepingClaim(ctx context.Context, c *redis.Client, owner string) error {
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.FlushDB(ctx)
		p.Set(ctx, claimKey, owner, 30*time.Minute)
		return nil
	})
	if err != nil {
		return fmt.Errorf("flushdb: %w", err)
	}
	return nil
}

// releaseRedisDB flushes the database if owner still holds it; WATCH makes
// the check and the flush one step.
func releaseRedisDB(n int, owner string) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
	defer c.Close()
	_ = c.Watch(ctx, func(tx *redis.Tx) error {
		if cur, err := tx.Get(ctx, claimKey).Result(); err != nil || cur != owner {
			return nil
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.FlushDB(ctx)
			return nil
		})
		return err
	}, claimKey)
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
