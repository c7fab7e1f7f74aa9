package faults

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/faults"
)

// TestHookProbability: a fault applies when the draw falls below its
// probability, else the request is served.
func TestHookProbability(t *testing.T) {
	half := faults.Fault{ID: "h", Probability: 0.5, Effect: faults.Effect{Kind: faults.Status, Status: 503}}
	tests := []struct {
		name string
		draw float64
		want int
	}{
		{"draw below", 0.49, http.StatusServiceUnavailable},
		{"draw at", 0.5, http.StatusOK},
		{"draw above", 0.9, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Deps{Store: &memStore{faults: []faults.Fault{half}}, Random: func() float64 { return tt.draw }})
			m.Reload(context.Background())
			h := m.Wrap(httpx.Endpoint{Pattern: "GET /2/users/{id}"}, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/2/users/1", nil))
			if w.Code != tt.want {
				t.Errorf("status %d, want %d", w.Code, tt.want)
			}
		})
	}
}

// TestHookSkipsAviaryPaths: Aviary's own endpoints are never faulted.
func TestHookSkipsAviaryPaths(t *testing.T) {
	all := faults.Fault{ID: "a", Probability: 1, Effect: faults.Effect{Kind: faults.Status, Status: 500}}
	m := New(Deps{Store: &memStore{faults: []faults.Fault{all}}})
	m.Reload(context.Background())
	tests := []struct {
		pattern, path string
		want          int
	}{
		{"GET /_aviary/events", "/_aviary/events", http.StatusOK},
		{"GET /2/tweets", "/2/tweets", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		h := m.Wrap(httpx.Endpoint{Pattern: tt.pattern}, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tt.path, nil))
		if w.Code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.pattern, w.Code, tt.want)
		}
	}
}
