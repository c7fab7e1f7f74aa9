package api

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/httpx"
)

// VersionHeader names the header every response carries: the Aviary
// build that answered, so a client or a CI job can tell it talks to
// Aviary and to which version (docs/aviary-endpoints.md).
const VersionHeader = "x-aviary-version"

// QueueDepth is one work queue's state as /_aviary/health shows it.
type QueueDepth struct {
	Name      string `json:"name"`
	Size      int    `json:"size"` // every task the queue holds, whatever its state
	Pending   int    `json:"pending"`
	Active    int    `json:"active"`
	Scheduled int    `json:"scheduled"`
	Retry     int    `json:"retry"`
	Archived  int    `json:"archived"`
	// LatencyMS is the age of the oldest pending task (0: none).
	LatencyMS int64 `json:"latency_ms"`
	Paused    bool  `json:"paused"`
}

// QueueInspector lists the work queues' depths (cmd: asynq's inspector).
type QueueInspector func(ctx context.Context) ([]QueueDepth, error)

// withVersion sets the version header on every response.
func (s *Server) withVersion(next http.Handler) http.Handler {
	version := s.Version
	if version == "" {
		version = "dev"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(VersionHeader, version)
		next.ServeHTTP(w, r)
	})
}

// healthReport is the body of GET /_aviary/health.
type healthReport struct {
	Status       string            `json:"status"`
	Version      string            `json:"version"`
	Surfaces     map[string]string `json:"surfaces"`
	Dependencies map[string]string `json:"dependencies"`
	Queues       []QueueDepth      `json:"queues"`
}

// aviaryHealth answers GET /_aviary/health: every surface this listener
// serves, each dependency's readiness check, the work queues' depths and
// the version. 200 when every dependency answers, else 503 with status
// "degraded" (and "draining" while shutting down); the queues are
// reported when Redis answers, else omitted and marked unavailable.
func (s *Server) aviaryHealth(w http.ResponseWriter, r *http.Request) {
	report := healthReport{Status: "ok", Version: s.Version, Surfaces: s.surfaces(), Queues: []QueueDepth{}}
	if report.Version == "" {
		report.Version = "dev"
	}
	report.Dependencies = s.runChecks(r.Context())
	code := http.StatusOK
	for _, st := range report.Dependencies {
		if st != "ok" {
			report.Status, code = "degraded", http.StatusServiceUnavailable
		}
	}
	if s.Queues != nil {
		qs, err := s.Queues(r.Context())
		if err != nil {
			s.Logger.WarnContext(r.Context(), "health: queue depths", "err", err)
			report.Dependencies["queues"] = "unavailable"
			report.Status, code = "degraded", http.StatusServiceUnavailable
		} else {
			slices.SortFunc(qs, func(a, b QueueDepth) int { return cmp.Compare(a.Name, b.Name) })
			report.Queues = qs
		}
	}
	if s.draining.Load() {
		report.Status, code = "draining", http.StatusServiceUnavailable
	}
	_ = httpx.WriteJSON(w, code, report)
}

// surfaces names what this listener serves: each feature module, "serving".
func (s *Server) surfaces() map[string]string {
	out := map[string]string{}
	for _, name := range s.Modules.served(s.Sandbox) {
		out[name] = "serving"
	}
	for prefix := range s.Mounts {
		out[mountSurface(prefix)] = "serving"
	}
	return out
}

// mountSurface names the surface a mount belongs to: the OAuth web tier,
// the queue dashboard, the local blob driver's URLs, or the prefix itself.
func mountSurface(prefix string) string {
	switch {
	case strings.HasPrefix(prefix, "/blobs/"):
		return "blobs"
	case strings.HasPrefix(prefix, "/admin/queues"):
		return "queue_dashboard"
	case strings.Contains(prefix, "oauth"), strings.HasPrefix(prefix, "/i/"):
		return "oauth"
	}
	return strings.Trim(prefix, "/")
}
