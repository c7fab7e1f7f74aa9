package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
)

type requestIDKey struct{}

// RequestIDHeader carries the request id in and out.
const RequestIDHeader = "X-Request-Id"

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// middleware wraps the router. The envelope is chosen first so panics on
// ads paths render in the ads envelope, and every wrapper that replaces the
// request (WithContext) sits outside logRequests, so the request the router
// marks with its pattern is the one logRequests labels metrics with.
func (s *Server) middleware(next http.Handler) http.Handler {
	return s.withEnvelope(s.recoverPanics(s.withRequestID(s.logRequests(next))))
}

// withEnvelope picks the error envelope: advertising paths start with a
// numeric version segment other than 2 (/12/..., /5/...).
func (s *Server) withEnvelope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAdsPath(r.URL.Path) {
			r = r.WithContext(apierr.WithEnvelope(r.Context(), apierr.Ads))
		}
		next.ServeHTTP(w, r)
	})
}

func isAdsPath(path string) bool {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if seg == "" || seg == "2" {
		return false
	}
	for _, c := range seg {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !requestIDRE.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := withLogAttrs(r.Context(), slog.String("request_id", id))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// statusRecorder remembers the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rec *statusRecorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *statusRecorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer (flush,
// deadlines) for streaming endpoints.
func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		elapsed := time.Since(start)
		s.metrics.observe(r.Method, route, rec.status, elapsed)
		s.Logger.Log(r.Context(), requestLogLevel(route, rec.status), "http request", "method", r.Method, "path", r.URL.Path, "route", route,
			"status", rec.status, "bytes", rec.bytes, "duration_ms", float64(elapsed.Microseconds())/1000, "remote", r.RemoteAddr)
	})
}

// probeRoutes are polled every few seconds by orchestrators and scrapers;
// their request lines are logged at Debug so they do not drown the rest.
// (A failing readiness check is logged by readyz itself.)
var probeRoutes = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// requestLogLevel is the level of a request line: Debug for probes, Error
// for server errors, else Info.
func requestLogLevel(route string, status int) slog.Level {
	switch {
	case probeRoutes[route]:
		return slog.LevelDebug
	case status >= 500:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.Errors.Write(w, r, fmt.Errorf("panic serving %s %s: %v", r.Method, r.URL.Path, v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
