package storagetest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRedisCluster: the three nodes form one cluster whose client reaches
// keys in every slot range.
func TestRedisCluster(t *testing.T) {
	c := RedisCluster(t)
	rc := c.Client(t)
	ctx := context.Background()
	nodes := map[string]bool{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		if err := rc.Set(ctx, k, k, time.Minute).Err(); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
		addr, err := rc.ClusterSlots(ctx).Result()
		if err != nil || len(addr) != 3 {
			t.Fatalf("cluster slots %v (%v): want 3 ranges", addr, err)
		}
		slot, _ := rc.ClusterKeySlot(ctx, k).Result()
		for _, r := range addr {
			if slot >= int64(r.Start) && slot <= int64(r.End) {
				nodes[r.Nodes[0].Addr] = true
			}
		}
	}
	if len(nodes) < 2 || !strings.HasPrefix(c.URL(), "redis-cluster://127.0.0.1:") {
		t.Errorf("keys landed on %v; url %s", nodes, c.URL())
	}
}

// TestRedisSentinel: killing the primary makes the sentinels promote the
// replica, and a failover client follows.
func TestRedisSentinel(t *testing.T) {
	s := RedisSentinel(t)
	rc := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Wait(ctx, 1, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	killed := s.KillPrimary()
	promoted, err := s.WaitPromoted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replica promoted %v after the primary was killed", promoted.Sub(killed).Round(time.Millisecond))
	for {
		v, err := rc.Get(ctx, "k").Result()
		if err == nil {
			if v != "v" {
				t.Fatalf("k = %q after failover", v)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("client never reached the new primary: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(s.URL(0), "?master="+SentinelMaster) {
		t.Errorf("url %s", s.URL(0))
	}
}
