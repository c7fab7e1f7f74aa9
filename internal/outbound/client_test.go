package outbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
)

// TestFetchRefusesNonPublicAddresses: without the allow-list, image links
// to loopback, private, link-local, metadata and unspecified addresses, a
// name resolving to loopback, and a redirect from an allowed server to
// loopback all fail with refused_address, and the local target listener
// sees no connection.
func TestFetchRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	target := outboundtest.MustListen(t, "tcp", "127.0.0.1:0")
	port := target.Port()
	redirector, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	redirect := func(to string) string { return redirector.URL + "/?to=" + to }
	tests := []struct {
		name string
		url  string
	}{
		{"loopback", "http://127.0.0.1:" + port + "/a.png"},
		{"loopback other address", "http://127.0.0.2:" + port + "/a.png"},
		{"unspecified", "http://0.0.0.0:" + port + "/a.png"},
		{"ipv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + port + "/a.png"},
		{"name resolving to loopback", "http://localhost:" + port + "/a.png"},
		{"private 10/8", "http://10.0.0.1/a.png"},
		{"private 192.168/16", "http://192.168.1.1/a.png"},
		{"private 172.16/12", "http://172.16.0.1/a.png"},
		{"carrier-grade NAT", "http://100.64.0.1/a.png"},
		{"metadata", "http://169.254.169.254/latest/meta-data/"},
		{"unique local v6", "http://[fd00::1]/a.png"},
		{"link-local v6", "http://[fe80::1]/a.png"},
		{"redirect to loopback", redirect("http://127.0.0.1:" + port + "/a.png")},
		{"redirect to a name resolving to loopback", redirect("http://localhost:" + port + "/a.png")},
		{"redirect to metadata", redirect("http://169.254.169.254/latest/meta-data/")},
	}
	f := New(Config{Allow: allow, Timeout: 5 * time.Second})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := f.Open(t.Context(), tt.url, nil)
			if err == nil {
				body.Close()
				t.Fatalf("fetch %s succeeded", tt.url)
			}
			var refused *RefusedAddressError
			if !errors.As(err, &refused) {
				t.Fatalf("fetch %s: %v, want a refused address", tt.url, err)
			}
		})
	}
	if n := target.Accepted(); n != 0 {
		t.Fatalf("the loopback target accepted %d connections, want none", n)
	}
}

// TestFetchRefusesIPv6Loopback: [::1] is refused before connecting.
func TestFetchRefusesIPv6Loopback(t *testing.T) {
	t.Parallel()
	target := outboundtest.MustListen(t, "tcp6", "[::1]:0")
	f := New(Config{})
	_, err := f.Open(t.Context(), "http://[::1]:"+target.Port()+"/a.png", nil)
	var refused *RefusedAddressError
	if !errors.As(err, &refused) {
		t.Fatalf("fetch [::1]: %v, want a refused address", err)
	}
	if n := target.Accepted(); n != 0 {
		t.Fatalf("the [::1] target accepted %d connections, want none", n)
	}
}

// TestFetchAllowList: an allow-listed local server is reachable, by its
// address or, when listed so, by name; another port of the same host is not.
func TestFetchAllowList(t *testing.T) {
	t.Parallel()
	png := bytes.Repeat([]byte("image"), 1000)
	srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(png) }))
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	byName, err := ParseAllowList("localhost:" + p)
	if err != nil {
		t.Fatal(err)
	}
	other := outboundtest.MustListen(t, "tcp", "127.0.0.1:0")
	tests := []struct {
		name  string
		allow AllowList
		url   string
		ok    bool
	}{
		{"listed address", allow, srv.URL + "/a.png", true},
		{"listed name", byName, "http://localhost:" + p + "/a.png", true},
		{"unlisted port", allow, "http://127.0.0.1:" + other.Port() + "/a.png", false},
		{"no allow-list", nil, srv.URL + "/a.png", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(Config{Allow: tt.allow})
			body, err := f.Open(t.Context(), tt.url, nil)
			if !tt.ok {
				var refused *RefusedAddressError
				if !errors.As(err, &refused) {
					t.Fatalf("fetch %s: %v, want a refused address", tt.url, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("fetch %s: %v", tt.url, err)
			}
			defer body.Close()
			got, err := io.ReadAll(body)
			if err != nil || len(got) != len(png) {
				t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(png))
			}
		})
	}
	if n := other.Accepted(); n != 0 {
		t.Fatalf("the unlisted port accepted %d connections", n)
	}
}

// TestFetchStreamingCap: a body without a length that never ends is read
// up to the cap plus one byte, then fails with ErrTooLarge.
func TestFetchStreamingCap(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	srv, allow := allowServer(t, http.HandlerFunc(endless))
	f := New(Config{Allow: allow, MaxBytes: limit})
	body, err := f.Open(t.Context(), srv.URL+"/endless", nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer body.Close()
	n, err := io.Copy(io.Discard, body)
	if !errors.Is(err, ErrTooLarge) || n != limit {
		t.Fatalf("read %d bytes, %v; want %d and ErrTooLarge", n, err, limit)
	}
}

// TestFetchExactlyAtCap: a body of exactly the cap is fine.
func TestFetchExactlyAtCap(t *testing.T) {
	t.Parallel()
	const limit = 1000
	srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: streamed
		w.Write(make([]byte, limit))
	}))
	f := New(Config{Allow: allow, MaxBytes: limit})
	body, err := f.Open(t.Context(), srv.URL, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer body.Close()
	if n, err := io.Copy(io.Discard, body); err != nil || n != limit {
		t.Fatalf("read %d bytes, %v; want %d", n, err, limit)
	}
}

// TestFetchRedirects: up to MaxRedirects http(s) redirects are followed.
func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var left int
		fmt.Sscanf(r.URL.Query().Get("left"), "%d", &left)
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		if left > 0 {
			http.Redirect(w, r, fmt.Sprintf("/?left=%d", left-1), http.StatusMovedPermanently)
			return
		}
		w.Write([]byte("done"))
	}))
	f := New(Config{Allow: allow})
	tests := []struct {
		name string
		url  string
		want error
	}{
		{"three redirects", srv.URL + "/?left=3", nil},
		{"four redirects", srv.URL + "/?left=4", ErrTooManyRedirects},
		{"redirect to file", srv.URL + "/?to=file:///etc/passwd", ErrScheme},
		{"ftp", "ftp://example.com/a.png", ErrScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := f.Open(context.Background(), tt.url, nil)
			if err == nil {
				body.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("fetch %s: %v, want %v", tt.url, err, tt.want)
			}
		})
	}
}

// endless streams zeros until the client goes away.
func endless(w http.ResponseWriter, r *http.Request) {
	chunk := make([]byte, 32<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// TestNoRedirects: with NoRedirects a redirect is the answer (a
// StatusError from Open) and its target is never requested.
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/target" {
			reached.Add(1)
			return
		}
		http.Redirect(w, r, "/target", http.StatusFound)
	}))
	f := New(Config{Allow: allow, NoRedirects: true})
	_, err := f.Open(t.Context(), srv.URL+"/", nil)
	var status *StatusError
	if !errors.As(err, &status) || status.Code != http.StatusFound {
		t.Fatalf("open: %v, want HTTP 302", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect target was requested %d times", n)
	}
}

// TestDo: Do answers any status with a capped body; an announced length
// over the cap fails at once.
func TestDo(t *testing.T) {
	t.Parallel()
	srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", "2000")
			w.Write(make([]byte, 2000))
			return
		}
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(r.Header.Get("User-Agent")))
	}))
	f := New(Config{Allow: allow, MaxBytes: 1000})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/", nil)
	resp, err := f.Do(req)
	if err != nil {
		t.Fatalf("do: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(body) != DefaultUserAgent {
		t.Fatalf("got %d %q, want 418 %q", resp.StatusCode, body, DefaultUserAgent)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/big", nil)
	if _, err := f.Do(req); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("do /big: %v, want ErrTooLarge", err)
	}
}
