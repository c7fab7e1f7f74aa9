package storagetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy relays TCP connections to a real service and can take it away:
// Cut closes every open connection, SetDown(true) also refuses new ones
// until SetDown(false). Tests use it to make Redis or S3 unreachable for one
// process while the service itself keeps running.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

// NewProxy listens on a free loopback port and relays to target; it stops
// when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		ln.Close()
		p.SetDown(true)
	})
	go p.accept()
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			continue
		}
		go p.relay(c)
	}
}

// track records an open connection; false while the proxy is down.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *Proxy) relay(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(up) {
		c.Close()
		if up != nil {
			up.Close()
		}
		return
	}
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// Cut closes every open connection and returns how many client
// connections it cut. New connections are still relayed.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutLocked()
}

func (p *Proxy) cutLocked() int {
	n := len(p.conns) / 2
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
	return n
}

// SetDown cuts every connection and refuses new ones (true), or relays
// again (false).
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		p.cutLocked()
	}
}
