// Package api is Aviary's HTTP tier: it authenticates, validates, records the
// request through the storage interfaces, enqueues work for the workers and
// answers. It never talks SQL or S3 itself and renders every failure through
// the apierr catalogue.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/validation"
)

// Enqueuer hands tasks to the queue (an *asynq.Client satisfies it).
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// Authenticator guards routes by credential kind and write permission
// (RequireWrite runs inside one of the other three).
type Authenticator interface {
	RequireApp(next http.Handler) http.Handler
	RequireUser(next http.Handler) http.Handler
	RequireBearer(next http.Handler) http.Handler
	RequireWrite(next http.Handler) http.Handler
}

// RateLimiter builds per-route rate-limit middleware.
type RateLimiter interface {
	Middleware(rule ratelimit.Rule) func(http.Handler) http.Handler
}

// Check is one readiness dependency.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// Deps is everything the API tier needs; cmd wires concrete implementations.
type Deps struct {
	Store      Store
	Blobs      blob.Store
	Queue      Enqueuer
	Auth       Authenticator
	Limiter    RateLimiter
	Errors     apierr.Writer
	Logger     *slog.Logger
	Validator  *validation.Validator
	Clock      func() time.Time
	Ready      []Check
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Mounts are extra handlers served under a path prefix (the local blob
	// driver's presigned URLs, the queue dashboard).
	Mounts map[string]http.Handler
	// MaxBodyBytes caps JSON request bodies (default 1 MiB).
	MaxBodyBytes int64
	// RateLimitScale multiplies every route's limit (default 1).
	RateLimitScale float64
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
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Validator == nil {
		d.Validator = validation.New()
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = 1 << 20
	}
	if d.RateLimitScale <= 0 {
		d.RateLimitScale = 1
	}
	if d.Registerer == nil {
		reg := prometheus.NewRegistry()
		d.Registerer, d.Gatherer = reg, reg
	}
	s := &Server{Deps: d, mux: http.NewServeMux(), metrics: newHTTPMetrics(d.Registerer), limits: ratelimit.NewRegistry()}
	s.routes()
	s.handler = s.middleware(s.mux)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// RateLimits lists the rule of every rate-limited endpoint.
func (s *Server) RateLimits() []ratelimit.Rule { return s.limits.Rules() }

func (s *Server) now() time.Time { return s.Clock().UTC() }
