package sweep

import (
	"context"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

func TestRedisLocker(t *testing.T) {
	client, prefix := storagetest.RedisPrefix(t)
	ctx := t.Context()
	l := RedisLocker{Client: client, Prefix: prefix}
	acquire := func(name string, want bool) func() {
		t.Helper()
		release, ok, err := l.Acquire(ctx, name, time.Minute)
		if err != nil {
			t.Fatalf("Acquire %s: %v", name, err)
		}
		if ok != want {
			t.Fatalf("Acquire %s = %v, want %v", name, ok, want)
		}
		if ok && release == nil {
			t.Fatalf("Acquire %s granted without a release func", name)
		}
		return release
	}

	releaseA := acquire("a", true)
	ttl, err := client.PTTL(ctx, prefix+"a").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("lease TTL = %v, %v; want within (0, 1m]", ttl, err)
	}
	acquire("a", false)
	releaseB := acquire("b", true) // other names are independent
	releaseA()
	releaseA2 := acquire("a", true)
	releaseB()

	// A holder whose lease expired (simulated by deleting the key) must
	// not release the next holder's lease.
	if err := client.Del(ctx, prefix+"a").Err(); err != nil {
		t.Fatal(err)
	}
	releaseA3 := acquire("a", true)
	releaseA2()
	acquire("a", false)
	releaseA3()
	acquire("a", true)
}

func TestRedisLockerError(t *testing.T) {
	release, ok, err := RedisLocker{Client: storagetest.DeadRedis(t)}.Acquire(context.Background(), "x", time.Minute)
	if err == nil || ok || release != nil {
		t.Errorf("Acquire on an unreachable server = %v, %v; want an error", ok, err)
	}
}
