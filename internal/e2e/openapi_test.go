package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apitest"
)

// TestServedOpenAPIDescription: a real stack started with
// AVIARY_OPENAPI_FILE serves, without credentials, its description with
// the platform's schemas (GET /2/openapi.json) and the rendered view
// (GET /_aviary/docs); the ads sandbox listener describes its own
// endpoints only (docs/openapi.md).
func TestServedOpenAPIDescription(t *testing.T) {
	t.Parallel()
	file := apitest.OpenAPIFile(t)
	s := newStack(t, stackOptions{workers: 0, env: []string{"AVIARY_OPENAPI_FILE=" + file}})

	doc := s.do(http.MethodGet, "/2/openapi.json", "", nil)
	if doc.Status != http.StatusOK {
		t.Fatalf("GET /2/openapi.json: %d %.300s", doc.Status, doc.Raw)
	}
	info, _ := doc.Body["info"].(map[string]any)
	if info["version"] != e2eVersion || info["x-aviary-platform-description"] != "2.167" {
		t.Errorf("info %v: want the build's version and the platform's description 2.167", info)
	}
	paths, _ := doc.Body["paths"].(map[string]any)
	for _, p := range []string{"/2/tweets", "/2/compliance/jobs", "/12/accounts", "/_aviary/events", "/2/openapi.json"} {
		if paths[p] == nil {
			t.Errorf("%s is not described", p)
		}
	}
	schema, _ := pathOf(doc.Body, "paths", "/2/tweets/{id}", "get", "responses", "200", "content", "application/json", "schema").(map[string]any)
	if schema["$ref"] != "#/components/schemas/GetPostsByIdResponse" {
		t.Errorf("GET /2/tweets/{id}: the platform's response schema is not used: %v", schema)
	}

	page := s.do(http.MethodGet, "/_aviary/docs", "", nil)
	if page.Status != http.StatusOK || !strings.Contains(string(page.Raw), "/2/tweets/{id}") {
		t.Errorf("GET /_aviary/docs: %d %.300s", page.Status, page.Raw)
	}

	req, err := http.NewRequest(http.MethodGet, s.sandboxURL+"/2/openapi.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	sandbox := s.send(req)
	sp, _ := sandbox.Body["paths"].(map[string]any)
	if sandbox.Status != http.StatusOK || sp["/12/accounts"] == nil || sp["/2/tweets"] != nil || sp["/_aviary/events"] != nil {
		t.Errorf("sandbox description: %d, paths %d (want the ads ones, no core)", sandbox.Status, len(sp))
	}
}

// pathOf walks a decoded JSON value along keys.
func pathOf(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
