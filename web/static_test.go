package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStylesheet(t *testing.T) {
	h := Stylesheet()
	get := func(method string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, StylesheetPath, nil)
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := get(http.MethodGet, nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("GET: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !strings.Contains(w.Body.String(), "main {") {
		t.Errorf("GET body is not the stylesheet: %.80q", w.Body.String())
	}
	etag := w.Header().Get("ETag")
	if etag == "" || w.Header().Get("Cache-Control") != "public, max-age=86400" {
		t.Errorf("caching headers: ETag %q Cache-Control %q", etag, w.Header().Get("Cache-Control"))
	}
	tests := []struct {
		name   string
		method string
		header map[string]string
		want   int
	}{
		{"revalidated", http.MethodGet, map[string]string{"If-None-Match": etag}, http.StatusNotModified},
		{"stale etag", http.MethodGet, map[string]string{"If-None-Match": `"other"`}, http.StatusOK},
		{"head", http.MethodHead, nil, http.StatusOK},
		{"post", http.MethodPost, nil, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := get(tt.method, tt.header).Code; got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLayoutLinksTheStylesheet(t *testing.T) {
	k, err := NewKit(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	k.Error(w, httptest.NewRequest(http.MethodGet, "/", nil), http.StatusBadRequest, "Bad", "detail")
	if !strings.Contains(w.Body.String(), `<link rel="stylesheet" href="`+StylesheetPath+`">`) {
		t.Errorf("page does not link %s:\n%s", StylesheetPath, w.Body.String())
	}
}

// TestHTMX: the vendored htmx is served as JavaScript with its ETag.
func TestHTMX(t *testing.T) {
	w := httptest.NewRecorder()
	HTMX().ServeHTTP(w, httptest.NewRequest(http.MethodGet, HTMXPath, nil))
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || w.Header().Get("ETag") == "" {
		t.Fatalf("GET: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Header().Get("ETag"))
	}
	if !strings.Contains(w.Body.String(), "htmx") {
		t.Errorf("GET body is not htmx: %.80q", w.Body.String())
	}
	w = httptest.NewRecorder()
	HTMX().ServeHTTP(w, httptest.NewRequest(http.MethodPost, HTMXPath, nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", w.Code)
	}
}
