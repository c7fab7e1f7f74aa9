package oauth

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/web"
)

// Limits are the token endpoints' rate limits (docs/oauth.md, "Rate
// limits on the token endpoints"): PerClient requests of one client (an
// OAuth 2.0 client_id, or an app's consumer key on /oauth2/*) and
// PerAddress failed client authentications from one address, in each
// fixed window of Window.Size. A limit of 0 is off.
type Limits struct {
	Window     *web.Window
	PerClient  int64
	PerAddress int64
}

// WithLimits makes s enforce limits; without it the token endpoints are
// not limited. It returns s.
func (s *Server) WithLimits(l Limits) *Server {
	s.limits = l
	return s
}

// limited is a refusal for a spent limit: retry is when the window ends.
type limited struct {
	retry time.Duration
	limit int64
	reset time.Time
}

// reserveAddress counts a client authentication from r's address before
// it is checked, so attempts sent at once cannot all pass a check made
// before any of them failed. Past the limit it answers *limited (the
// reservation given back). Otherwise the caller calls release once the
// client authenticated, or the request failed before authentication:
// only failed authentications stay counted.
func (s *Server) reserveAddress(r *http.Request) (release func(), l *limited) {
	release = func() {}
	if s.limits.Window == nil || s.limits.PerAddress <= 0 {
		return release, nil
	}
	key := "addr:" + web.ClientAddress(r)
	n, reset, err := s.limits.Window.Add(r.Context(), key)
	if err != nil {
		s.limitsDown(r.Context(), err)
		return release, nil
	}
	release = func() {
		if err := s.limits.Window.Undo(r.Context(), key); err != nil {
			s.limitsDown(r.Context(), err)
		}
	}
	if n <= s.limits.PerAddress {
		return release, nil
	}
	release()
	return func() {}, &limited{retry: reset, limit: s.limits.PerAddress, reset: s.now().Add(reset)}
}

// clientLimited counts a request of the authenticated client and reports
// whether it is over the client's limit; the rate headers are set on w.
func (s *Server) clientLimited(w http.ResponseWriter, r *http.Request, client string) *limited {
	if s.limits.Window == nil || s.limits.PerClient <= 0 {
		return nil
	}
	n, reset, err := s.limits.Window.Add(r.Context(), "client:"+client)
	if err != nil {
		s.limitsDown(r.Context(), err)
		return nil
	}
	at := s.now().Add(reset)
	h := w.Header()
	h.Set("x-rate-limit-limit", strconv.FormatInt(s.limits.PerClient, 10))
	h.Set("x-rate-limit-remaining", strconv.FormatInt(max(s.limits.PerClient-n, 0), 10))
	h.Set("x-rate-limit-reset", strconv.FormatInt(at.Add(time.Second-1).Unix(), 10))
	if n <= s.limits.PerClient {
		return nil
	}
	return &limited{retry: reset, limit: s.limits.PerClient, reset: at}
}

// limitsDown logs a Redis failure: the limits fail open, so an outage of
// Redis does not stop clients from getting and refreshing tokens.
func (s *Server) limitsDown(ctx context.Context, err error) {
	s.log.WarnContext(ctx, "token endpoint rate limit unavailable; request let through", "error", err)
}

// setRetryAfter sets Retry-After to the whole seconds until l's window ends.
func (l *limited) setRetryAfter(w http.ResponseWriter) {
	secs := int64((l.retry + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
}
