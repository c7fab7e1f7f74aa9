package ratelimit

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
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
// wiring bug and is answered with 500). Every counted response carries the
// x-rate-limit-* headers; when the window is exhausted it answers 429
// apierr.TooManyRequests itself and does not call next.
//
// Fail-open: if Redis cannot be reached (or does not answer within 250ms),
// the request is served without rate-limit headers and a warning is logged at most once a minute, so a
// limiter outage does not become an API outage.
//
// Middleware panics if rule is invalid (see Rule.Validate), at wiring time.
func (l *Limiter) Middleware(rule Rule) func(http.Handler) http.Handler {
	if err := rule.Validate(); err != nil {
		panic(err)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := auth.PrincipalFrom(r.Context())
			if !ok {
				l.writer.Write(w, r, errNoPrincipal)
				return
			}
			d, err := l.Allow(r.Context(), rule, SubjectOf(rule, p))
			if err != nil {
				if r.Context().Err() == nil {
					l.warn.warn(r.Context(), "rate limiter unavailable; serving request unlimited", "rule", rule.Name, "err", err)
				}
				next.ServeHTTP(w, r)
				return
			}
			setHeaders(w.Header(), d)
			if !d.Allowed {
				l.writer.Write(w, r, apierr.TooManyRequests())
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func setHeaders(h http.Header, d Decision) {
	h.Set(HeaderLimit, strconv.Itoa(d.Limit))
	h.Set(HeaderRemaining, strconv.Itoa(d.Remaining))
	h.Set(HeaderReset, strconv.FormatInt(d.Reset.Unix(), 10))
}
