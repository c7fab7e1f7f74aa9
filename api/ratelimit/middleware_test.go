package ratelimit

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
)

// t0 is 800s into a 15-minute window that ends at 1_700_000_100.
var t0 = time.Unix(1_700_000_000, 0)

const t0Reset15m = 1_700_000_100

// clock is an adjustable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var quietWriter = apierr.Writer{Logger: slog.New(slog.DiscardHandler)}

func appPrincipal(appID int64) auth.Principal {
	return auth.Principal{App: storage.App{ID: appID}, Method: auth.MethodBearer}
}

func userPrincipal(appID, userID int64) auth.Principal {
	return auth.Principal{App: storage.App{ID: appID}, User: &storage.User{ID: userID}, Method: auth.MethodOAuth1}
}

// counted wraps rule's middleware around a handler that counts its calls.
func counted(l *Limiter, rule Rule) (http.Handler, *atomic.Int64) {
	var calls atomic.Int64
	h := l.Middleware(rule)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	return h, &calls
}

func serve(h http.Handler, p auth.Principal) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/2/tweets", nil)
	r = r.WithContext(auth.WithPrincipal(r.Context(), p))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func assertHeaders(t *testing.T, rec *httptest.ResponseRecorder, limit, remaining int, reset int64) {
	t.Helper()
	want := map[string]string{
		HeaderLimit:     strconv.Itoa(limit),
		HeaderRemaining: strconv.Itoa(remaining),
		HeaderReset:     strconv.FormatInt(reset, 10),
	}
	for name, v := range want {
		if got := rec.Header().Get(name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
}

func assertTooMany(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status = %d, want 429", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var p map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if p["type"] != "about:blank" || p["title"] != "Too Many Requests" || p["status"] != float64(429) {
		t.Errorf("problem = %v", p)
	}
}

// assertRetryAfter checks a 429 tells the client how many seconds remain
// until the window resets.
func assertRetryAfter(t *testing.T, rec *httptest.ResponseRecorder, seconds int64) {
	t.Helper()
	if got, want := rec.Header().Get("Retry-After"), strconv.FormatInt(seconds, 10); got != want {
		t.Errorf("Retry-After = %q, want %q", got, want)
	}
}

func TestLimitExhaustion(t *testing.T) {
	tests := []struct {
		name      string
		rule      Rule
		principal auth.Principal
		reset     int64
	}{
		{"limit 1 per app", Rule{Name: "one", Limit: 1, Window: 15 * time.Minute}, appPrincipal(1), t0Reset15m},
		{"limit 3 per user", Rule{Name: "three", Limit: 3, Window: 15 * time.Minute, Scope: PerUser}, userPrincipal(1, 10), t0Reset15m},
		{"limit 5 per 24h", Rule{Name: "day", Limit: 5, Window: 24 * time.Hour}, userPrincipal(1, 10), 1_700_006_400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, prefix := testRedis(t)
			l := NewLimiter(client, prefix, (&clock{now: t0}).Now, quietWriter)
			h, calls := counted(l, tt.rule)
			for i := 1; i <= tt.rule.Limit; i++ {
				rec := serve(h, tt.principal)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: status %d, want 200", i, rec.Code)
				}
				assertHeaders(t, rec, tt.rule.Limit, tt.rule.Limit-i, tt.reset)
			}
			for range 2 {
				rec := serve(h, tt.principal)
				assertTooMany(t, rec)
				assertHeaders(t, rec, tt.rule.Limit, 0, tt.reset)
				assertRetryAfter(t, rec, tt.reset-t0.Unix())
			}
			if got := calls.Load(); got != int64(tt.rule.Limit) {
				t.Errorf("handler called %d times, want %d", got, tt.rule.Limit)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	perUser := Rule{Name: "pu", Limit: 2, Window: time.Hour, Scope: PerUser}
	perApp := Rule{Name: "pa", Limit: 2, Window: time.Hour, Scope: PerApp}
	tests := []struct {
		name    string
		rule    Rule
		exhaust auth.Principal
		other   auth.Principal
		wantOK  bool
	}{
		{"per-user: other user of same app", perUser, userPrincipal(1, 10), userPrincipal(1, 20), true},
		{"per-user: same user via another app", perUser, userPrincipal(1, 10), userPrincipal(2, 10), true},
		{"per-user: same user, same app", perUser, userPrincipal(1, 10), userPrincipal(1, 10), false},
		{"per-user: other app's user with the same number as the app", perUser, userPrincipal(1, 10), userPrincipal(10, 1), true},
		{"per-user: app-only falls back to app", perUser, userPrincipal(1, 10), appPrincipal(1), true},
		{"per-user: app-only requests share the app count", perUser, appPrincipal(1), appPrincipal(1), false},
		{"per-app: other user of same app", perApp, userPrincipal(1, 10), userPrincipal(1, 20), false},
		{"per-app: app-only of same app", perApp, userPrincipal(1, 10), appPrincipal(1), false},
		{"per-app: another app", perApp, userPrincipal(1, 10), userPrincipal(2, 10), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, prefix := testRedis(t)
			l := NewLimiter(client, prefix, (&clock{now: t0}).Now, quietWriter)
			h, _ := counted(l, tt.rule)
			for range tt.rule.Limit {
				serve(h, tt.exhaust)
			}
			assertTooMany(t, serve(h, tt.exhaust))
			rec := serve(h, tt.other)
			if (rec.Code == http.StatusOK) != tt.wantOK {
				t.Errorf("other principal: status %d, want allowed=%v", rec.Code, tt.wantOK)
			}
		})
	}
}

func TestRulesCountSeparately(t *testing.T) {
	client, prefix := testRedis(t)
	l := NewLimiter(client, prefix, (&clock{now: t0}).Now, quietWriter)
	a, _ := counted(l, Rule{Name: "a", Limit: 1, Window: time.Minute})
	b, _ := counted(l, Rule{Name: "b", Limit: 1, Window: time.Minute})
	p := appPrincipal(1)
	steps := []struct {
		h    http.Handler
		code int
	}{{a, 200}, {a, 429}, {b, 200}, {b, 429}}
	for i, s := range steps {
		if rec := serve(s.h, p); rec.Code != s.code {
			t.Errorf("step %d: status %d, want %d", i, rec.Code, s.code)
		}
	}
}

func TestWindowResetAndKeyLayout(t *testing.T) {
	client, prefix := testRedis(t)
	clk := &clock{now: t0}
	l := NewLimiter(client, prefix, clk.Now, quietWriter)
	rule := Rule{Name: "users.me", Limit: 2, Window: 15 * time.Minute, Scope: PerUser}
	h, _ := counted(l, rule)
	p := userPrincipal(1, 10)
	serve(h, p)
	serve(h, p)
	assertTooMany(t, serve(h, p))

	key := fmt.Sprintf("%srl:users.me:app:1:user:10:%d", prefix, t0Reset15m-900)
	ctx := context.Background()
	if n, err := client.Get(ctx, key).Int(); err != nil || n != 2 {
		t.Errorf("GET %s = %d (%v), want 2", key, n, err)
	}
	ttl, err := client.PTTL(ctx, key).Result()
	if maxTTL := 100*time.Second + keyGrace; err != nil || ttl <= 0 || ttl > maxTTL {
		t.Errorf("PTTL %s = %v (%v), want within (0, %v]", key, ttl, err, maxTTL)
	}

	clk.Advance(99*time.Second + 700*time.Millisecond) // 0.3 s before the reset
	early := serve(h, p)
	assertTooMany(t, early)
	assertRetryAfter(t, early, 1) // rounded up: never 0 while still limited

	clk.Advance(300 * time.Millisecond) // exactly the reset instant
	rec := serve(h, p)
	if rec.Code != http.StatusOK {
		t.Fatalf("after reset: status %d, want 200", rec.Code)
	}
	assertHeaders(t, rec, 2, 1, t0Reset15m+900)
}

// TestReplicasShareCounts runs two limiters with their own Redis
// connections, as two API replicas would.
func TestReplicasShareCounts(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		requests int
		parallel bool
	}{
		{"alternating", 4, 6, false},
		{"concurrent", 15, 60, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c1, prefix := testRedis(t)
			c2, _ := testRedis(t)
			rule := Rule{Name: "shared", Limit: tt.limit, Window: time.Hour}
			h1, calls1 := counted(NewLimiter(c1, prefix, (&clock{now: t0}).Now, quietWriter), rule)
			h2, calls2 := counted(NewLimiter(c2, prefix, (&clock{now: t0}).Now, quietWriter), rule)
			replicas := []http.Handler{h1, h2}
			var wg sync.WaitGroup
			for i := range tt.requests {
				run := func() { serve(replicas[i%2], appPrincipal(1)) }
				if !tt.parallel {
					run()
					continue
				}
				wg.Go(run)
			}
			wg.Wait()
			if got := calls1.Load() + calls2.Load(); got != int64(tt.limit) {
				t.Errorf("admitted %d requests across replicas, want %d", got, tt.limit)
			}
			if calls1.Load() == 0 || calls2.Load() == 0 {
				t.Errorf("replica calls = %d, %d; want both to serve some", calls1.Load(), calls2.Load())
			}
		})
	}
}

// recordingHandler counts warnings logged.
type recordingHandler struct{ warnings atomic.Int64 }

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		h.warnings.Add(1)
	}
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func TestFailOpen(t *testing.T) {
	logs := &recordingHandler{}
	clk := &clock{now: t0}
	l := NewLimiter(deadRedis(t), "x:", clk.Now, apierr.Writer{Logger: slog.New(logs)})
	h, calls := counted(l, Rule{Name: "r", Limit: 1, Window: time.Minute})
	steps := []struct {
		advance  time.Duration
		warnings int64
	}{
		{0, 1}, {0, 1}, {30 * time.Second, 1}, {31 * time.Second, 2}, {time.Second, 2},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		rec := serve(h, appPrincipal(1))
		if rec.Code != http.StatusOK {
			t.Fatalf("step %d: status %d, want 200 (fail open)", i, rec.Code)
		}
		for _, name := range []string{HeaderLimit, HeaderRemaining, HeaderReset} {
			if v := rec.Header().Get(name); v != "" {
				t.Errorf("step %d: %s = %q, want omitted", i, name, v)
			}
		}
		if got := logs.warnings.Load(); got != s.warnings {
			t.Errorf("step %d: %d warnings logged, want %d", i, got, s.warnings)
		}
	}
	if calls.Load() != int64(len(steps)) {
		t.Errorf("handler called %d times, want %d", calls.Load(), len(steps))
	}
}

func TestNoPrincipalIsServerError(t *testing.T) {
	client, prefix := testRedis(t)
	h, calls := counted(NewLimiter(client, prefix, nil, quietWriter), Rule{Name: "r", Limit: 1, Window: time.Minute})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusInternalServerError || calls.Load() != 0 {
		t.Errorf("status %d, handler calls %d; want 500 and none", rec.Code, calls.Load())
	}
}

func TestMiddlewarePanicsOnInvalidRule(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Middleware accepted an invalid rule")
		}
	}()
	NewLimiter(nil, "", nil, quietWriter).Middleware(Rule{Name: "bad", Limit: 0, Window: time.Minute})
}

// TestStackedRulesHeaders: a 24-hour rule mounted inside a 15-minute one
// reports its count in its own headers (x-user-limit-24hour-*, as the
// platform names a user's 24-hour limit) beside x-rate-limit-*; when it
// is exhausted its 429 carries both, Retry-After until its own reset, and
// the outer rule's headers still say what the outer window has left.
func TestStackedRulesHeaders(t *testing.T) {
	client, prefix := testRedis(t)
	l := NewLimiter(client, prefix, (&clock{now: t0}).Now, quietWriter)
	outer := Rule{Name: "create", Limit: 10, Window: 15 * time.Minute, Scope: PerUser}
	day := Rule{Name: "create_24h", Limit: 2, Window: 24 * time.Hour, Scope: PerUser, Headers: HeadersUser24Hour}
	h, calls := counted(l, day)
	h = l.Middleware(outer)(h)
	const dayReset = 1_700_006_400 // the next UTC midnight after t0
	for i := 1; i <= 3; i++ {
		rec := serve(h, userPrincipal(1, 10))
		assertHeaders(t, rec, 10, 10-i, t0Reset15m)
		dayHeaders := map[string]string{"X-User-Limit-24hour-Limit": "2", "X-User-Limit-24hour-Remaining": strconv.Itoa(max(0, 2-i)),
			"X-User-Limit-24hour-Reset": strconv.Itoa(dayReset)}
		for name, v := range dayHeaders {
			if got := rec.Header().Get(name); got != v {
				t.Errorf("request %d: %s = %q, want %q", i, name, got, v)
			}
		}
		if i <= 2 && rec.Code != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200", i, rec.Code)
		}
		if i == 3 {
			assertTooMany(t, rec)
			assertRetryAfter(t, rec, dayReset-t0.Unix())
		}
	}
	if calls.Load() != 2 {
		t.Errorf("handler called %d times, want 2", calls.Load())
	}
}

// TestStackedRulesAskRedisOnce: with Redis away, the outer rule fails open
// after its bound and the inner rules of the request do not wait for
// Redis again (a request with a 15-minute and two 24-hour limits would
// otherwise wait three bounds).
func TestStackedRulesAskRedisOnce(t *testing.T) {
	logs := &recordingHandler{}
	l := NewLimiter(deadRedis(t), "x:", (&clock{now: t0}).Now, apierr.Writer{Logger: slog.New(logs)})
	innermost, calls := counted(l, Rule{Name: "innermost", Limit: 1, Window: 24 * time.Hour, Headers: HeadersUser24Hour})
	inner := l.Middleware(Rule{Name: "inner", Limit: 1, Window: 24 * time.Hour, Headers: HeadersApp24Hour})(innermost)
	h := l.Middleware(Rule{Name: "outer", Limit: 1, Window: time.Minute})(inner)
	start := time.Now()
	rec := serve(h, appPrincipal(1))
	if rec.Code != http.StatusOK || calls.Load() != 1 {
		t.Fatalf("status %d, handler calls %d; want 200 and 1 (fail open)", rec.Code, calls.Load())
	}
	if elapsed := time.Since(start); elapsed > 2*callTimeout {
		t.Errorf("took %v, want at most one Redis bound (%v) and some slack", elapsed, callTimeout)
	}
	if n := logs.warnings.Load(); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
}
