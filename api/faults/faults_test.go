package faults_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/faults"
	"github.com/aviary-dev/aviary/storage/faultsredis"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

const adminAuth = "Basic YWRtaW46cHc=" // admin:pw

// fakeAdmin stands in for api/admin's guard: basic auth admin:pw.
func fakeAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// setup is the API with faults on a Redis database of its own.
func setup(t *testing.T) (*apitest.Bundle, *faults.Module) {
	t.Helper()
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	var mod *faults.Module
	b := apitest.Setup(t, 100, func(d *api.Deps) {
		mod = faults.New(faults.Deps{Store: faultsredis.New(rc, "t:faults:"), Auth: d.Auth, Admin: fakeAdmin, Errors: d.Errors, Logger: d.Logger})
		d.Faults = mod
	})
	return b, mod
}

func get(t *testing.T, b *apitest.Bundle, path, authz string) apitest.Reply {
	t.Helper()
	return b.Call(t, "GET", path, authz, "", nil)
}

func create(t *testing.T, b *apitest.Bundle, authz string, body map[string]any) map[string]any {
	t.Helper()
	r := b.Call(t, "POST", "/_aviary/faults", authz, "application/json", apitest.JSONBody(body))
	if r.Status != http.StatusCreated {
		t.Fatalf("create fault %v: %d %s", body, r.Status, r.Raw)
	}
	return r.Body["data"].(map[string]any)
}

func TestFaultEffects(t *testing.T) {
	b, _ := setup(t)
	me := "/2/users/" + strconv.FormatInt(b.User.ID, 10)
	tests := []struct {
		name   string
		effect map[string]any
		status int
		check  func(t *testing.T, r apitest.Reply)
	}{
		{name: "429 with rate-limit headers", effect: map[string]any{"type": "status", "status": 429}, status: 429,
			check: func(t *testing.T, r apitest.Reply) {
				reset, _ := strconv.ParseInt(r.Header.Get("x-rate-limit-reset"), 10, 64)
				if r.Header.Get("x-rate-limit-remaining") != "0" || r.Header.Get("x-rate-limit-limit") == "" || reset <= time.Now().Unix() {
					t.Errorf("headers %v", r.Header)
				}
				if r.Body["title"] != "Too Many Requests" || r.Body["type"] != "about:blank" || r.Body["status"] != float64(429) {
					t.Errorf("body %s", r.Raw)
				}
			}},
		{name: "503", effect: map[string]any{"type": "status", "status": 503}, status: 503,
			check: func(t *testing.T, r apitest.Reply) {
				if r.Body["title"] != "Service Unavailable" {
					t.Errorf("body %s", r.Raw)
				}
			}},
		{name: "500", effect: map[string]any{"type": "status", "status": 500}, status: 500,
			check: func(t *testing.T, r apitest.Reply) {
				if r.Body["title"] != "Internal Error" || r.Body["type"] != "https://api.x.com/2/problems/internal-error" ||
					r.Body["detail"] == nil || r.Body["status"] != float64(500) {
					t.Errorf("body %s", r.Raw)
				}
			}},
		{name: "418 any status", effect: map[string]any{"type": "status", "status": 418}, status: 418,
			check: func(t *testing.T, r apitest.Reply) {
				if r.Body["title"] != "I'm a teapot" {
					t.Errorf("body %s", r.Raw)
				}
			}},
		{name: "usage-capped", effect: map[string]any{"type": "usage_capped"}, status: 429,
			check: func(t *testing.T, r apitest.Reply) {
				if r.Body["title"] != "UsageCapExceeded" || r.Body["type"] != "https://api.x.com/2/problems/usage-capped" ||
					r.Body["period"] != "Monthly" || r.Body["scope"] != "Product" {
					t.Errorf("body %s", r.Raw)
				}
			}},
		{name: "CreditsDepleted", effect: map[string]any{"type": "credits_depleted"}, status: 402,
			check: func(t *testing.T, r apitest.Reply) {
				if r.Body["title"] != "CreditsDepleted" || !strings.Contains(r.Body["detail"].(string), "credits") {
					t.Errorf("body %s", r.Raw)
				}
			}},
		{name: "latency then served", effect: map[string]any{"type": "latency", "latency_ms": 20}, status: 200,
			check: func(t *testing.T, r apitest.Reply) {
				if r.Body["data"] == nil {
					t.Errorf("body %s", r.Raw)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := create(t, b, b.Bearer, map[string]any{"match": map[string]any{"method": "GET", "route": "/2/users/{id}"},
				"effect": tt.effect, "count": 1})
			r := get(t, b, me, b.Bearer)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			tt.check(t, r)
			if again := get(t, b, me, b.Bearer); again.Status != http.StatusOK {
				t.Errorf("the fault of count 1 applied twice: %d %s", again.Status, again.Raw)
			}
			got := get(t, b, "/_aviary/faults/"+f["id"].(string), b.Bearer)
			if got.Body["data"].(map[string]any)["hits"] != float64(1) {
				t.Errorf("hits: %s", got.Raw)
			}
		})
	}
}

func TestFaultScopeAndLifecycle(t *testing.T) {
	b, mod := setup(t)
	me := "/2/users/" + strconv.FormatInt(b.User.ID, 10)
	mine := create(t, b, b.Bearer, map[string]any{"match": map[string]any{"path_prefix": "/2/users/"}, "effect": map[string]any{"type": "status", "status": 503}})
	if r := get(t, b, me, b.OtherBearer); r.Status != http.StatusOK {
		t.Errorf("another app's request was faulted: %d %s", r.Status, r.Raw)
	}
	for range 2 {
		if r := get(t, b, me, b.Bearer); r.Status != http.StatusServiceUnavailable {
			t.Errorf("the app's request was not faulted: %d %s", r.Status, r.Raw)
		}
	}
	if r := get(t, b, "/_aviary/faults", b.OtherBearer); r.Body["meta"].(map[string]any)["result_count"] != float64(0) {
		t.Errorf("another app sees the fault: %s", r.Raw)
	}
	if r := b.Call(t, "DELETE", "/_aviary/faults/"+mine["id"].(string), b.OtherBearer, "", nil); r.Status != http.StatusNotFound {
		t.Errorf("another app deleted the fault: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "POST", "/_aviary/faults", b.Bearer, "application/json",
		apitest.JSONBody(map[string]any{"app_id": strconv.FormatInt(b.Other.ID, 10), "effect": map[string]any{"type": "status", "status": 500}})); r.Status != http.StatusForbidden {
		t.Errorf("an app set a fault for another: %d %s", r.Status, r.Raw)
	}
	list := get(t, b, "/_aviary/faults", b.Bearer)
	data := list.Body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["hits"] != float64(2) {
		t.Errorf("list: %s", list.Raw)
	}

	// Admin: every app's requests, seen and cleared.
	create(t, b, adminAuth, map[string]any{"effect": map[string]any{"type": "status", "status": 500}, "count": 1,
		"match": map[string]any{"route": "/2/users/{id}"}})
	if r := get(t, b, me, b.OtherBearer); r.Status != http.StatusInternalServerError {
		t.Errorf("an admin fault missed another app: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/_aviary/faults", adminAuth); r.Body["meta"].(map[string]any)["result_count"] != float64(2) {
		t.Errorf("admin list: %s", r.Raw)
	}
	if r := get(t, b, "/_aviary/faults", "Basic d3Jvbmc6d3Jvbmc="); r.Status != http.StatusUnauthorized {
		t.Errorf("wrong admin password: %d", r.Status)
	}
	if r := b.Call(t, "DELETE", "/_aviary/faults", adminAuth, "", nil); r.Status != http.StatusOK || r.Body["data"].(map[string]any)["deleted"] != float64(2) {
		t.Errorf("clear: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, me, b.Bearer); r.Status != http.StatusOK {
		t.Errorf("faulted after clear: %d %s", r.Status, r.Raw)
	}

	// Clear (a state reset) empties the store, the Go way.
	create(t, b, b.Bearer, map[string]any{"effect": map[string]any{"type": "status", "status": 503}})
	if n, err := mod.Clear(context.Background()); err != nil || n != 1 {
		t.Fatalf("Clear = %d, %v", n, err)
	}
	if r := get(t, b, me, b.Bearer); r.Status != http.StatusOK {
		t.Errorf("faulted after Clear: %d %s", r.Status, r.Raw)
	}
}

func TestFaultValidation(t *testing.T) {
	b, _ := setup(t)
	for _, body := range []map[string]any{
		{"effect": map[string]any{"type": "explode"}},
		{"effect": map[string]any{"type": "status", "status": 200}},
		{"effect": map[string]any{"type": "status", "status": 503}, "probability": 2},
		{"effect": map[string]any{"type": "status", "status": 503}, "surprise": true},
		{"effect": map[string]any{"type": "media_failure"}, "match": map[string]any{"method": "POST"}},
	} {
		r := b.Call(t, "POST", "/_aviary/faults", b.Bearer, "application/json", apitest.JSONBody(body))
		if r.Status != http.StatusBadRequest || r.Body["type"] != "https://api.x.com/2/problems/invalid-request" {
			t.Errorf("%v: %d %s", body, r.Status, r.Raw)
		}
	}
	if r := get(t, b, "/_aviary/faults", ""); r.Status != http.StatusUnauthorized {
		t.Errorf("no credentials: %d", r.Status)
	}
}

func TestFaultExpiresAndProbability(t *testing.T) {
	b, _ := setup(t)
	me := "/2/users/" + strconv.FormatInt(b.User.ID, 10)
	// A fault whose time is up applies to nothing.
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	create(t, b, b.Bearer, map[string]any{"effect": map[string]any{"type": "status", "status": 503}, "expires_at": past})
	// A fault of a tiny probability is drawn against; with a draw of 1e-9
	// it would apply about once in a billion requests.
	create(t, b, b.Bearer, map[string]any{"effect": map[string]any{"type": "status", "status": 500}, "probability": 1e-9})
	for range 5 {
		if r := get(t, b, me, b.Bearer); r.Status != http.StatusOK {
			t.Fatalf("faulted: %d %s", r.Status, r.Raw)
		}
	}
}

func TestFaultStreams(t *testing.T) {
	b, _ := setup(t)
	create(t, b, b.Bearer, map[string]any{"match": map[string]any{"route": "/2/tweets/search/stream"},
		"effect": map[string]any{"type": "too_many_connections"}, "count": 1})
	r := get(t, b, "/2/tweets/search/stream", b.Bearer)
	if r.Status != http.StatusTooManyRequests || r.Body["connection_issue"] != "TooManyConnections" ||
		r.Body["type"] != "https://api.x.com/2/problems/streaming-connection" {
		t.Fatalf("too many connections: %d %s", r.Status, r.Raw)
	}

	for _, route := range []string{"/2/tweets/search/stream", "/2/activity/stream"} {
		create(t, b, b.Bearer, map[string]any{"match": map[string]any{"route": route},
			"effect": map[string]any{"type": "operational_disconnect", "after_ms": 50}, "count": 1})
		if last := lastStreamLine(t, b, route); !strings.Contains(last, `"operational-disconnect"`) ||
			!strings.Contains(last, "UpstreamOperationalDisconnect") {
			t.Errorf("%s: last line %q", route, last)
		}
	}
}

// lastStreamLine reads the stream at route until the server ends it and
// returns its last line.
func lastStreamLine(t *testing.T, b *apitest.Bundle, route string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", b.Srv.URL+route, nil)
	req.Header.Set("Authorization", b.Bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", route, resp.StatusCode)
	}
	var last string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() { // ends when the server closes the stream
		if line := strings.TrimSpace(sc.Text()); line != "" {
			last = line
		}
	}
	return last
}

// TestFaultsCarryRateLimitHeaders: an injected failure other than the 429
// carries the endpoint's x-rate-limit-* as they stand, as the platform's
// answers of a rate-limited endpoint do, and costs no quota; the injected
// 429's own headers (nothing remaining) win.
func TestFaultsCarryRateLimitHeaders(t *testing.T) {
	b, _ := setup(t)
	me := "/2/users/" + strconv.FormatInt(b.User.ID, 10)
	served := get(t, b, me, b.Bearer)
	if served.Status != http.StatusOK || served.Header.Get("x-rate-limit-limit") == "" {
		t.Fatalf("served: %d %v", served.Status, served.Header)
	}
	limit, reset := served.Header.Get("x-rate-limit-limit"), served.Header.Get("x-rate-limit-reset")
	remaining := served.Header.Get("x-rate-limit-remaining")
	tests := []struct {
		name      string
		effect    map[string]any
		status    int
		remaining string
	}{
		{"503", map[string]any{"type": "status", "status": 503}, 503, remaining},
		{"500", map[string]any{"type": "status", "status": 500}, 500, remaining},
		{"usage-capped", map[string]any{"type": "usage_capped"}, 429, remaining},
		{"CreditsDepleted", map[string]any{"type": "credits_depleted"}, 402, remaining},
		{"404", map[string]any{"type": "status", "status": 404}, 404, remaining},
		{"429 keeps its own", map[string]any{"type": "status", "status": 429}, 429, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			create(t, b, b.Bearer, map[string]any{"match": map[string]any{"method": "GET", "route": "/2/users/{id}"},
				"effect": tt.effect, "count": 1})
			r := get(t, b, me, b.Bearer)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if got := r.Header.Get("x-rate-limit-limit"); got != limit {
				t.Errorf("x-rate-limit-limit %q, want %q", got, limit)
			}
			if got := r.Header.Get("x-rate-limit-remaining"); got != tt.remaining {
				t.Errorf("x-rate-limit-remaining %q, want %q", got, tt.remaining)
			}
			if tt.status != 429 || tt.remaining != "0" {
				if got := r.Header.Get("x-rate-limit-reset"); got != reset {
					t.Errorf("x-rate-limit-reset %q, want %q", got, reset)
				}
			}
		})
	}
	// the faults charged nothing: the second served request leaves two
	// less than the limit
	r := get(t, b, me, b.Bearer)
	if want, _ := strconv.Atoi(limit); r.Header.Get("x-rate-limit-remaining") != strconv.Itoa(want-2) {
		t.Errorf("after the faults: remaining %q, limit %s", r.Header.Get("x-rate-limit-remaining"), limit)
	}
}
