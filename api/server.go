// Package api is Aviary's HTTP tier. Server is the mux and the middleware
// around it (request ids, error envelopes, panics, logs and metrics, health
// and readiness); routes.go lists the feature modules whose endpoints it
// serves, each built on the api/httpx kit. Features authenticate and
// validate requests, record them through their own narrow store interfaces
// and answer; the heavy work happens in the workers, which notice or are
// handed the recorded work. The API never talks SQL or S3 itself and renders
// every failure through the apierr catalogue.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/faults"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/api/selfdoc"
)

// Check is one readiness dependency.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// Deps is everything the API tier needs; cmd wires concrete implementations.
type Deps struct {
	// Modules are the feature modules whose endpoints are served.
	Modules Modules
	Auth    httpx.Authorizer
	// Limiter enforces the endpoints' rate limits; nil serves unlimited.
	Limiter    httpx.Limiter
	Errors     apierr.Writer
	Logger     *slog.Logger
	Ready      []Check
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Mounts are extra handlers served under a path prefix (the local blob
	// driver's presigned URLs, the queue dashboard).
	Mounts map[string]http.Handler
	// RateLimitScale multiplies every route's limit (default 1).
	RateLimitScale float64
	// Version is the build's version, sent in x-aviary-version on every
	// response and shown by /_aviary/health ("dev" when empty).
	Version string
	// Queues reports the work queues' depths for /_aviary/health (nil: not
	// shown).
	Queues QueueInspector
	// Platform is the platform's OpenAPI description, whose schemas the
	// served description (GET /2/openapi.json) uses for the operations it
	// shares with it; nil describes every operation with Aviary's own
	// schemas (docs/openapi.md).
	Platform *selfdoc.Platform
	// PublicURL is the listener's public base URL, the served description's
	// server (empty: relative to where it is read).
	PublicURL string
	// Faults serves /_aviary/faults and injects the faults into every
	// endpoint (docs/faults.md); nil: no faults.
	Faults *faults.Module
	// Ops records the answers for the console's operations pages (request
	// counts, recent errors); nil records nothing.
	Ops OpsRecorder
	// Sandbox makes this the ads sandbox listener: only the ads features
	// are served, and they see sandbox accounts only (adsx.Sandbox).
	Sandbox bool
}

// Server is the HTTP handler of the API tier.
type Server struct {
	Deps
	mux      *http.ServeMux
	handler  http.Handler
	metrics  *httpMetrics
	limits   *ratelimit.Registry
	draining atomic.Bool
}

// New builds the API handler.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Registerer == nil {
		reg := prometheus.NewRegistry()
		d.Registerer, d.Gatherer = reg, reg
	}
	s := &Server{Deps: d, mux: http.NewServeMux(), metrics: newHTTPMetrics(d.Registerer), limits: ratelimit.NewRegistry()}
	s.routes()
	s.handler = s.withVersion(s.middleware(s.rejectUncleanPaths(s.mux)))
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// RateLimits lists the rule of every rate-limited endpoint.
func (s *Server) RateLimits() []ratelimit.Rule { return s.limits.Rules() }
