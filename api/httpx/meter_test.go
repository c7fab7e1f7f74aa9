package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type observer struct {
	http.ResponseWriter
	status int
	body   any
}

func (o *observer) ObserveJSON(status int, body any) { o.status, o.body = status, body }

type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestWriteJSONObserved: WriteJSON hands its body to the BodyObserver it
// writes to, directly or through Unwrap, and to none when there is none.
func TestWriteJSONObserved(t *testing.T) {
	t.Parallel()
	body := map[string]any{"data": []int{1}}
	tests := []struct {
		name   string
		wrap   func(*observer) http.ResponseWriter
		wanted bool
	}{
		{"observer", func(o *observer) http.ResponseWriter { return o }, true},
		{"wrapped observer", func(o *observer) http.ResponseWriter { return wrapper{wrapper{o}} }, true},
		{"no observer", func(o *observer) http.ResponseWriter { return o.ResponseWriter }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			o := &observer{ResponseWriter: rec}
			if err := WriteJSON(tt.wrap(o), http.StatusCreated, body); err != nil {
				t.Fatal(err)
			}
			if seen := o.body != nil; seen != tt.wanted || (seen && o.status != http.StatusCreated) {
				t.Fatalf("observed %d %v, want observed %v", o.status, o.body, tt.wanted)
			}
			if rec.Code != http.StatusCreated || rec.Body.String() != "{\"data\":[1]}\n" {
				t.Errorf("response %d %q", rec.Code, rec.Body.String())
			}
		})
	}
}
