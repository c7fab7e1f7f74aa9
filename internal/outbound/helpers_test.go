package outbound

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// countingListener accepts and closes connections on addr, counting them:
// the target a refused request must never reach.
type countingListener struct {
	ln       net.Listener
	accepted atomic.Int64
}

func listenCounting(t *testing.T, network, addr string) *countingListener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("listen %s %s: %v", network, addr, err)
	}
	c := &countingListener{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *countingListener) port() string {
	_, port, _ := net.SplitHostPort(c.ln.Addr().String())
	return port
}

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
