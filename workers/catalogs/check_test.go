package catalogs

import (
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// imageServer serves the checker test cases by path; stall blocks until
// the test ends or the client goes away.
func imageServer(t testing.TB) (string, outbound.AllowList) {
	t.Helper()
	files := map[string][]byte{
		"/ok.png":        encodeImage(t, "png", 600, 500),
		"/ok.jpg":        encodeImage(t, "jpeg", 500, 800),
		"/ok.gif":        encodeImage(t, "gif", 512, 512),
		"/ok.webp":       encodeImage(t, "webp", 1000, 700),
		"/narrow.png":    encodeImage(t, "png", 499, 900),
		"/short.jpg":     encodeImage(t, "jpeg", 900, 120),
		"/small.webp":    encodeImage(t, "webp", 64, 64),
		"/picture.bmp":   encodeImage(t, "bmp", 600, 600),
		"/notes.txt":     []byte("these are not the pixels you are looking for"),
		"/truncated.png": encodeImage(t, "png", 600, 600)[:20],
	}
	mux := http.NewServeMux()
	for path, b := range files {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) { w.Write(b) })
	}
	mux.HandleFunc("GET /endless", endless)
	mux.HandleFunc("GET /announced-large", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(outbound.DefaultMaxBytes+1))
		w.Write([]byte("x"))
	})
	mux.HandleFunc("GET /stall-headers", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("GET /stall-body", func(w http.ResponseWriter, r *http.Request) {
		w.Write(files["/ok.png"][:100])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("GET /missing", http.NotFound)
	srv, allow := allowServer(t, mux)
	return srv.URL, allow
}

// TestCheck: formats, sizes, the byte cap while streaming, non-images,
// timeouts and unreachable images, each to its rule.
func TestCheck(t *testing.T) {
	t.Parallel()
	base, allow := imageServer(t)
	c := &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow, Timeout: 500 * time.Millisecond})}
	closed := outboundtest.MustListen(t, "tcp", "127.0.0.1:0")
	closed.Close()
	allowClosed, _ := outbound.ParseAllowList("127.0.0.1:" + closed.Port())
	for k := range allowClosed {
		allow[k] = true
	}
	tests := []struct {
		path string
		rule string // "" passes
	}{
		{"/ok.png", ""},
		{"/ok.jpg", ""},
		{"/ok.gif", ""},
		{"/ok.webp", ""},
		{"/narrow.png", RuleTooSmall},
		{"/short.jpg", RuleTooSmall},
		{"/small.webp", RuleTooSmall},
		{"/picture.bmp", RuleFormat},
		{"/notes.txt", RuleNotAnImage},
		{"/truncated.png", RuleNotAnImage},
		{"/endless", RuleTooLarge},
		{"/announced-large", RuleTooLarge},
		{"/stall-headers", RuleTimeout},
		{"/stall-body", RuleTimeout},
		{"/missing", RuleUnreachable},
		{"http://127.0.0.1:" + closed.Port() + "/ok.png", RuleUnreachable},
		{"http://169.254.169.254/latest/meta-data/", RuleRefusedAddress},
		{"ftp://example.com/a.png", RuleInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			url := tt.path
			if url[0] == '/' {
				url = base + url
			}
			begin := time.Now()
			f := c.Check(t.Context(), url)
			got := ""
			if f != nil {
				got = f.Rule
				if f.Message == "" {
					t.Errorf("failure %q without a message", f.Rule)
				}
			}
			if got != tt.rule {
				t.Fatalf("Check(%s) = %v, want rule %q", tt.path, f, tt.rule)
			}
			if d := time.Since(begin); d > 3*time.Second {
				t.Fatalf("Check(%s) took %s", tt.path, d)
			}
		})
	}
}

// BenchmarkImageChecks measures image checks per second against a local
// image server (600x600 PNG and JPG), 4 at a time as one product's images.
func BenchmarkImageChecks(b *testing.B) {
	base, allow := imageServer(b)
	c := &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow})}
	defer c.Fetcher.Close()
	urls := []string{base + "/ok.png", base + "/ok.jpg", base + "/ok.webp", base + "/ok.gif"}
	b.SetParallelism(4)
	b.ResetTimer()
	begin := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if f := c.Check(b.Context(), urls[i%len(urls)]); f != nil {
				b.Errorf("check %s: %v", urls[i%len(urls)], f)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "checks/s")
}

// TestCheckRefusedNameRevealsNothing: a URL whose host name resolves to a
// refused address fails as an unreachable server does, so the answer
// tells neither the address nor that the name resolves at all; an IP
// literal is refused as such (its address is the caller's own text).
func TestCheckRefusedNameRevealsNothing(t *testing.T) {
	t.Parallel()
	inner := outboundtest.MustListen(t, "tcp", "127.0.0.1:0")
	closed := outboundtest.MustListen(t, "tcp", "127.0.0.1:0")
	closed.Close()
	allow, _ := outbound.ParseAllowList("127.0.0.1:" + closed.Port())
	c := &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow, Timeout: 2 * time.Second})}
	gone := c.Check(t.Context(), "http://127.0.0.1:"+closed.Port()+"/ok.png")
	named := c.Check(t.Context(), "http://localhost:"+inner.Port()+"/ok.png")
	if named == nil || gone == nil || *named != *gone {
		t.Fatalf("refused name: %v; unreachable server: %v; want the same failure", named, gone)
	}
	for _, leak := range []string{"127.0.0.1", "::1", inner.Port(), "resolve"} {
		if strings.Contains(named.Message, leak) {
			t.Errorf("refused name's message %q reveals %q", named.Message, leak)
		}
	}
	literal := c.Check(t.Context(), "http://127.0.0.1:"+inner.Port()+"/ok.png")
	if literal == nil || literal.Rule != RuleRefusedAddress || strings.Contains(literal.Message, inner.Port()) {
		t.Errorf("IP literal: %v, want rule %s without the port", literal, RuleRefusedAddress)
	}
	if n := inner.Accepted(); n != 0 {
		t.Errorf("the refused address got %d connections", n)
	}
}
