package web

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RateLimit allows at most Limit requests per key in each fixed window of
// a Window (Redis, shared by every replica).
type RateLimit struct {
	window *Window
	Limit  int64
}

// NewRateLimit returns a RateLimit keeping its counters under prefix.
func NewRateLimit(rc redis.UniversalClient, prefix string, limit int64, window time.Duration) *RateLimit {
	return &RateLimit{window: NewWindow(rc, prefix, window), Limit: limit}
}

// Allow counts one request for key; when it is over the limit, ok is
// false and retry is how long until the window ends (at least a second).
func (l *RateLimit) Allow(ctx context.Context, key string) (ok bool, retry time.Duration, err error) {
	n, reset, err := l.window.Add(ctx, key)
	if err != nil {
		return false, 0, fmt.Errorf("web: rate limit: %w", err)
	}
	if n > l.Limit {
		return false, max(reset, time.Second), nil
	}
	return true, 0, nil
}
