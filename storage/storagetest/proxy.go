package storagetest

import (
	"net"
	"sync"
	"testing"
)

// Proxy relays TCP connections to a real service and can take it away:
// Cut closes every open connection, SetDown(true) also refuses new ones
// until SetDown(false), and Freeze makes the service hang: connections stay
// open and new ones are accepted, but no byte is relayed in either direction
// until Thaw. Tests use it to make Redis, PostgreSQL or S3 unreachable or
// unresponsive for one process while the service itself keeps running.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
	// thawed is closed while bytes flow; Freeze replaces it with an open
	// channel, Thaw closes that one.
	thawed chan struct{}
	// closed is closed when the test ends, releasing frozen relays.
	closed chan struct{}
}

// NewProxy listens on a free loopback port and relays to target; it stops
// when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{},
		thawed: make(chan struct{}), closed: make(chan struct{})}
	close(p.thawed)
	t.Cleanup(func() {
		ln.Close()
		close(p.closed)
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
	go func() { p.pipe(up, c); up.Close() }()
	p.pipe(c, up)
	c.Close()
}

// pipe copies src to dst until either fails, holding every chunk while the
// proxy is frozen.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitThawed() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// waitThawed blocks while the proxy is frozen; false when the test ended.
func (p *Proxy) waitThawed() bool {
	p.mu.Lock()
	thawed := p.thawed
	p.mu.Unlock()
	select {
	case <-thawed:
		return true
	case <-p.closed:
		return false
	}
}

// Freeze stops relaying: open connections stay open and new ones are
// accepted (and dialled through), but what either side sends is held until
// Thaw, so the service looks hung rather than down.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
	default: // already frozen
	}
}

// Thaw relays again, delivering what was held while frozen.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
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
