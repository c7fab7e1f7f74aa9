package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Fetch limits (issue 11): an image is at most 5 MB, reached in at most 3
// redirects, within 10 s.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultMaxRedirects = 3
	DefaultTimeout      = 10 * time.Second
)

// userAgent names the fetcher to the servers it reaches.
const userAgent = "Aviary-ImageCheck/1.0"

// Fetch errors the checker turns into rules (besides *RefusedAddressError
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

// FetchConfig configures a Fetcher; zero fields take the defaults above.
type FetchConfig struct {
	// Allow lists host:port entries that may be reached even though they
	// are refused addresses (AVIARY_FETCH_ALLOWLIST).
	Allow        AllowList
	MaxBytes     int64
	MaxRedirects int
	// Timeout bounds a whole fetch: connections, redirects and body.
	Timeout time.Duration
	// Resolver resolves host names (nil: the default resolver).
	Resolver *net.Resolver
}

// Fetcher GETs images from the public internet only: every connection,
// the first and each redirect's, is checked on the resolved address just
// before it is made, so neither a name resolving to a private address nor a
// redirect to one reaches it.
type Fetcher struct {
	cfg    FetchConfig
	client *http.Client
}

// NewFetcher builds a Fetcher.
func NewFetcher(cfg FetchConfig) *Fetcher {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	f := &Fetcher{cfg: cfg}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would connect on our behalf, unchecked
			DialContext:           f.dial,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConns:          64,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       30 * time.Second,
		},
		CheckRedirect: f.checkRedirect,
		Timeout:       cfg.Timeout,
	}
	return f
}

// MaxBytes is the body cap.
func (f *Fetcher) MaxBytes() int64 { return f.cfg.MaxBytes }

// Close releases idle connections.
func (f *Fetcher) Close() { f.client.CloseIdleConnections() }

// Open GETs rawURL and returns its body, which fails with ErrTooLarge as
// soon as more than MaxBytes arrive; the caller closes it.
func (f *Fetcher) Open(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	body, err := f.open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return body, nil
}

func (f *Fetcher) open(ctx context.Context, rawURL string) (*cappedBody, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %q: %w", rawURL, err)
	}
	if err := checkScheme(req); err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "image/*")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: %w", rawURL, &StatusError{Code: resp.StatusCode})
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: %d bytes announced: %w", rawURL, resp.ContentLength, ErrTooLarge)
	}
	return &cappedBody{body: resp.Body, left: f.cfg.MaxBytes}, nil
}

func checkScheme(req *http.Request) error {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("fetch %s: %w", req.URL.Redacted(), ErrScheme)
	}
	return nil
}

// checkRedirect allows MaxRedirects http(s) redirects; each one's
// connection is checked by dial like the first.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return fmt.Errorf("after %d redirects: %w", f.cfg.MaxRedirects, ErrTooManyRedirects)
	}
	return checkScheme(req)
}

// dial connects to addr; unless addr (as requested) is allowed, the
// resolved address is checked by control before each connect.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
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
func (f *Fetcher) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	if f.cfg.Allow.Allows(address) {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || Refused(ap.Addr()) {
		return &RefusedAddressError{Addr: address}
	}
	return nil
}

// cappedBody reads at most left bytes of body and fails with ErrTooLarge
// when there is more; it remembers the first read error.
type cappedBody struct {
	body io.ReadCloser
	left int64
	read int64
	err  error
}

func (c *cappedBody) Read(p []byte) (int, error) {
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
func (c *cappedBody) overCap() (int, error) {
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
func (c *cappedBody) Err() error { return c.err }

// Close closes the body.
func (c *cappedBody) Close() error { return c.body.Close() }
