package web

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RateLimit counts requests per key in fixed windows in Redis (shared by
// every replica): at most Limit per Window.
type RateLimit struct {
	rc     redis.UniversalClient
	prefix string
	Limit  int64
	Window time.Duration
}

// NewRateLimit returns a RateLimit keeping its counters under prefix.
func NewRateLimit(rc redis.UniversalClient, prefix string, limit int64, window time.Duration) *RateLimit {
	return &RateLimit{rc: rc, prefix: prefix, Limit: limit, Window: window}
}

// Allow counts one request for key; when it is over the limit, ok is
// false and retry is how long until the window ends.
func (l *RateLimit) Allow(ctx context.Context, key string) (ok bool, retry time.Duration, err error) {
	k := l.prefix + key
	pipe := l.rc.TxPipeline()
	n := pipe.Incr(ctx, k)
	pipe.ExpireNX(ctx, k, l.Window)
	ttl := pipe.PTTL(ctx, k)
	if _, err := pipe.Exec(ctx); err != nil {
		return false, 0, fmt.Errorf("web: rate limit: %w", err)
	}
	if n.Val() > l.Limit {
		return false, max(ttl.Val(), time.Second), nil
	}
	return true, 0, nil
}
