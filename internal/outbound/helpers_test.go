package outbound

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// allowServer starts h and returns it with an allow-list holding it.
func allowServer(t testing.TB, h http.Handler) (*httptest.Server, AllowList) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	allow, err := ParseAllowList(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("allow-list: %v", err)
	}
	return srv, allow
}
