package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
)

func TestMethodLabel(t *testing.T) {
	tests := []struct{ method, want string }{
		{"GET", "GET"},
		{"HEAD", "HEAD"},
		{"POST", "POST"},
		{"PUT", "PUT"},
		{"PATCH", "PATCH"},
		{"DELETE", "DELETE"},
		{"OPTIONS", "OPTIONS"},
		{"get", "other"}, // methods are case-sensitive
		{"TRACE", "other"},
		{"CONNECT", "other"},
		{"PROPFIND", "other"},
		{"X-RANDOM-1234", "other"},
		{"", "other"},
	}
	for _, tt := range tests {
		if got := methodLabel(tt.method); got != tt.want {
			t.Errorf("methodLabel(%q) = %q, want %q", tt.method, got, tt.want)
		}
	}
}

// passAuth lets every request through; these tests exercise the middleware
// chain, not authentication.
type passAuth struct{}

func (passAuth) Middleware(auth.Requirement) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return next }
}

// TestRouteLabels checks that metrics carry the matched route for core and
// ads paths alike (the ads envelope replaces the request on its way in).
func TestRouteLabels(t *testing.T) {
	s := New(Deps{Auth: passAuth{}, Logger: slog.New(slog.DiscardHandler)})
	s.mux.HandleFunc("GET /12/accounts/{account_id}", func(w http.ResponseWriter, r *http.Request) {
		if apierr.EnvelopeOf(r.Context()) != apierr.Ads {
			t.Errorf("ads route served without the ads envelope")
		}
	})
	for _, path := range []string{"/12/accounts/abc", "/healthz", "/12/nothing"} {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`aviary_http_requests_total{method="GET",route="GET /12/accounts/{account_id}",status="200"} 1`,
		`aviary_http_requests_total{method="GET",route="GET /healthz",status="200"} 1`,
		`aviary_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
