package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/httpx"
)

// checkTimeout bounds each readiness check.
const checkTimeout = 2 * time.Second

// healthz is liveness: the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	_ = httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// SetDraining makes /readyz answer 503 {"status":"draining"} from now on, so
// load balancers stop routing here while in-flight requests finish. Call it
// when shutdown begins; it cannot be undone.
func (s *Server) SetDraining() { s.draining.Store(true) }

// readyz answers 503 while draining; otherwise it runs every dependency
// check and answers 503 if any fails, marking it "unavailable" (the error
// itself is logged, never sent: it may name hosts or credentials).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		_ = httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	results := s.runChecks(r.Context())
	code, overall := http.StatusOK, "ok"
	for _, st := range results {
		if st != "ok" {
			code, overall = http.StatusServiceUnavailable, "unavailable"
		}
	}
	_ = httpx.WriteJSON(w, code, map[string]any{"status": overall, "checks": results})
}

// runChecks runs the readiness checks concurrently and returns "ok" or
// "unavailable" per check name. It waits checkTimeout at most: a check still
// running then (one whose dependency ignores the context) is reported
// unavailable and left to finish on its own.
func (s *Server) runChecks(ctx context.Context) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	type result struct {
		name string
		err  error
	}
	done := make(chan result, len(s.Ready))
	results := make(map[string]string, len(s.Ready))
	for _, c := range s.Ready {
		go func() { done <- result{c.Name, c.Check(ctx)} }()
	}
	for range s.Ready {
		select {
		case r := <-done:
			results[r.name] = s.checkStatus(ctx, r.name, r.err)
		case <-ctx.Done():
			for len(done) > 0 { // results that came with the deadline
				r := <-done
				results[r.name] = s.checkStatus(ctx, r.name, r.err)
			}
			s.warnPending(ctx, results)
			return results
		}
	}
	return results
}

// checkStatus is "ok" for a check that passed; a failure is logged.
func (s *Server) checkStatus(ctx context.Context, name string, err error) string {
	if err != nil {
		s.Logger.WarnContext(ctx, "readiness check failed", "check", name, "err", err)
		return "unavailable"
	}
	return "ok"
}

// warnPending marks unavailable, and logs, every check without a result.
func (s *Server) warnPending(ctx context.Context, results map[string]string) {
	for _, c := range s.Ready {
		if _, ok := results[c.Name]; !ok {
			results[c.Name] = s.checkStatus(ctx, c.Name, fmt.Errorf("no answer within %v", checkTimeout))
		}
	}
}
