package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// TestValidRequestID: the loop accepts exactly what the documented pattern
// ^[A-Za-z0-9._-]{1,128}$ does.
func TestValidRequestID(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	cases := []string{"", "a", "A-Z_0.9", strings.Repeat("x", 128), strings.Repeat("x", 129), "has space", "semi;colon",
		"new\nline", "é", "abc\x00", "/slash", "plus+", "tilde~", "ok-id_1.2"}
	for c := 0; c < 256; c++ {
		cases = append(cases, "id"+string(rune(c)), string([]byte{byte(c)}))
	}
	for _, id := range cases {
		if got, want := validRequestID(id), re.MatchString(id); got != want {
			t.Errorf("validRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestMetricsSeriesCache: repeated requests of one label set count in one
// series; another status gets its own.
func TestMetricsSeriesCache(t *testing.T) {
	t.Parallel()
	s := New(Deps{Auth: passAuth{}, Logger: slog.New(slog.DiscardHandler)})
	for range 3 {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
	}
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/nothing", nil))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`aviary_http_requests_total{method="GET",route="GET /healthz",status="200"} 3`,
		`aviary_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`aviary_http_request_duration_seconds_count{method="GET",route="GET /healthz"} 3`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// levelRecorder keeps the level of every "http request" line.
type levelRecorder struct {
	mu     sync.Mutex
	levels []slog.Level
}

func (l *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *levelRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *levelRecorder) WithGroup(string) slog.Handler            { return l }
func (l *levelRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "http request" {
		l.mu.Lock()
		l.levels = append(l.levels, r.Level)
		l.mu.Unlock()
	}
	return nil
}

// TestRequestLogLevelOfServerErrors: a 503 (a dependency outage, rendered
// by the error writer with Retry-After, in either envelope) is expected
// and its request line is a warning; other server errors stay errors.
func TestRequestLogLevelOfServerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path string
		err        error
		want       slog.Level
	}{
		{"core outage", "/2/outage", fmt.Errorf("look up: %w", storage.ErrUnavailable), slog.LevelWarn},
		{"ads outage", "/12/outage", fmt.Errorf("look up: %w", storage.ErrUnavailable), slog.LevelWarn},
		{"internal error", "/2/broken", errors.New("a bug"), slog.LevelError},
		{"bad gateway", "/2/gateway", &apierr.Error{Status: http.StatusBadGateway, Title: "Bad Gateway"}, slog.LevelError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &levelRecorder{}
			w := apierr.Writer{Logger: slog.New(slog.DiscardHandler)}
			s := New(Deps{Auth: passAuth{}, Errors: w, Logger: slog.New(logs)})
			s.mux.HandleFunc("GET "+tt.path, func(rw http.ResponseWriter, r *http.Request) { w.Write(rw, r, tt.err) })
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code < 500 {
				t.Fatalf("status %d, want a server error", rec.Code)
			}
			if len(logs.levels) != 1 || logs.levels[0] != tt.want {
				t.Errorf("request lines logged at %v, want one at %v (status %d)", logs.levels, tt.want, rec.Code)
			}
		})
	}
}
