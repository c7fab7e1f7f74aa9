package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/internal/logctx"
)

type requestIDKey struct{}

// RequestIDHeader carries the request id in and out.
const RequestIDHeader = "X-Request-Id"

// validRequestID reports whether a client's request id can be kept: 1 to 128
// characters of [A-Za-z0-9._-]. (A loop, not a regexp: it runs on every
// request.)
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// middleware wraps the router. The envelope is chosen first so panics on
// ads paths render in the ads envelope, and every wrapper that replaces the
// request (WithContext) sits outside logRequests, so the request the router
// marks with its pattern is the one logRequests labels metrics with.
func (s *Server) middleware(next http.Handler) http.Handler {
	return s.withEnvelope(s.recoverPanics(s.withRequestID(s.logRequests(next))))
}

// withEnvelope picks the error envelope: advertising paths start with a
// numeric version segment other than 2 (/12/..., /5/...), also when the
// path is not in clean form (//12/x).
func (s *Server) withEnvelope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAdsPath(cleanPath(r.URL.Path)) {
			r = r.WithContext(apierr.WithEnvelope(r.Context(), apierr.Ads))
		}
		if s.Sandbox {
			r = r.WithContext(adsx.WithSandbox(r.Context()))
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

// rejectUncleanPaths answers a request whose path is not in clean form
// (an empty, "." or ".." segment: //, /2/./tweets, /2//compliance/jobs) with
// 404 in the request's envelope. ServeMux would redirect it to the cleaned
// path with an HTML body instead: an API answer must stay in the API's
// envelope, and a redirect would make a client send its request (and
// credentials, signed for the other path) somewhere it did not name.
func (s *Server) rejectUncleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; r.Method != http.MethodConnect && p != cleanPath(p) {
			s.Errors.Write(w, r, apierr.RouteNotFound(p))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath is the canonical form of p as ServeMux computes it: rooted,
// path.Clean'ed, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := logctx.With(r.Context(), slog.String("request_id", id))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusRecorder remembers the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	// app, problemType and title are what the request recorder keeps
	// (httpx.AppNoter, apierr.ProblemNoter).
	app                int64
	problemType, title string
}

// NoteApp keeps the app the request was authenticated for.
func (rec *statusRecorder) NoteApp(app int64) { rec.app = app }

// NoteProblem keeps the problem of an error answer.
func (rec *statusRecorder) NoteProblem(typeURI, title string) {
	rec.problemType, rec.title = typeURI, title
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
		end := time.Now()
		elapsed := end.Sub(start)
		s.metrics.observe(r.Method, route, rec.status, elapsed)
		s.logRequest(r, route, rec, end, elapsed)
		s.recordOps(w, r, rec, end)
	})
}

// logRequest writes the request line. It builds the record itself, with
// typed attributes (no boxing into ...any) and without a source position:
// Logger.LogAttrs would walk the stack (runtime.Callers) on every request
// for a position no handler here prints.
func (s *Server) logRequest(r *http.Request, route string, rec *statusRecorder, end time.Time, elapsed time.Duration) {
	ctx := r.Context()
	level := requestLogLevel(route, rec.status)
	h := s.Logger.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	line := slog.NewRecord(end, level, "http request", 0)
	line.AddAttrs(slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", route),
		slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000), slog.String("remote", r.RemoteAddr))
	_ = h.Handle(ctx, line)
}

// probeRoutes are polled every few seconds by orchestrators and scrapers;
// their request lines are logged at Debug so they do not drown the rest.
// (A failing readiness check is logged by readyz itself.)
var probeRoutes = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// requestLogLevel is the level of a request line: Debug for probes, Warn
// for 503 (a dependency outage or an overload: expected, documented, the
// client is told to retry; docs/outages.md), Error for the other server
// errors, else Info.
func requestLogLevel(route string, status int) slog.Level {
	switch {
	case probeRoutes[route]:
		return slog.LevelDebug
	case status == http.StatusServiceUnavailable:
		return slog.LevelWarn
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
