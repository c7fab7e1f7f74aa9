// Package outboundtest holds what the guarded client's tests (and those of
// its users: catalog image checks, webhook CRC) aim at: a target that
// counts the connections it gets, so a test proves a refused request never
// reached it. Test files only import it.
package outboundtest

import (
	"net"
	"sync/atomic"
	"testing"
)

// Target accepts and closes connections on its address, counting them.
type Target struct {
	ln       net.Listener
	accepted atomic.Int64
}

// Listen opens a Target on addr ("127.0.0.1:0", "[::1]:0"), closed when
// the test ends; nil when the network is not available here.
func Listen(t testing.TB, network, addr string) *Target {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil
	}
	c := &Target{ln: ln}
	go c.accept()
	t.Cleanup(c.Close)
	return c
}

// MustListen is Listen, skipping the test when the network is not
// available.
func MustListen(t testing.TB, network, addr string) *Target {
	t.Helper()
	c := Listen(t, network, addr)
	if c == nil {
		t.Skipf("listen %s %s: not available here", network, addr)
	}
	return c
}

func (c *Target) accept() {
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.accepted.Add(1)
		conn.Close()
	}
}

// Accepted is how many connections the target got.
func (c *Target) Accepted() int64 { return c.accepted.Load() }

// Addr is the target's host:port.
func (c *Target) Addr() string { return c.ln.Addr().String() }

// Port is the target's port.
func (c *Target) Port() string {
	_, port, _ := net.SplitHostPort(c.Addr())
	return port
}

// Close stops the target: its address then refuses connections.
func (c *Target) Close() { c.ln.Close() }
