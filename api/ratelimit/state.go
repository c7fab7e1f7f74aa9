package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Counter is one app's (or one user's through an app) counter under a rule
// in the rule's current window, as Redis holds it: what the console's
// rate-limit page shows (docs/console.md).
type Counter struct {
	Rule   string
	Scope  string // "app" or "user"
	AppID  int64
	UserID int64 // Scope "user"
	Limit  int
	// Used is the counter: requests admitted in the window, plus those a
	// replica took in advance and has not used yet (lease.go), so
	// Remaining may be a little lower than the next request will see.
	Used      int
	Remaining int
	Reset     time.Time
}

// scanCount is the SCAN batch size of Counters.
const scanCount = 500

// Counters reads the current windows' counters of apps (every app when
// apps is nil) under rules (the registered ones: a counter of a rule not
// in rules is skipped, its limit unknown). Per-resource counters belong to
// no app and are not listed. Sorted by app, rule, user.
func (l *Limiter) Counters(ctx context.Context, rules []Rule, apps []int64) ([]Counter, error) {
	byName := make(map[string]Rule, len(rules))
	for _, r := range rules {
		byName[r.Name] = r
	}
	patterns := []string{l.prefix + "rl:*"}
	if apps != nil {
		patterns = patterns[:0]
		for _, a := range apps {
			patterns = append(patterns, l.prefix+"rl:*:app:"+strconv.FormatInt(a, 10)+":*")
		}
	}
	now := l.now()
	var keys []string
	var out []Counter
	for _, p := range patterns {
		iter := l.client.Scan(ctx, 0, p, scanCount).Iterator()
		for iter.Next(ctx) {
			c, ok := l.parseKey(iter.Val(), byName, now)
			if ok {
				keys, out = append(keys, iter.Val()), append(out, c)
			}
		}
		if err := iter.Err(); err != nil {
			return nil, fmt.Errorf("ratelimit: list counters: %w", err)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	vals, err := l.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("ratelimit: read counters: %w", err)
	}
	kept := out[:0]
	for i, v := range vals {
		s, ok := v.(string)
		if !ok { // expired meanwhile
			continue
		}
		n, _ := strconv.Atoi(s)
		out[i].Used, out[i].Remaining = n, max(0, out[i].Limit-n)
		kept = append(kept, out[i])
	}
	slices.SortFunc(kept, func(a, b Counter) int {
		if a.AppID != b.AppID {
			return cmp.Compare(a.AppID, b.AppID)
		}
		if a.Rule != b.Rule {
			return strings.Compare(a.Rule, b.Rule)
		}
		return cmp.Compare(a.UserID, b.UserID)
	})
	return kept, nil
}

// parseKey reads a counter's key (Limiter.key): {prefix}rl:{rule}:app:{app}
// [:user:{user}]:{window-start}; false for a per-resource counter, an
// unknown rule or a window that is not the current one.
func (l *Limiter) parseKey(key string, rules map[string]Rule, now time.Time) (Counter, bool) {
	parts := strings.Split(strings.TrimPrefix(key, l.prefix+"rl:"), ":")
	if len(parts) != 4 && len(parts) != 6 || parts[1] != "app" {
		return Counter{}, false
	}
	rule, ok := rules[parts[0]]
	if !ok {
		return Counter{}, false
	}
	app, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return Counter{}, false
	}
	start, err := strconv.ParseInt(parts[len(parts)-1], 10, 64)
	if err != nil || start != windowStart(now, rule.Window).Unix() {
		return Counter{}, false
	}
	c := Counter{Rule: rule.Name, Scope: "app", AppID: app, Limit: rule.Limit, Reset: time.Unix(start, 0).Add(rule.Window)}
	if len(parts) == 6 {
		if parts[3] != "user" {
			return Counter{}, false
		}
		if c.UserID, err = strconv.ParseInt(parts[4], 10, 64); err != nil {
			return Counter{}, false
		}
		c.Scope = "user"
	}
	return c, true
}

// Peek reports s's state under rule without charging a request: the
// counter in Redis, less what this replica took in advance and has not
// used (as Allow would report it). A counter not started yet has the
// whole limit remaining.
func (l *Limiter) Peek(ctx context.Context, rule Rule, s Subject) (Decision, error) {
	now := l.now()
	start := windowStart(now, rule.Window)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	n, err := l.client.Get(ctx, l.key(rule.Name, s, start)).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Decision{}, fmt.Errorf("ratelimit: read %s: %w", l.key(rule.Name, s, start), err)
	}
	left := 0
	l.leases.mu.RLock()
	ls := l.leases.m[leaseKey{rule: rule.Name, subject: s}]
	l.leases.mu.RUnlock()
	if ls != nil {
		ls.mu.Lock()
		if ls.start.Equal(start) && !ls.dead {
			left = ls.left
		}
		ls.mu.Unlock()
	}
	return Decision{Allowed: n < rule.Limit, Limit: rule.Limit, Remaining: max(0, rule.Limit-n+left), Reset: start.Add(rule.Window)}, nil
}

// Headers sets rule's response headers (x-rate-limit-* or the rule's own)
// on h for r's counter as it stands, without charging r: what a request
// answered before the limiter (an injected fault, docs/faults.md) carries.
// False, and no headers, when r has no caller to count or Redis cannot be
// read (as a fail-open answer has none).
func (l *Limiter) Headers(r *http.Request, rule Rule, h http.Header) bool {
	s, ok := subjectOf(rule, r)
	if !ok {
		return false
	}
	d, err := l.Peek(r.Context(), rule, s)
	if err != nil {
		return false
	}
	newHeaderValues(rule).set(h, d)
	return true
}
