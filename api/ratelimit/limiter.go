package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/redis/go-redis/v9"
)

// keyGrace keeps a window's counter a little past the window's end, so a
// replica whose clock lags still finds the count instead of starting over.
const keyGrace = time.Minute

// callTimeout bounds one Redis round trip, so an unreachable or hung Redis
// delays requests by at most this much before the limiter fails open. It is
// tighter than the other dependency bounds (AVIARY_DEPENDENCY_TIMEOUT): the
// limiter is on every limited request's path and its failure costs only
// protection.
const callTimeout = 250 * time.Millisecond

// warnEvery bounds how often a Redis outage is logged.
const warnEvery = time.Minute

// Subject is whose counter a request is charged to.
type Subject struct {
	// Kind is "app" or "user".
	Kind string
	// ID is the app or user id, or a resource's core id.
	ID int64
	// Name is a resource's opaque (ads) id, when it has no core id.
	Name string
	// AppID is, for Kind "user", the app acting for the user: as on the
	// platform, a user's requests through two apps count separately.
	AppID int64
}

// SubjectOf returns the subject rule charges p's requests to: the user and
// app pair for PerUser rules with a user in context, the app otherwise.
func SubjectOf(rule Rule, p auth.Principal) Subject {
	if rule.Scope == PerUser && p.User != nil {
		return Subject{Kind: "user", ID: p.User.ID, AppID: p.App.ID}
	}
	return Subject{Kind: "app", ID: p.App.ID}
}

// key is the counter's name within a rule and window: app:{app} or
// app:{app}:user:{user}.
func (s Subject) key() string {
	if s.Kind == "user" {
		return "app:" + strconv.FormatInt(s.AppID, 10) + ":user:" + strconv.FormatInt(s.ID, 10)
	}
	if s.Name != "" {
		return s.Kind + ":" + s.Name
	}
	return s.Kind + ":" + strconv.FormatInt(s.ID, 10)
}

// Decision is the outcome of one Allow call.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the rule's limit.
	Limit int
	// Remaining is how many more requests the window admits.
	Remaining int
	// Reset is when the current window ends.
	Reset time.Time
}

// Limiter counts requests in Redis. It is safe for concurrent use, and any
// number of Limiters (one per API replica) sharing a Redis and a prefix
// share counts.
type Limiter struct {
	leases leases
	client redis.UniversalClient
	prefix string
	now    func() time.Time
	writer apierr.Writer
	warn   *throttledWarner
}

// NewLimiter returns a Limiter whose keys start with prefix. now is the clock
// (nil means time.Now); w renders 429s and logs through w.Logger (nil means
// slog.Default). The client must have ContextTimeoutEnabled set, or go-redis
// ignores the limiter's 250ms bound and waits for its own timeouts.
func NewLimiter(client redis.UniversalClient, prefix string, now func() time.Time, w apierr.Writer) *Limiter {
	if now == nil {
		now = time.Now
	}
	logger := w.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Limiter{client: client, prefix: prefix, now: now, writer: w,
		warn: &throttledWarner{every: warnEvery, now: now, logger: logger}}
}

// Allow charges one request to s under rule and reports whether it fits.
func (l *Limiter) Allow(ctx context.Context, rule Rule, s Subject) (Decision, error) {
	now := l.now()
	start := windowStart(now, rule.Window)
	end := start.Add(rule.Window)
	ttl := end.Sub(now) + keyGrace
	count, left, ok, err := l.take(ctx, leaseKey{rule: rule.Name, subject: s}, start, now, rule.Limit, ttl)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: charge %s: %w", l.key(rule.Name, s, start), err)
	}
	return Decision{
		Allowed:   ok,
		Limit:     rule.Limit,
		Remaining: max(0, rule.Limit-count+left),
		Reset:     end,
	}, nil
}

// key is {prefix}rl:{rule}:{subject}:{window-start} (see Subject.key).
func (l *Limiter) key(rule string, s Subject, start time.Time) string {
	return l.prefix + "rl:" + rule + ":" + s.key() + ":" + strconv.FormatInt(start.Unix(), 10)
}

// windowStart aligns now down to a multiple of window since the Unix epoch.
func windowStart(now time.Time, window time.Duration) time.Time {
	secs := int64(window / time.Second)
	t := now.Unix()
	start := t - t%secs
	if t%secs < 0 {
		start -= secs
	}
	return time.Unix(start, 0)
}
