package web

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestThrottleAndWindow runs the login throttle and the window counter on
// one Redis server and on a three-node Redis Cluster, where the user's and
// the address's counters hash to different slots (one transaction over
// both would be refused there: CROSSSLOT).
func TestThrottleAndWindow(t *testing.T) {
	addr, db := storagetest.RedisDB(t)
	single := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { _ = single.Close() })
	for name, rc := range map[string]redis.UniversalClient{
		"single":  single,
		"cluster": storagetest.RedisCluster(t).Client(t),
	} {
		t.Run(name, func(t *testing.T) {
			checkThrottle(t, NewThrottle(rc, "t:login:"))
			checkWindow(t, NewWindow(rc, "t:window:", time.Minute))
		})
	}
}

func checkThrottle(t *testing.T, th *Throttle) {
	ctx := context.Background()
	for i := 1; i <= LoginFailuresPerUser; i++ {
		ok, _, err := th.Attempt(ctx, "Alice", "10.0.0.1")
		if err != nil || !ok {
			t.Fatalf("attempt %d: %v, %v; want allowed", i, ok, err)
		}
	}
	ok, retry, err := th.Attempt(ctx, "alice", "10.0.0.2")
	if err != nil || ok || retry < time.Second || retry > LoginWindow {
		t.Fatalf("attempt past the user's limit: %v, %v, %v; want refused for the window's rest", ok, retry, err)
	}
	if err := th.Succeeded(ctx, "alice", "10.0.0.2"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := th.Attempt(ctx, "alice", "10.0.0.1"); err != nil || !ok {
		t.Fatalf("attempt after a success: %v, %v; want allowed", ok, err)
	}
}

func checkWindow(t *testing.T, w *Window) {
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		n, reset, err := w.Add(ctx, "k")
		if err != nil || n != want || reset <= 0 || reset > time.Minute {
			t.Fatalf("Add = %d, %v, %v; want %d within the window", n, reset, err, want)
		}
	}
	if err := w.Undo(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n, _, err := w.Add(ctx, "k"); err != nil || n != 3 {
		t.Fatalf("Add after Undo = %d, %v; want 3", n, err)
	}
}
