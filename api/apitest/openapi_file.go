package apitest

import (
	"os"
	"testing"
)

// OpenAPIFile is where the platform's OpenAPI description is read from
// (the file OpenAPIRouter loads): the test is skipped without it, failed
// under CI (docs/openapi-conformance.md).
func OpenAPIFile(t testing.TB) string {
	t.Helper()
	file, found := openapiPath()
	if !found {
		msg := missingOpenAPI(file)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return file
}

// OpenAPIDescription is the platform's OpenAPI description (see
// OpenAPIFile).
func OpenAPIDescription(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile(OpenAPIFile(t))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
