package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testRedis connects to the Redis the tests run against (127.0.0.1:6379 or
// AVIARY_TEST_REDIS_ADDR) and returns a client and a key prefix unique to
// the test; every key under the prefix is deleted when the test ends.
func testRedis(t *testing.T) (*redis.Client, string) {
	t.Helper()
	addr := os.Getenv("AVIARY_TEST_REDIS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at %s (set AVIARY_TEST_REDIS_ADDR): %v", addr, err)
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	prefix := "aviary-test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		deletePrefix(t, client, prefix)
		_ = client.Close()
	})
	return client, prefix
}

func deletePrefix(t *testing.T, client *redis.Client, prefix string) {
	t.Helper()
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

// deadRedis returns a client for an address nothing listens on.
func deadRedis(t *testing.T) *redis.Client {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	return client
}
