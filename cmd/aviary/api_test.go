package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestQueueDashboardGuard drives /admin/queues/ as mounts wires it: a
// cross-site write is refused even with the right credential, and a burst
// of wrong passwords locks the client out, the right password included.
func TestQueueDashboardGuard(t *testing.T) {
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	b := &backends{redis: rc, asynqRC: asynq.RedisClientOpt{Addr: addr, DB: n}}
	b.closers = append(b.closers, func() { rc.Close() })
	t.Cleanup(b.Close)
	cfg := &config{AdminUser: "admin", AdminPassword: "secret", PublicURL: "http://aviary.example"}
	mounts, err := newMounts(cfg, b, apierr.Writer{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for prefix, h := range mounts {
		mux.Handle(prefix, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	send := func(method, path, password string, header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(""))
		req.SetBasicAuth("admin", password)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		return resp
	}
	const queues = "/admin/queues/api/queues"
	if r := send("GET", queues, "secret", nil); r.StatusCode != 200 {
		t.Fatalf("dashboard with the credential: %d", r.StatusCode)
	}
	writes := []struct {
		name   string
		header map[string]string
		status int // 0: anything but 403
	}{
		{"cross-site origin", map[string]string{"Origin": "https://evil.example"}, 403},
		{"cross-site referer", map[string]string{"Referer": "https://evil.example/page"}, 403},
		{"neither origin nor referer", nil, 403},
		{"same origin", map[string]string{"Origin": srv.URL}, 0},
		{"public URL origin", map[string]string{"Origin": "http://aviary.example"}, 0},
	}
	for _, w := range writes {
		r := send("POST", queues+"/default:pause", "secret", w.header)
		if (w.status != 0 && r.StatusCode != w.status) || (w.status == 0 && r.StatusCode == 403) {
			t.Errorf("%s: POST answered %d", w.name, r.StatusCode)
		}
	}
	unauthorized, limited := 0, 0
	for range 300 {
		switch r := send("GET", queues, "wrong", nil); r.StatusCode {
		case 401:
			unauthorized++
		case 429:
			limited++
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("429 without Retry-After")
			}
		default:
			t.Fatalf("wrong password answered %d", r.StatusCode)
		}
	}
	if unauthorized > 10 || limited == 0 {
		t.Errorf("300 wrong passwords: %d answered 401, %d 429; want a lockout after a handful", unauthorized, limited)
	}
	if r := send("GET", queues, "secret", nil); r.StatusCode != 429 {
		t.Errorf("right password during the lockout: %d, want 429", r.StatusCode)
	}
}
