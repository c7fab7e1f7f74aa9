package httpx

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
)

// Authorizer builds the middleware that enforces an auth.Requirement
// (*auth.Authenticator).
type Authorizer interface {
	Middleware(req auth.Requirement) func(http.Handler) http.Handler
}

// Limiter builds per-rule rate-limit middleware (*ratelimit.Limiter).
type Limiter interface {
	Middleware(rule ratelimit.Rule) func(http.Handler) http.Handler
}

// Stack turns Endpoints into http.Handlers with their middleware, in this
// order: authentication and write access, injected faults (Faults, when
// set), the meter (usage caps and credits), rate limit (a refused caller
// costs no quota), query parameters, body rules, the handler.
type Stack struct {
	Errors apierr.Writer
	Logger *slog.Logger
	Auth   Authorizer
	// Limiter enforces Endpoint.Limit; nil serves without rate limits.
	Limiter Limiter
	// RateLimitScale multiplies every endpoint's limit (default 1).
	RateLimitScale float64
	// Rules records every rule wired (one name, one rule); nil skips it.
	Rules *ratelimit.Registry
	// Meter meters the endpoints it chooses (usage caps, credits); nil
	// meters none.
	Meter Meter
	// Faults injects faults on demand (api/faults); nil injects none.
	Faults Injector
}

// Handler builds e's handler. It panics on a wiring error (an invalid or
// conflicting rate-limit rule, a requirement that accepts nothing, a public
// endpoint whose limit is not per resource).
func (s *Stack) Handler(e Endpoint) http.Handler {
	h := Adapt(s.Errors, s.Logger, e.Handle)
	h = s.bodyRules(e.Body, h)
	h = s.rejectUnknownQuery(e.Query, h)
	rule, limited := s.rule(e.Limit)
	if e.Auth.Public && (!limited || rule.Scope != ratelimit.PerResource) {
		panic("httpx: public endpoint " + e.Pattern + " needs a per-resource rate limit: it has no caller to count")
	}
	if limited {
		h = onlyWhen(e.Limit.When, s.limits(rule, e.Limit.Also), h)
	}
	if s.Meter != nil {
		if mw := s.Meter.Middleware(e); mw != nil {
			h = mw(h)
		}
	}
	if s.Faults != nil {
		fe := e
		fe.Limit.Requests = rule.Limit // as scaled
		h = s.Faults.Wrap(fe, s.limitHeaders(rule, e.Limit, limited), h)
	}
	return s.Auth.Middleware(e.Auth)(noteApp(h))
}

// limits registers rule and the rules of also and returns the middleware
// enforcing them, rule outermost (nil Limiter: none).
func (s *Stack) limits(rule ratelimit.Rule, also []Limit) func(http.Handler) http.Handler {
	rules := []ratelimit.Rule{rule}
	for _, l := range also {
		if r, ok := s.rule(l); ok {
			rules = append(rules, r)
		}
	}
	var mws []func(http.Handler) http.Handler
	for _, r := range rules {
		if s.Rules != nil {
			s.Rules.MustRegister(r)
		}
		if s.Limiter != nil {
			mws = append(mws, s.Limiter.Middleware(r))
		}
	}
	return func(h http.Handler) http.Handler {
		for i := len(mws) - 1; i >= 0; i-- {
			h = mws[i](h)
		}
		return h
	}
}

// limitHeaders reports rule's and its Also rules' headers without
// charging (nil when the endpoint is not limited or the Limiter cannot
// peek).
func (s *Stack) limitHeaders(rule ratelimit.Rule, l Limit, limited bool) LimitHeaders {
	p, ok := s.Limiter.(HeaderPeeker)
	if !limited || !ok {
		return nil
	}
	rules := []ratelimit.Rule{rule}
	for _, a := range l.Also {
		if r, ok := s.rule(a); ok {
			rules = append(rules, r)
		}
	}
	return func(r *http.Request, h http.Header) {
		for _, rule := range rules {
			if !p.Headers(r, rule, h) {
				return
			}
		}
	}
}

// onlyWhen wraps h in mw for the requests when reports true for; a nil
// when wraps every request.
func onlyWhen(when func(*http.Request) bool, mw func(http.Handler) http.Handler, h http.Handler) http.Handler {
	limited := mw(h)
	if when == nil {
		return limited
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if when(r) {
			limited.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// rule is the ratelimit.Rule of l after scaling; false for no limit.
func (s *Stack) rule(l Limit) (ratelimit.Rule, bool) {
	if l.Name == "" {
		return ratelimit.Rule{}, false
	}
	scale := s.RateLimitScale
	if scale <= 0 {
		scale = 1
	}
	limit := max(int(float64(l.Requests)*scale), 1)
	window := l.Window
	if window == 0 {
		window = Window
	}
	return ratelimit.Rule{Name: l.Name, Limit: limit, Window: window, Scope: l.Scope, Resource: l.Resource, Headers: l.Headers}, true
}

// rejectUnknownQuery answers invalid-request when the query string carries a
// parameter the endpoint does not take or one of its parameters twice.
func (s *Stack) rejectUnknownQuery(allowed []string, next http.Handler) http.Handler {
	known := make(map[string]bool, len(allowed))
	for _, a := range allowed {
		known[a] = true
	}
	sorted := slices.Sorted(maps.Keys(known))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkQuery(r.URL.RawQuery, known, sorted); err != nil {
			s.Errors.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyRules enforces the content type (415) and caps the body (a read past
// the cap fails and Bind answers 413).
func (s *Stack) bodyRules(b Body, next http.Handler) http.Handler {
	if !b.accepts() {
		return next
	}
	maxBytes := b.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, err := mediaType(r, b.Types)
		if err != nil {
			s.Errors.Write(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), mediaTypeKey{}, mt))
		r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
		next.ServeHTTP(w, r)
	})
}

type mediaTypeKey struct{}

// BodyType is the media type of r's body as the endpoint's Body rule
// resolved it (one of its Types; the first when the request named none),
// or "" for an endpoint without a Body rule.
func BodyType(r *http.Request) string {
	mt, _ := r.Context().Value(mediaTypeKey{}).(string)
	return mt
}

// mediaType is the request's body media type if it is one of accepted (the
// first of them when the request names none), else 415.
func mediaType(r *http.Request, accepted []string) (string, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return accepted[0], nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !slices.Contains(accepted, mt) {
		return "", apierr.UnsupportedMediaType(accepted...)
	}
	return mt, nil
}

// Adapt turns a HandlerFunc into an http.Handler that renders its error
// through errs. An error wrapping ErrResponseStarted comes after the status
// line was sent, so it is only logged: a second header or body would corrupt
// the response.
func Adapt(errs apierr.Writer, log *slog.Logger, h HandlerFunc) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		switch {
		case err == nil:
		case errors.Is(err, ErrResponseStarted):
			logLateError(log, r, err)
		default:
			errs.Write(w, r, err)
		}
	})
}

// logLateError records a failure after the response started: at Debug when
// the client has gone away (routine), else at Warn.
func logLateError(log *slog.Logger, r *http.Request, err error) {
	level := slog.LevelWarn
	if r.Context().Err() != nil {
		level = slog.LevelDebug
	}
	log.Log(r.Context(), level, "response failed after it started", "method", r.Method, "path", r.URL.Path, "err", err)
}
