package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
)

// Rate-limit response headers.
const (
	HeaderLimit     = "X-Rate-Limit-Limit"
	HeaderRemaining = "X-Rate-Limit-Remaining"
	HeaderReset     = "X-Rate-Limit-Reset"
)

// errNoPrincipal means the middleware was mounted before authentication.
var errNoPrincipal = errors.New("ratelimit: no auth.Principal in the request context; mount the limiter after auth")

// Middleware enforces rule. It must run after the auth middleware: it reads
// the auth.Principal from the request context (a request without one is a
// wiring bug and is answered with 500), except for a PerResource rule,
// which counts by the request's path value instead. Every counted response
// carries the rule's headers (x-rate-limit-* unless Rule.Headers says
// otherwise); when the window is exhausted it answers 429
// apierr.TooManyRequests itself and does not call next. Rules mounted one
// inside another (a 24-hour limit inside a 15-minute one) each add their
// headers, so a 429 of the inner one carries the outer one's too.
//
// Fail-open: if Redis cannot be reached (or does not answer within 250ms),
// the request is served without rate-limit headers and a warning is logged
// at most once a minute, so a limiter outage does not become an API outage;
// the request's further rules then serve it without asking Redis again.
//
// Middleware panics if rule is invalid (see Rule.Validate), at wiring time.
func (l *Limiter) Middleware(rule Rule) func(http.Handler) http.Handler {
	if err := rule.Validate(); err != nil {
		panic(err)
	}
	hv := newHeaderValues(rule)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Context().Value(unlimitedKey{}) != nil { // an earlier rule found Redis away
				next.ServeHTTP(w, r)
				return
			}
			s, ok := subjectOf(rule, r)
			if !ok {
				l.writer.Write(w, r, errNoPrincipal)
				return
			}
			d, err := l.Allow(r.Context(), rule, s)
			if err != nil {
				if r.Context().Err() == nil {
					l.warn.warn(r.Context(), "rate limiter unavailable; serving request unlimited", "rule", rule.Name, "err", err)
				}
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), unlimitedKey{}, true)))
				return
			}
			hv.set(w.Header(), d)
			if !d.Allowed {
				l.writer.Write(w, r, l.tooMany(d))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// unlimitedKey marks a request a rule served unlimited because Redis
// failed: the request's further rules (a 24-hour limit after the 15-minute
// one) do not wait for Redis again.
type unlimitedKey struct{}

// tooMany is the 429 of an exhausted window, with Retry-After: the whole
// seconds until the window resets, rounded up (at least 1).
func (l *Limiter) tooMany(d Decision) *apierr.Error {
	wait := d.Reset.Sub(l.now())
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	e := apierr.TooManyRequests()
	e.Header = http.Header{"Retry-After": {strconv.FormatInt(secs, 10)}}
	return e
}

// headerValues are a rule's header names (canonical) and the values that
// do not change with every request, rendered once and shared by its
// answers (nothing modifies a header value in place): the rule's limit
// (Allow answers with it), and the reset of the current window.
type headerValues struct {
	limitKey, remainingKey, resetKey string
	limit                            []string
	reset                            atomic.Pointer[resetValue]
}

func newHeaderValues(rule Rule) *headerValues {
	p := rule.headerPrefix()
	return &headerValues{limitKey: http.CanonicalHeaderKey(p + "-Limit"), remainingKey: http.CanonicalHeaderKey(p + "-Remaining"),
		resetKey: http.CanonicalHeaderKey(p + "-Reset"), limit: []string{strconv.Itoa(rule.Limit)}}
}

type resetValue struct {
	at    int64
	value []string
}

// set writes d's headers (x-rate-limit-* or the rule's own; canonical
// keys, as Header.Set).
func (hv *headerValues) set(h http.Header, d Decision) {
	at := d.Reset.Unix()
	reset := hv.reset.Load()
	if reset == nil || reset.at != at {
		reset = &resetValue{at: at, value: []string{strconv.FormatInt(at, 10)}}
		hv.reset.Store(reset)
	}
	h[hv.limitKey] = hv.limit
	h[hv.remainingKey] = []string{strconv.Itoa(d.Remaining)}
	h[hv.resetKey] = reset.value
}
