package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
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
