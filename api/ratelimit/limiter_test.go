package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// commandCounter is a go-redis hook counting the commands sent (a pipeline
// counts as one round trip).
type commandCounter struct{ trips atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		return next(ctx, cmds)
	}
}

// TestAllowScript drives the Lua script through Allow with small limits (a
// lease of one request each time): the count, the reset, the
// key layout and its TTL, one Redis round trip per request, and rejected
// requests not counting.
func TestAllowScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rule    Rule
		subject Subject
		// at is the time of the requests; reset the window end it is in.
		at    time.Time
		reset int64
		key   string // without the prefix
	}{
		{"per app, 15 minutes", Rule{Name: "compliance.jobs.get", Limit: 3, Window: 15 * time.Minute, Scope: PerApp},
			Subject{Kind: "app", ID: 7}, t0, t0Reset15m, fmt.Sprintf("rl:compliance.jobs.get:app:7:%d", t0Reset15m-900)},
		{"per user and app", Rule{Name: "tweets.create", Limit: 2, Window: 15 * time.Minute, Scope: PerUser},
			Subject{Kind: "user", ID: 10, AppID: 7}, t0, t0Reset15m, fmt.Sprintf("rl:tweets.create:app:7:user:10:%d", t0Reset15m-900)},
		{"one-minute window, at its start", Rule{Name: "short", Limit: 1, Window: time.Minute, Scope: PerApp},
			Subject{Kind: "app", ID: 8}, time.Unix(1_700_000_040, 0), 1_700_000_100, "rl:short:app:8:1700000040"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client, prefix := testRedis(t)
			counter := &commandCounter{}
			client.AddHook(counter)
			clk := &clock{now: tc.at}
			l := NewLimiter(client, prefix, clk.Now, quietWriter)
			ctx := context.Background()
			// Load the script once, so every Allow is one EVALSHA.
			if err := takeScript.Load(ctx, client).Err(); err != nil {
				t.Fatalf("load script: %v", err)
			}
			for i := 1; i <= tc.rule.Limit+2; i++ {
				before := counter.trips.Load()
				d, err := l.Allow(ctx, tc.rule, tc.subject)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if trips := counter.trips.Load() - before; trips != 1 {
					t.Errorf("request %d: %d Redis round trips, want 1", i, trips)
				}
				want := Decision{Allowed: i <= tc.rule.Limit, Limit: tc.rule.Limit,
					Remaining: max(0, tc.rule.Limit-i), Reset: time.Unix(tc.reset, 0)}
				if !d.Reset.Equal(want.Reset) || d.Allowed != want.Allowed || d.Limit != want.Limit || d.Remaining != want.Remaining {
					t.Errorf("request %d: %+v, want %+v", i, d, want)
				}
			}
			key := prefix + tc.key
			if n, err := client.Get(ctx, key).Int(); err != nil || n != tc.rule.Limit {
				t.Errorf("GET %s = %d (%v), want %d (rejected requests do not count)", key, n, err, tc.rule.Limit)
			}
			ttl, err := client.PTTL(ctx, key).Result()
			maxTTL := time.Unix(tc.reset, 0).Sub(tc.at) + keyGrace
			if err != nil || ttl <= maxTTL-5*time.Second || ttl > maxTTL {
				t.Errorf("PTTL %s = %v (%v), want about %v (rest of the window + grace)", key, ttl, err, maxTTL)
			}
		})
	}
}
