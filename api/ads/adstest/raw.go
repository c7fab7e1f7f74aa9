package adstest

import (
	"net/http"
	"strings"
	"testing"
)

// DoRaw sends a signed request with body as it is, of contentType (none
// when empty): the malformed bodies of the JSON endpoints' tests.
func (c *Caller) DoRaw(t testing.TB, method, path, contentType, body string) Reply {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return c.send(t, req)
}
