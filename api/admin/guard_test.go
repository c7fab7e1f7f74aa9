package admin

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

var quiet = slog.New(slog.DiscardHandler)

// ok is the guarded page.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })

func newGuard(t *testing.T, throttle Throttle) http.Handler {
	t.Helper()
	return newLoggingGuard(t, throttle, quiet)
}

func newLoggingGuard(t *testing.T, throttle Throttle, log *slog.Logger) http.Handler {
	t.Helper()
	g, err := New(Options{User: "admin", Password: "secret", PublicURL: "https://aviary.example/base", Throttle: throttle, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return g.Wrap(ok)
}

type request struct {
	method, host string
	tls          bool
	origin       string
	referer      string
	user, pass   string // pass "" sends no credential
	remote       string // RemoteAddr; "" is 192.0.2.1:1234
}

func (q request) serve(h http.Handler) *httptest.ResponseRecorder {
	r := httptest.NewRequest(q.method, "/admin/queues/api/queues", nil)
	if q.host != "" {
		r.Host = q.host
	}
	if q.tls {
		r.TLS = &tls.ConnectionState{}
	}
	if q.origin != "" {
		r.Header.Set("Origin", q.origin)
	}
	if q.referer != "" {
		r.Header.Set("Referer", q.referer)
	}
	if q.pass != "" {
		r.SetBasicAuth(q.user, q.pass)
	}
	r.RemoteAddr = "192.0.2.1:1234"
	if q.remote != "" {
		r.RemoteAddr = q.remote
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func TestSameOrigin(t *testing.T) {
	h := newGuard(t, NewMemoryThrottle(Limits{Failures: 1000}, nil))
	const host = "admin.example:8080"
	tests := []struct {
		name string
		req  request
		want int
	}{
		{"read without origin", request{method: "GET"}, 204},
		{"head without origin", request{method: "HEAD"}, 204},
		{"read from another site", request{method: "GET", origin: "https://evil.example"}, 204},
		{"write without origin or referer", request{method: "POST"}, 403},
		{"delete without origin or referer", request{method: "DELETE"}, 403},
		{"put without origin or referer", request{method: "PUT"}, 403},
		{"patch without origin or referer", request{method: "PATCH"}, 403},
		{"options without origin or referer", request{method: "OPTIONS"}, 403},
		{"write from the same host", request{method: "POST", origin: "http://admin.example:8080"}, 204},
		{"host compared case-insensitively", request{method: "DELETE", origin: "http://ADMIN.example:8080"}, 204},
		{"default port", request{method: "POST", host: "admin.example", origin: "http://admin.example:80"}, 204},
		{"another port", request{method: "POST", origin: "http://admin.example:9090"}, 403},
		{"write from another site", request{method: "POST", origin: "https://evil.example"}, 403},
		{"write from a subdomain", request{method: "POST", origin: "http://evil.admin.example:8080"}, 403},
		{"userinfo does not fool the parser", request{method: "POST", origin: "http://admin.example:8080@evil.example"}, 403},
		{"opaque origin", request{method: "POST", origin: "null"}, 403},
		{"not an http origin", request{method: "POST", origin: "file://admin.example:8080"}, 403},
		{"plain-http origin to a TLS request", request{method: "POST", tls: true, origin: "http://admin.example:8080"}, 403},
		{"https origin to a TLS request", request{method: "POST", tls: true, origin: "https://admin.example:8080"}, 204},
		{"the public URL's origin behind a proxy", request{method: "POST", host: "10.0.0.5:8080", origin: "https://aviary.example"}, 204},
		{"the public URL's host with another scheme", request{method: "POST", host: "10.0.0.5:8080", origin: "http://aviary.example"}, 403},
		{"referer from the same host", request{method: "POST", referer: "http://admin.example:8080/admin/queues/"}, 204},
		{"referer from another site", request{method: "POST", referer: "https://evil.example/admin.example:8080"}, 403},
		{"origin decides over referer", request{method: "POST", origin: "https://evil.example", referer: "http://admin.example:8080/"}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.user, tc.req.pass = "admin", "secret" // the right credential does not help
			if tc.req.host == "" {
				tc.req.host = host
			}
			rec := tc.req.serve(h)
			if rec.Code != tc.want {
				t.Fatalf("%s: %d %s, want %d", tc.req.method, rec.Code, rec.Body.String(), tc.want)
			}
			if tc.want == 403 && (rec.Header().Get("Content-Type") != "application/problem+json" || !strings.Contains(rec.Body.String(), "cross-site") && !strings.Contains(rec.Body.String(), "Origin or Referer")) {
				t.Errorf("refusal %q %s", rec.Header().Get("Content-Type"), rec.Body.String())
			}
		})
	}
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// TestLoginThrottle runs one login story against each Throttle: a handful
// of wrong passwords lock the client address out (429 with Retry-After,
// even for the right password) until the window ends; missing credentials
// and other addresses do not count.
func TestLoginThrottle(t *testing.T) {
	const window = 700 * time.Millisecond
	limits := Limits{Failures: 3, Window: window}
	rc, prefix := storagetest.RedisPrefix(t)
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	throttles := []struct {
		name string
		// two are the throttles of two API replicas sharing their counts
		two  func() (Throttle, Throttle)
		wait func() // lets the window pass
	}{
		{"memory", func() (Throttle, Throttle) { m := NewMemoryThrottle(limits, c.Now); return m, m }, func() { c.Advance(window) }},
		{"redis, two replicas", func() (Throttle, Throttle) {
			return NewRedisThrottle(rc, prefix+"a:", limits), NewRedisThrottle(rc, prefix+"a:", limits)
		}, func() { time.Sleep(window + 50*time.Millisecond) }},
	}
	const me, neighbour, stranger = "192.0.2.1:1000", "192.0.2.1:2000", "198.51.100.7:1000"
	const v6a, v6b, v6other = "[2001:db8:1:2::a]:1", "[2001:db8:1:2:ffff::b]:2", "[2001:db8:1:3::a]:1"
	steps := []struct {
		name    string
		replica int // 0 or 1
		remote  string
		pass    string // "" sends no credential
		want    int
		wait    bool // let the window pass first
	}{
		{"right password", 0, me, "secret", 204, false},
		{"no credential is not a failure", 0, me, "", 401, false},
		{"no credential again", 1, me, "", 401, false},
		{"no credential again and again", 0, me, "", 401, false},
		{"first wrong password", 0, me, "wrong", 401, false},
		{"second wrong password, other replica", 1, me, "wrong", 401, false},
		{"third wrong password locks", 0, me, "wrong", 429, false},
		{"locked: the right password", 0, me, "secret", 429, false},
		{"locked on the other replica too", 1, me, "secret", 429, false},
		{"locked: another port of the address", 1, neighbour, "secret", 429, false},
		{"another address is not locked", 0, stranger, "secret", 204, false},
		{"its own failure counts alone", 1, stranger, "wrong", 401, false},
		{"after the window the right password works", 0, me, "secret", 204, true},
		{"and the count starts over", 1, me, "wrong", 401, false},
		{"an IPv6 client fails", 0, v6a, "wrong", 401, false},
		{"its /64 shares the count", 1, v6b, "wrong", 401, false},
		{"and is locked together", 0, v6a, "bad", 429, false},
		{"another /64 is not", 1, v6other, "secret", 204, false},
	}
	for _, th := range throttles {
		t.Run(th.name, func(t *testing.T) {
			a, b := th.two()
			guards := []http.Handler{newGuard(t, a), newGuard(t, b)}
			for _, s := range steps {
				if s.wait {
					th.wait()
				}
				rec := request{method: "GET", host: "admin.example", user: "admin", pass: s.pass, remote: s.remote}.serve(guards[s.replica])
				if rec.Code != s.want {
					t.Fatalf("%s: %d %s, want %d", s.name, rec.Code, rec.Body.String(), s.want)
				}
				switch s.want {
				case 401:
					if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), `Basic realm="aviary admin"`) {
						t.Errorf("%s: challenge %q", s.name, rec.Header().Get("WWW-Authenticate"))
					}
				case 429:
					secs, err := strconv.Atoi(rec.Header().Get("Retry-After"))
					if err != nil || secs < 1 || time.Duration(secs)*time.Second > window+time.Second {
						t.Errorf("%s: Retry-After %q, want the rest of the window in whole seconds", s.name, rec.Header().Get("Retry-After"))
					}
				}
			}
		})
	}
}

// TestBurstOfWrongPasswords is the report: 300 wrong passwords in a
// burst were all answered and the right one then worked. The lockout is
// logged once.
func TestBurstOfWrongPasswords(t *testing.T) {
	rc, prefix := storagetest.RedisPrefix(t)
	var logs syncBuffer
	h := newLoggingGuard(t, NewRedisThrottle(rc, prefix, DefaultLimits), slog.New(slog.NewTextHandler(&logs, nil)))
	var wg sync.WaitGroup
	codes := make(chan int, 300)
	for range 300 {
		wg.Go(func() { codes <- request{method: "GET", user: "admin", pass: "guess"}.serve(h).Code })
	}
	wg.Wait()
	close(codes)
	counts := map[int]int{}
	for c := range codes {
		counts[c]++
	}
	if counts[401] != DefaultLimits.Failures-1 || counts[429] != 300-counts[401] {
		t.Errorf("answers %v, want %d × 401 and the rest 429", counts, DefaultLimits.Failures-1)
	}
	if code := (request{method: "GET", user: "admin", pass: "secret"}).serve(h).Code; code != 429 {
		t.Errorf("right password after the burst: %d, want 429", code)
	}
	if n := strings.Count(logs.String(), "admin login locked out"); n != 1 {
		t.Errorf("lockout logged %d times, want once:\n%s", n, logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestThrottleUnavailable(t *testing.T) {
	h := newGuard(t, NewRedisThrottle(storagetest.DeadRedis(t), "x:", DefaultLimits))
	for _, pass := range []string{"secret", "wrong"} {
		rec := request{method: "GET", user: "admin", pass: pass}.serve(h)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("password %q with Redis down: %d %v, want 503 (fail closed)", pass, rec.Code, rec.Header())
		}
	}
}

func TestClientKey(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:1234", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:80", "2001:db8:1:2::/64"},
		{"[::1]:80", "::/64"},
		{"pipe", "pipe"},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if got := ClientKey(r); got != tc.want {
			t.Errorf("ClientKey(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{
		{User: "admin"},
		{User: "admin", Password: "x", PublicURL: "aviary.example"},
		{User: "admin", Password: "x", PublicURL: "ftp://aviary.example"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestMemoryThrottleForgetsEndedWindows(t *testing.T) {
	c := &clock{now: time.Unix(0, 0)}
	m := NewMemoryThrottle(Limits{Failures: 2, Window: time.Minute}, c.Now)
	ctx := context.Background()
	for i := range 2000 {
		if _, _, err := m.Fail(ctx, strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(time.Minute)
	if _, _, err := m.Fail(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	if n := len(m.counts); n != 1 {
		t.Errorf("%d windows kept, want only the live one", n)
	}
}

// slowFail delays counting, so concurrent guesses are all in flight before
// any of them is counted (a slow Redis or network does the same).
type slowFail struct{ Throttle }

func (s slowFail) Fail(ctx context.Context, key string) (time.Duration, bool, error) {
	time.Sleep(100 * time.Millisecond)
	return s.Throttle.Fail(ctx, key)
}

// TestConcurrentGuessesAreCounted: guesses in flight together cannot slip
// past the lockout. Before, each was compared before it was counted, and a
// right password sent within a burst of wrong ones was let in (200).
func TestConcurrentGuessesAreCounted(t *testing.T) {
	rc, prefix := storagetest.RedisPrefix(t)
	h := newGuard(t, slowFail{NewRedisThrottle(rc, prefix, DefaultLimits)})
	var wg sync.WaitGroup
	codes := make(chan int, 50)
	for range 49 {
		wg.Go(func() { codes <- request{method: "GET", user: "admin", pass: "guess"}.serve(h).Code })
	}
	time.Sleep(30 * time.Millisecond) // the wrong guesses are counted first
	right := request{method: "GET", user: "admin", pass: "secret"}.serve(h).Code
	wg.Wait()
	close(codes)
	counts := map[int]int{}
	for c := range codes {
		counts[c]++
	}
	if right != http.StatusTooManyRequests {
		t.Errorf("right password within a burst of 49 wrong ones: %d, want 429", right)
	}
	if counts[401] > DefaultLimits.Failures {
		t.Errorf("answers %v: more than %d guesses were compared", counts, DefaultLimits.Failures)
	}
}
