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
	n, reset, err = count(ctx, w.rc, w.prefix+key, w.size)
	if err != nil {
		return 0, 0, fmt.Errorf("web: count %s: %w", key, err)
	}
	return n, reset, nil
}

// count adds one to key in one transaction, starting a window of size with
// the first, and returns the count and the time until the window ends.
func count(ctx context.Context, rc redis.UniversalClient, key string, size time.Duration) (int64, time.Duration, error) {
	pipe := rc.TxPipeline()
	incr := pipe.Incr(ctx, key)
	pipe.ExpireNX(ctx, key, size)
	ttl := pipe.PTTL(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, err
	}
	return incr.Val(), max(ttl.Val(), time.Millisecond), nil
}

// Undo takes back one Add of key (a reservation that turned out not to
// count). A key whose window has ended is left alone, so no counter is
// left without an expiry.
func (w *Window) Undo(ctx context.Context, key string) error {
	return undo(ctx, w.rc, w.prefix+key)
}

// decrIfExists decrements KEYS[1] only while it exists.
var decrIfExists = redis.NewScript(`if redis.call("EXISTS", KEYS[1]) == 1 then return redis.call("DECR", KEYS[1]) end return 0`)

// undo decrements each of keys that still exists.
func undo(ctx context.Context, rc redis.UniversalClient, keys ...string) error {
	for _, k := range keys {
		if err := decrIfExists.Run(ctx, rc, []string{k}).Err(); err != nil {
			return fmt.Errorf("web: undo count %s: %w", k, err)
		}
	}
	return nil
}
