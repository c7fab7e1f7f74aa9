package web

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Login throttle limits: failed logins per user name and per client
// address within LoginWindow. Past either, logins are refused until the
// window ends (docs/oauth.md).
const (
	LoginFailuresPerUser    = 5
	LoginFailuresPerAddress = 20
	LoginWindow             = 15 * time.Minute
)

// Throttle counts failed logins in Redis (shared by every replica), per
// user name and per address, in fixed windows.
type Throttle struct {
	rc     redis.UniversalClient
	prefix string
}

// NewThrottle returns a Throttle keeping its counters under prefix.
func NewThrottle(rc redis.UniversalClient, prefix string) *Throttle {
	return &Throttle{rc: rc, prefix: prefix}
}

func (t *Throttle) keys(user, addr string) (string, string) {
	return t.prefix + "user:" + strings.ToLower(user), t.prefix + "addr:" + addr
}

// Attempt reserves one login attempt of user from addr: both counters are
// incremented before the password is checked, so attempts sent at once
// cannot all pass a check made before any of them failed (a race that let
// a burst try any number of passwords). Past either limit the attempt is
// refused, its reservation given back, and retry is when that window
// ends. A refused or failed attempt needs nothing more; a good password
// calls Succeeded.
func (t *Throttle) Attempt(ctx context.Context, user, addr string) (ok bool, retry time.Duration, err error) {
	uk, ak := t.keys(user, addr)
	// One transaction per counter, not one for both: the two keys hash to
	// different Redis Cluster slots (docs/redis.md). Both are still
	// counted before the password is checked.
	un, ut, err := count(ctx, t.rc, uk, LoginWindow)
	if err != nil {
		return false, 0, fmt.Errorf("web: reserve login attempt: %w", err)
	}
	an, at, err := count(ctx, t.rc, ak, LoginWindow)
	if err != nil {
		t.release(ctx, uk)
		return false, 0, fmt.Errorf("web: reserve login attempt: %w", err)
	}
	switch {
	case un > LoginFailuresPerUser:
		retry = ut
	case an > LoginFailuresPerAddress:
		retry = at
	default:
		return true, 0, nil
	}
	t.release(ctx, uk, ak)
	return false, max(retry, time.Second), nil
}

// release gives back a reservation of keys (best effort: a counter left
// one too high only shortens its own window's allowance).
func (t *Throttle) release(ctx context.Context, keys ...string) {
	_ = undo(ctx, t.rc, keys...)
}

// Succeeded records a good password after Attempt: the user's counter is
// cleared and the address's reservation given back (earlier failures from
// the address still count).
func (t *Throttle) Succeeded(ctx context.Context, user, addr string) error {
	uk, ak := t.keys(user, addr)
	if err := t.rc.Del(ctx, uk).Err(); err != nil {
		return fmt.Errorf("web: clear login throttle: %w", err)
	}
	return undo(ctx, t.rc, ak)
}
