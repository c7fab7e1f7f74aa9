package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// OpsRecorder keeps what the console's operations pages show
// (storage/opsredis.Recorder: gathered in memory, written to Redis every
// second off the request path; docs/console.md).
type OpsRecorder interface {
	// Request counts one answer of app (0: none) by status class.
	Request(app int64, status int, at time.Time)
	// Error keeps one 4xx or 5xx answer.
	Error(e storage.APIError)
}

// opsSkipped are the paths whose requests are not the API's answers: the
// console and its assets, the public media files, the queue dashboard, Aviary's own endpoints,
// probes and metrics.
var opsSkipped = []string{"/console", "/i/", "/media/", "/admin/", "/_aviary/", "/healthz", "/readyz", "/metrics"}

// recordOps counts the request and keeps it when it is an error answer.
func (s *Server) recordOps(w http.ResponseWriter, r *http.Request, rec *statusRecorder, end time.Time) {
	if s.Ops == nil {
		return
	}
	p := r.URL.Path
	for _, pre := range opsSkipped {
		if strings.HasPrefix(p, pre) {
			return
		}
	}
	s.Ops.Request(rec.app, rec.status, end)
	if rec.status < 400 {
		return
	}
	s.Ops.Error(storage.APIError{At: end.UTC(), AppID: rec.app, Method: r.Method, Path: p, Status: rec.status,
		Type: rec.problemType, Title: rec.title, RequestID: w.Header().Get(RequestIDHeader)})
}
