package web

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Window counts events per key in fixed windows in Redis, shared by every
// replica: the first event of a key starts its window, which ends size
// later. The token endpoints' rate limits use it (docs/oauth.md).
type Window struct {
	rc     redis.UniversalClient
	prefix string
	size   time.Duration
}

// NewWindow returns a Window of size keeping its counters under prefix.
func NewWindow(rc redis.UniversalClient, prefix string, size time.Duration) *Window {
	return &Window{rc: rc, prefix: prefix, size: size}
}

// Size is the window's length.
func (w *Window) Size() time.Duration { return w.size }

// Add counts one event for key and returns the key's count in the current
// window and the time until the window ends.
func (w *Window) Add(ctx context.Context, key string) (n int64, reset time.Duration, err error) {
	pipe := w.rc.TxPipeline()
	incr := pipe.Incr(ctx, w.prefix+key)
	pipe.ExpireNX(ctx, w.prefix+key, w.size)
	ttl := pipe.PTTL(ctx, w.prefix+key)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("web: count %s: %w", key, err)
	}
	return incr.Val(), max(ttl.Val(), time.Millisecond), nil
}

// Count returns key's count in the current window (0 when none is open)
// and the time until the window ends, without counting.
func (w *Window) Count(ctx context.Context, key string) (n int64, reset time.Duration, err error) {
	pipe := w.rc.Pipeline()
	get, ttl := pipe.Get(ctx, w.prefix+key), pipe.PTTL(ctx, w.prefix+key)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, 0, fmt.Errorf("web: read count %s: %w", key, err)
	}
	n, _ = get.Int64()
	return n, max(ttl.Val(), time.Millisecond), nil
}
