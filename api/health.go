package api

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// checkTimeout bounds each readiness check.
const checkTimeout = 2 * time.Second

// healthz is liveness: the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	_ = writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
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
		_ = writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	results := s.runChecks(r.Context())
	code, overall := http.StatusOK, "ok"
	for _, st := range results {
		if st != "ok" {
			code, overall = http.StatusServiceUnavailable, "unavailable"
		}
	}
	_ = writeJSON(w, code, map[string]any{"status": overall, "checks": results})
}

// runChecks runs the readiness checks concurrently (checkTimeout each) and
// returns "ok" or "unavailable" per check name.
func (s *Server) runChecks(ctx context.Context) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	results := make(map[string]string, len(s.Ready))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range s.Ready {
		wg.Go(func() {
			status := "ok"
			if err := c.Check(ctx); err != nil {
				status = "unavailable"
				s.Logger.WarnContext(ctx, "readiness check failed", "check", c.Name, "err", err)
			}
			mu.Lock()
			results[c.Name] = status
			mu.Unlock()
		})
	}
	wg.Wait()
	return results
}
