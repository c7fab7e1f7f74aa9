package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Leases: a replica takes a counter's requests from Redis a few at a time
// and admits them from memory, so a busy counter costs one Redis round trip
// per lease instead of one per request. See doc.go.
const (
	// leaseSpan is how much of a counter's recent traffic one lease covers:
	// a counter asked for 20,000 times a second takes leases of 1,000.
	leaseSpan = 50 * time.Millisecond
	// leaseShare bounds a lease to this fraction of what the window has
	// left, so a replica never holds much of the rest of the window while
	// others may need it; near the limit leases shrink to one request.
	leaseShare = 16
	// maxLease bounds one lease.
	maxLease = 1000
	// leaseIdle is how long requests a replica took but did not use stay
	// counted before Run gives them back.
	leaseIdle = time.Second
	// leaseForget is how long an unused lease stays in memory.
	leaseForget = time.Minute
)

// takeScript takes up to ARGV[3] requests from KEYS[1] while fewer than
// ARGV[1] are taken, setting a TTL of ARGV[2] ms on first use. It returns
// {count, taken}: taken is 0 when the limit is exhausted.
var takeScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if n >= limit then
  return {n, 0}
end
local take = math.min(tonumber(ARGV[3]), limit - n)
n = redis.call('INCRBY', KEYS[1], take)
if n == take then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return {n, take}
`)

// returnScript gives ARGV[1] unused requests back to KEYS[1], if the
// counter still exists (its window has not ended), never below zero.
var returnScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n <= 0 then
  return 0
end
return redis.call('DECRBY', KEYS[1], math.min(n, tonumber(ARGV[1])))
`)

// leaseKey names a counter across windows.
type leaseKey struct {
	rule    string
	subject Subject
}

// leases are a Limiter's leases by counter.
type leases struct {
	mu sync.RWMutex
	m  map[leaseKey]*lease
}

// get returns k's lease, made on first use.
func (ls *leases) get(k leaseKey) *lease {
	ls.mu.RLock()
	l, ok := ls.m[k]
	ls.mu.RUnlock()
	if ok {
		return l
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l, ok = ls.m[k]; !ok {
		if ls.m == nil {
			ls.m = map[leaseKey]*lease{}
		}
		l = &lease{}
		ls.m[k] = l
	}
	return l
}

// each calls fn with every lease (not under the map's lock).
func (ls *leases) each(fn func(leaseKey, *lease)) {
	ls.mu.RLock()
	all := make(map[leaseKey]*lease, len(ls.m))
	for k, l := range ls.m {
		all[k] = l
	}
	ls.mu.RUnlock()
	for k, l := range all {
		fn(k, l)
	}
}

func (ls *leases) delete(k leaseKey) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.m, k)
}

// lease is one counter's state in this replica, for its current window.
type lease struct {
	mu    sync.Mutex
	dead  bool      // forgotten by Run: look the counter up again
	start time.Time // the window the lease is for
	key   string    // the Redis key of the window the lease is for ("" before the first)
	count int       // the counter after this replica's last take
	left  int       // requests taken and not used yet
	since time.Time // the last take (or the window's first request)
	asked int       // requests asked for since the last take
	taken bool      // a take was made in this window
	used  time.Time // the last request
	fetch *fetch    // the take in flight, if any
}

// fetch is a take in flight: requests of the counter that find no request
// left wait for it instead of asking Redis too.
type fetch struct {
	done chan struct{}
	err  error
}

// want is how many requests the next take asks for: one for the first
// take of a window (nothing is known of the traffic yet), then about
// leaseSpan of the traffic seen since the last take, at least one, at most
// maxLease and leaseShare of what the window has left.
func (ls *lease) want(limit int, now time.Time) int {
	if !ls.taken {
		return 1
	}
	elapsed := max(now.Sub(ls.since), time.Millisecond)
	n := int(int64(ls.asked) * int64(leaseSpan) / int64(elapsed))
	return max(1, min(n, maxLease, (limit-ls.count)/leaseShare))
}

// leaseOf returns the counter's lease, locked, for the window starting at
// start.
func (l *Limiter) leaseOf(k leaseKey, start, now time.Time) *lease {
	for {
		ls := l.leases.get(k)
		ls.mu.Lock()
		if ls.dead {
			ls.mu.Unlock()
			continue
		}
		if !ls.start.Equal(start) || ls.key == "" { // a new window: what was left of the old one is gone with it
			ls.start, ls.key = start, l.key(k.rule, k.subject, start)
			ls.count, ls.left, ls.since, ls.asked, ls.taken = 0, 0, now, 0, false
		}
		return ls
	}
}

// take charges one request made at now to the counter k under limit in
// the window starting at start, from the lease when it holds one, else
// from Redis. The result is the counter as this replica knows it, what the
// lease has left and whether the request fits.
func (l *Limiter) take(ctx context.Context, k leaseKey, start, now time.Time, limit int, ttl time.Duration) (count, left int, ok bool, err error) {
	ls := l.leaseOf(k, start, now)
	ls.asked++
	ls.used = now
	for {
		if ls.left > 0 {
			ls.left--
			count, left = ls.count, ls.left
			ls.mu.Unlock()
			return count, left, true, nil
		}
		if f := ls.fetch; f != nil {
			ls.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return 0, 0, false, ctx.Err()
			}
			if f.err != nil {
				return 0, 0, false, f.err
			}
			ls = l.leaseOf(k, start, now)
			continue
		}
		return l.fetchLease(ctx, ls, limit, ttl, now)
	}
}

// fetchLease takes a lease from Redis for ls (locked; unlocked on return)
// and charges the request to it.
func (l *Limiter) fetchLease(ctx context.Context, ls *lease, limit int, ttl time.Duration, now time.Time) (int, int, bool, error) {
	want, key := ls.want(limit, now), ls.key
	f := &fetch{done: make(chan struct{})}
	ls.fetch = f
	ls.mu.Unlock()
	// The take serves every request waiting for it: it must not end with
	// the request that happened to start it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	res, err := takeScript.Run(ctx, l.client, []string{key}, limit, ttl.Milliseconds(), want).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected script result %v", res)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.fetch = nil
	f.err = err
	close(f.done)
	if err != nil {
		return 0, 0, false, err
	}
	count, taken := int(res[0]), int(res[1])
	if ls.key != key || ls.dead { // the window moved on meanwhile: keep nothing of the old one
		return count, 0, taken > 0, nil
	}
	ls.count, ls.left, ls.since, ls.asked, ls.taken = count, ls.left+max(0, taken-1), now, 0, true
	return count, ls.left, taken > 0, nil
}

// Run gives back, every half leaseIdle until ctx ends, the requests a
// replica took and has not used for leaseIdle, so the other replicas can
// admit them, and forgets leases unused for leaseForget. When ctx ends it
// gives back everything still held. Without Run, unused requests stay
// counted until their window ends (the limit is never exceeded either way).
func (l *Limiter) Run(ctx context.Context) {
	t := time.NewTicker(leaseIdle / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			done, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			l.giveBack(done, time.Time{})
			cancel()
			return
		case <-t.C:
			l.giveBack(ctx, l.now().Add(-leaseIdle))
		}
	}
}

// giveBack returns the unused requests of leases last used before idle
// (all of them with a zero idle) and forgets leases unused for leaseForget.
func (l *Limiter) giveBack(ctx context.Context, idle time.Time) {
	forget := idle.Add(leaseIdle - leaseForget)
	l.leases.each(func(k leaseKey, ls *lease) {
		ls.mu.Lock()
		if !idle.IsZero() && !ls.used.Before(idle) {
			ls.mu.Unlock()
			return
		}
		key, n := ls.key, ls.left
		ls.left = 0
		ls.count -= n
		if !idle.IsZero() && ls.used.Before(forget) && ls.fetch == nil {
			ls.dead = true
			l.leases.delete(k)
		}
		ls.mu.Unlock()
		if n > 0 {
			if err := returnScript.Run(ctx, l.client, []string{key}, n).Err(); err != nil && ctx.Err() == nil {
				l.warn.warn(ctx, "rate limiter could not give back unused requests", "key", key, "requests", n, "err", err)
			}
		}
	})
}
