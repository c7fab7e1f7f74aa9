package apitest

import (
	"os"
	"testing"
)

// OpenAPIDescription is the platform's OpenAPI description as read from
// the file OpenAPIRouter loads: skipped without it, failed under CI
// (docs/openapi-conformance.md).
func OpenAPIDescription(t *testing.T) []byte {
	t.Helper()
	file, found := openapiPath()
	if !found {
		msg := missingOpenAPI(file)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
