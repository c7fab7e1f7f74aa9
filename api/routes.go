package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aviary-dev/aviary/api/ratelimit"
)

// window is the platform's standard rate-limit window.
const window = 15 * time.Minute

// endpoint describes one API route: how callers authenticate, whether it
// writes, its rate limit, the query parameters it accepts and its handler.
type endpoint struct {
	pattern string
	auth    func(http.Handler) http.Handler
	access  access
	limit   ratelimit.Rule
	query   []string
	handle  handlerFunc
}

// access is what an endpoint does with the caller's data.
type access int

const (
	// reads needs no write permission.
	reads access = iota
	// writes refuses read-only OAuth 1.0a tokens (Authenticator.RequireWrite).
	writes
)

func (s *Server) endpoints() []endpoint {
	jobFields := []string{"compliance_job.fields"}
	return []endpoint{
		{"POST /2/compliance/jobs", s.Auth.RequireBearer, writes, s.rule("compliance_jobs_create", 150, ratelimit.PerApp), jobFields, s.createComplianceJob},
		{"GET /2/compliance/jobs", s.Auth.RequireBearer, reads, s.rule("compliance_jobs_list", 150, ratelimit.PerApp), []string{"type", "status", "compliance_job.fields"}, s.listComplianceJobs},
		{"GET /2/compliance/jobs/{id}", s.Auth.RequireBearer, reads, s.rule("compliance_jobs_get", 150, ratelimit.PerApp), jobFields, s.getComplianceJob},
		{"POST /2/tweets", s.Auth.RequireUser, writes, s.rule("tweets_create", 200, ratelimit.PerUser), nil, s.createPost},
		{"DELETE /2/tweets/{id}", s.Auth.RequireUser, writes, s.rule("tweets_delete", 50, ratelimit.PerUser), nil, s.deletePost},
	}
}

func (s *Server) rule(name string, perWindow int, scope ratelimit.Scope) ratelimit.Rule {
	limit := int(float64(perWindow) * s.RateLimitScale)
	if limit < 1 {
		limit = 1
	}
	return ratelimit.Rule{Name: name, Limit: limit, Window: window, Scope: scope}
}

func (s *Server) routes() {
	for _, e := range s.endpoints() {
		h := s.adapt(e.handle)
		h = s.rejectUnknownQuery(e.query, h)
		rule := s.limits.MustRegister(e.limit) // a duplicate or invalid rule is a wiring bug
		if s.Limiter != nil {
			h = s.Limiter.Middleware(rule)(h)
		}
		if e.access == writes {
			h = s.Auth.RequireWrite(h) // before the limiter: a refused write costs no quota
		}
		s.mux.Handle(e.pattern, e.auth(h))
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
	s.mux.Handle("/", s.adapt(s.unrouted))
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
		return errMethodNotAllowed(r.Method, allowed)
	}
	return errRouteNotFound(r.URL.Path)
}
