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

// Allowed reports whether a login for user from addr may be tried now; when
// not, retry is how long until it may.
func (t *Throttle) Allowed(ctx context.Context, user, addr string) (ok bool, retry time.Duration, err error) {
	uk, ak := t.keys(user, addr)
	pipe := t.rc.Pipeline()
	uc, ac := pipe.Get(ctx, uk), pipe.Get(ctx, ak)
	ut, at := pipe.PTTL(ctx, uk), pipe.PTTL(ctx, ak)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return false, 0, fmt.Errorf("web: read login throttle: %w", err)
	}
	if n, _ := uc.Int(); n >= LoginFailuresPerUser {
		return false, max(ut.Val(), time.Second), nil
	}
	if n, _ := ac.Int(); n >= LoginFailuresPerAddress {
		return false, max(at.Val(), time.Second), nil
	}
	return true, 0, nil
}

// Failed records a failed login for user from addr.
func (t *Throttle) Failed(ctx context.Context, user, addr string) error {
	uk, ak := t.keys(user, addr)
	pipe := t.rc.TxPipeline()
	for _, k := range []string{uk, ak} {
		pipe.Incr(ctx, k)
		pipe.ExpireNX(ctx, k, LoginWindow)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("web: record failed login: %w", err)
	}
	return nil
}

// Succeeded clears the user's failures (the address's stay: one good
// password must not reset a spray across many names).
func (t *Throttle) Succeeded(ctx context.Context, user string) error {
	uk, _ := t.keys(user, "")
	if err := t.rc.Del(ctx, uk).Err(); err != nil {
		return fmt.Errorf("web: clear login throttle: %w", err)
	}
	return nil
}
