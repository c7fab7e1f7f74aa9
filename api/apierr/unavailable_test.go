package apierr

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// TestWriteUnavailable: a dependency outage (storage.ErrUnavailable wrapped
// at any depth) is a 503 with Retry-After in the request's envelope, not a
// 500.
func TestWriteUnavailable(t *testing.T) {
	err := fmt.Errorf("create post: %w", fmt.Errorf("load app: %w: dial tcp: connection refused", storage.ErrUnavailable))
	tests := []struct {
		name        string
		envelope    Envelope
		contentType string
		check       func(body map[string]any) bool
	}{
		{"core", Core, "application/problem+json", func(b map[string]any) bool {
			return b["type"] == "about:blank" && b["title"] == "Service Unavailable" && b["status"] == float64(503)
		}},
		{"ads", Ads, "application/json; charset=utf-8", func(b map[string]any) bool {
			errs, _ := b["errors"].([]any)
			first, _ := errs[0].(map[string]any)
			return len(errs) == 1 && first["code"] == "SERVICE_UNAVAILABLE"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/2/tweets", nil)
			r = r.WithContext(WithEnvelope(r.Context(), tt.envelope))
			rec := httptest.NewRecorder()
			Writer{Logger: slog.New(slog.DiscardHandler)}.Write(rec, r, err)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Fatalf("status %d, Retry-After %q; want 503 with it", rec.Code, rec.Header().Get("Retry-After"))
			}
			var body map[string]any
			if jerr := json.Unmarshal(rec.Body.Bytes(), &body); jerr != nil || rec.Header().Get("Content-Type") != tt.contentType || !tt.check(body) {
				t.Errorf("body %s (%v), content type %q", rec.Body, jerr, rec.Header().Get("Content-Type"))
			}
		})
	}
}
