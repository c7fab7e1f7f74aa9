package api

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/compliance"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/api/posts"
)

// Modules are the API's features; cmd builds each from the backends. A nil
// module is not served.
type Modules struct {
	Compliance *compliance.Module
	Media      *media.Module
	Posts      *posts.Module
}

// endpoints is every feature's endpoints, in the order they are listed here.
func (m Modules) endpoints() []httpx.Endpoint {
	var all []httpx.Endpoint
	if m.Compliance != nil {
		all = append(all, m.Compliance.Routes()...)
	}
	if m.Media != nil {
		all = append(all, m.Media.Routes()...)
	}
	if m.Posts != nil {
		all = append(all, m.Posts.Routes()...)
	}
	return all
}

func (s *Server) routes() {
	stack := &httpx.Stack{Errors: s.Errors, Logger: s.Logger, Auth: s.Auth, Limiter: s.Limiter,
		RateLimitScale: s.RateLimitScale, Rules: s.limits}
	for _, e := range s.Modules.endpoints() {
		s.mux.Handle(e.Pattern, stack.Handler(e))
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	if s.Gatherer != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.Gatherer, promhttp.HandlerOpts{
			ErrorLog: slog.NewLogLogger(s.Logger.Handler(), slog.LevelError), // its request line is only Debug
		}))
	}
	for prefix, h := range s.Mounts {
		s.mux.Handle(prefix, h)
	}
	s.mux.Handle("/", httpx.Adapt(s.Errors, s.Logger, s.unrouted))
}

// unrouted answers requests no endpoint matched: 405 when the path exists
// with other methods, else 404, both in the request's error envelope.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) error {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		return apierr.MethodNotAllowed(r.Method, allowed)
	}
	return apierr.RouteNotFound(r.URL.Path)
}
