package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Default limits (issue 11's image fetch, which the webhook CRC shares): a
// body is at most 5 MB, reached in at most 3 redirects, within 10 s.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultMaxRedirects = 3
	DefaultTimeout      = 10 * time.Second
	// DefaultMaxHeaderBytes caps an answer's status line and header (the
	// transport's own default is 10 MB).
	DefaultMaxHeaderBytes = 64 << 10
)

// DefaultUserAgent names the client to the servers it reaches.
const DefaultUserAgent = "Aviary-Outbound/1.0"

// Errors callers turn into their own rules (besides *RefusedAddressError
// and timeouts).
var (
	// ErrTooLarge: the body is larger than the cap (read no further).
	ErrTooLarge = errors.New("body larger than the limit")
	// ErrScheme: the URL, or a redirect, is neither http nor https.
	ErrScheme = errors.New("only http and https URLs can be fetched")
	// ErrTooManyRedirects: more redirects than allowed.
	ErrTooManyRedirects = errors.New("too many redirects")
)

// StatusError is a response whose status is not 2xx. It keeps only the
// numeric code: the reason phrase is whatever the remote server sent
// (control characters and invalid UTF-8 included) and goes nowhere.
type StatusError struct {
	Code int
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.Code) }

// Config configures a Client; zero fields take the defaults above.
type Config struct {
	// Allow lists host:port entries that may be reached even though they
	// are refused addresses (AVIARY_FETCH_ALLOWLIST for image checks,
	// AVIARY_WEBHOOK_ALLOW for webhooks).
	Allow    AllowList
	MaxBytes int64
	// MaxHeaderBytes caps each answer's header (DefaultMaxHeaderBytes).
	MaxHeaderBytes int64
	MaxRedirects   int
	// NoRedirects follows no redirect: the 3xx response itself is the
	// answer (the webhook CRC: a redirect invalidates a webhook).
	NoRedirects bool
	// Timeout bounds a whole request: connections, redirects and body.
	Timeout time.Duration
	// Resolver resolves host names (nil: the default resolver).
	Resolver *net.Resolver
	// UserAgent is sent unless a request sets its own (DefaultUserAgent).
	UserAgent string
	// TLS configures TLS (nil: the system roots); tests trust their own
	// server's certificate with it.
	TLS *tls.Config
}

// Client makes HTTP requests to the public internet only: every
// connection, the first and each redirect's, is checked on the resolved
// address just before it is made, so neither a name resolving to a private
// address nor a redirect to one reaches it. It is the one way Aviary
// reaches a URL a client gave it (product images, webhook CRC and
// deliveries): docs/webhooks.md, "The guard".
type Client struct {
	cfg    Config
	client *http.Client
}

// New builds a Client.
func New(cfg Config) *Client {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	f := &Client{cfg: cfg}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // a proxy would connect on our behalf, unchecked
			DialContext:            f.dial,
			TLSClientConfig:        cfg.TLS,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    5 * time.Second,
			ResponseHeaderTimeout:  cfg.Timeout,
			MaxResponseHeaderBytes: cfg.MaxHeaderBytes,
			MaxIdleConns:           64,
			MaxIdleConnsPerHost:    8,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: f.checkRedirect,
		Timeout:       cfg.Timeout,
	}
	return f
}

// MaxBytes is the body cap.
func (f *Client) MaxBytes() int64 { return f.cfg.MaxBytes }

// MaxRedirects is how many redirects are followed.
func (f *Client) MaxRedirects() int { return f.cfg.MaxRedirects }

// Timeout bounds a whole request.
func (f *Client) Timeout() time.Duration { return f.cfg.Timeout }

// Close releases idle connections.
func (f *Client) Close() { f.client.CloseIdleConnections() }

// Open GETs rawURL with header (nil: none) and returns its body, which
// fails with ErrTooLarge as soon as more than MaxBytes arrive; a status
// other than 2xx is a *StatusError. The caller closes the body.
func (f *Client) Open(ctx context.Context, rawURL string, header http.Header) (*Body, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %q: %w", rawURL, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := f.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: %w", rawURL, &StatusError{Code: resp.StatusCode})
	}
	return resp.Body.(*Body), nil
}

// Do sends req through the guard and returns the response whatever its
// status; its Body is a *Body capped at MaxBytes (a larger announced
// length fails at once with ErrTooLarge). The caller closes the body.
func (f *Client) Do(req *http.Request) (*http.Response, error) {
	if err := checkScheme(req); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", f.cfg.UserAgent)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL.Redacted(), err)
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: %d bytes announced: %w", req.URL.Redacted(), resp.ContentLength, ErrTooLarge)
	}
	resp.Body = &Body{body: resp.Body, left: f.cfg.MaxBytes}
	return resp, nil
}

func checkScheme(req *http.Request) error {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("fetch %s: %w", req.URL.Redacted(), ErrScheme)
	}
	return nil
}

// checkRedirect allows MaxRedirects http(s) redirects (with NoRedirects,
// none: the redirect is the response); each one's connection is checked by dial like the first.
func (f *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if f.cfg.NoRedirects {
		return http.ErrUseLastResponse
	}
	if len(via) > f.cfg.MaxRedirects {
		return fmt.Errorf("after %d redirects: %w", f.cfg.MaxRedirects, ErrTooManyRedirects)
	}
	return checkScheme(req)
}

// dial connects to addr; unless addr (as requested) is allowed, the
// resolved address is checked by control before each connect.
func (f *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: f.cfg.Timeout, KeepAlive: 30 * time.Second, Resolver: f.cfg.Resolver}
	if !f.cfg.Allow.Allows(addr) {
		d.ControlContext = f.control
	}
	conn, err := d.DialContext(ctx, network, addr)
	var refused *RefusedAddressError
	if errors.As(err, &refused) {
		refused.Host, _, _ = net.SplitHostPort(addr)
	}
	return conn, err
}

// control runs after the socket is made and before it connects, with the
// resolved address: a refused address fails the dial, unconnected.
func (f *Client) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	if f.cfg.Allow.Allows(address) {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || Refused(ap.Addr()) {
		return &RefusedAddressError{Addr: address}
	}
	return nil
}

// Body reads at most MaxBytes of a response body and fails with
// ErrTooLarge when there is more; it remembers the first read error.
type Body struct {
	body io.ReadCloser
	left int64
	read int64
	err  error
}

func (c *Body) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left <= 0 {
		return c.overCap()
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.body.Read(p)
	c.left -= int64(n)
	c.read += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// overCap reads one more byte: end of body means it was exactly the cap.
func (c *Body) overCap() (int, error) {
	var one [1]byte
	n, err := io.ReadFull(c.body, one[:])
	switch {
	case n > 0:
		c.err = fmt.Errorf("more than %d bytes: %w", c.read, ErrTooLarge)
	case errors.Is(err, io.EOF):
		return 0, io.EOF
	default:
		c.err = err
	}
	return 0, c.err
}

// Err is the first read error (nil for none or end of body).
func (c *Body) Err() error { return c.err }

// Close closes the body.
func (c *Body) Close() error { return c.body.Close() }
