package apierr

import (
	"context"
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
	outage := fmt.Errorf("create post: %w", fmt.Errorf("load app: %w: dial tcp: connection refused", storage.ErrUnavailable))
	// A transaction's BEGIN that waited past its deadline under load (seen
	// as a 500 by the load test before): no storage sentinel, still a 503.
	deadline := fmt.Errorf("record batch of do-not-reach list 1: %w", context.DeadlineExceeded)
	tests := []struct {
		name        string
		err         error
		envelope    Envelope
		contentType string
		check       func(body map[string]any) bool
	}{
		{"core", outage, Core, "application/problem+json", func(b map[string]any) bool {
			return b["type"] == "about:blank" && b["title"] == "Service Unavailable" && b["status"] == float64(503)
		}},
		{"ads", outage, Ads, "application/json; charset=utf-8", adsUnavailable},
		{"ads deadline", deadline, Ads, "application/json; charset=utf-8", adsUnavailable},
		{"core deadline", deadline, Core, "application/problem+json", func(b map[string]any) bool { return b["status"] == float64(503) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/2/tweets", nil)
			r = r.WithContext(WithEnvelope(r.Context(), tt.envelope))
			rec := httptest.NewRecorder()
			Writer{Logger: slog.New(slog.DiscardHandler)}.Write(rec, r, tt.err)
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

// adsUnavailable: the ads envelope's one SERVICE_UNAVAILABLE error.
func adsUnavailable(b map[string]any) bool {
	errs, _ := b["errors"].([]any)
	if len(errs) != 1 {
		return false
	}
	first, _ := errs[0].(map[string]any)
	return first["code"] == "SERVICE_UNAVAILABLE"
}
