package api

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// healthz is liveness: the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	_ = writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz checks every dependency concurrently (2 s each) and answers 503 if
// any fails, naming it.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	results := make(map[string]string, len(s.Ready))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range s.Ready {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := "ok"
			if err := c.Check(ctx); err != nil {
				status = err.Error()
				s.Logger.WarnContext(ctx, "readiness check failed", "check", c.Name, "err", err)
			}
			mu.Lock()
			results[c.Name] = status
			mu.Unlock()
		}()
	}
	wg.Wait()
	code, overall := http.StatusOK, "ok"
	for _, st := range results {
		if st != "ok" {
			code, overall = http.StatusServiceUnavailable, "unavailable"
		}
	}
	_ = writeJSON(w, code, map[string]any{"status": overall, "checks": results})
}
