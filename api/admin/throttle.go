package admin

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// callTimeout bounds one Redis round trip of a RedisThrottle.
const callTimeout = time.Second

// lockedScript returns the milliseconds KEYS[1] stays locked: its TTL once
// it has counted ARGV[1] failures, else 0.
var lockedScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n < tonumber(ARGV[1]) then
  return 0
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1 then
  return 1
end
return ttl
`)

// failScript counts one failure on KEYS[1], starting a window of ARGV[2] ms
// with the first, and returns {ms, started}: the milliseconds the key is now
// locked (the window's rest once ARGV[1] failures are counted, else 0), and
// 1 when this failure is the one that locked it.
var failScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
local max = tonumber(ARGV[1])
if n < max then
  return {0, 0}
end
if ttl < 1 then
  ttl = 1
end
if n == max then
  return {ttl, 1}
end
return {ttl, 0}
`)

// forgiveScript takes one count back from KEYS[1], if it has any.
var forgiveScript = redis.NewScript(`
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
return 0
`)

// RedisThrottle counts failed logins in Redis, so every API replica sharing
// the Redis and the prefix shares the counts: a client cannot spread its
// guesses over the replicas behind a load balancer.
type RedisThrottle struct {
	client redis.UniversalClient
	prefix string
	limits Limits
}

// NewRedisThrottle returns a RedisThrottle whose keys are prefix + client
// key; zero limits fields take DefaultLimits'.
func NewRedisThrottle(client redis.UniversalClient, prefix string, limits Limits) *RedisThrottle {
	return &RedisThrottle{client: client, prefix: prefix, limits: limits.orDefault()}
}

// Locked implements Throttle.
func (t *RedisThrottle) Locked(ctx context.Context, key string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ms, err := lockedScript.Run(ctx, t.client, []string{t.prefix + key}, t.limits.Failures).Int64()
	if err != nil {
		return 0, fmt.Errorf("admin throttle: read %s: %w", t.prefix+key, err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Fail implements Throttle.
func (t *RedisThrottle) Fail(ctx context.Context, key string) (time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := failScript.Run(ctx, t.client, []string{t.prefix + key}, t.limits.Failures, t.limits.Window.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("admin throttle: count a failure on %s: %w", t.prefix+key, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("admin throttle: count a failure on %s: unexpected script result %v", t.prefix+key, res)
	}
	return time.Duration(res[0]) * time.Millisecond, res[1] == 1, nil
}

// Forgive implements Throttle.
func (t *RedisThrottle) Forgive(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := forgiveScript.Run(ctx, t.client, []string{t.prefix + key}).Err(); err != nil {
		return fmt.Errorf("admin throttle: forgive %s: %w", t.prefix+key, err)
	}
	return nil
}

// MemoryThrottle counts failed logins in this process only: for a single
// replica, or tests.
type MemoryThrottle struct {
	limits Limits
	now    func() time.Time
	mu     sync.Mutex
	counts map[string]*window
}

type window struct {
	failures int
	ends     time.Time
}

// NewMemoryThrottle returns an empty MemoryThrottle; zero limits fields
// take DefaultLimits', a nil now is time.Now.
func NewMemoryThrottle(limits Limits, now func() time.Time) *MemoryThrottle {
	if now == nil {
		now = time.Now
	}
	return &MemoryThrottle{limits: limits.orDefault(), now: now, counts: map[string]*window{}}
}

// Locked implements Throttle.
func (t *MemoryThrottle) Locked(_ context.Context, key string) (time.Duration, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	w := t.current(key, now)
	if w == nil || w.failures < t.limits.Failures {
		return 0, nil
	}
	return w.ends.Sub(now), nil
}

// Fail implements Throttle.
func (t *MemoryThrottle) Fail(_ context.Context, key string) (time.Duration, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	w := t.current(key, now)
	if w == nil {
		t.prune(now)
		w = &window{ends: now.Add(t.limits.Window)}
		t.counts[key] = w
	}
	w.failures++
	if w.failures < t.limits.Failures {
		return 0, false, nil
	}
	return w.ends.Sub(now), w.failures == t.limits.Failures, nil
}

// Forgive implements Throttle.
func (t *MemoryThrottle) Forgive(_ context.Context, key string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.current(key, t.now()); w != nil && w.failures > 0 {
		w.failures--
	}
	return nil
}

// current is key's window if it has not ended.
func (t *MemoryThrottle) current(key string, now time.Time) *window {
	w := t.counts[key]
	if w == nil || !now.Before(w.ends) {
		delete(t.counts, key)
		return nil
	}
	return w
}

// prune drops ended windows once the map has grown, so addresses that
// fail once and leave do not pile up.
func (t *MemoryThrottle) prune(now time.Time) {
	if len(t.counts) < 1024 {
		return
	}
	for k, w := range t.counts {
		if !now.Before(w.ends) {
			delete(t.counts, k)
		}
	}
}
