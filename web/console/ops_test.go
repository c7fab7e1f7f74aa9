package console_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/opsredis"
	"github.com/aviary-dev/aviary/web/console"
)

// rateLimits is the fake limiter's reader: its counters of apps (nil: all),
// as api/ratelimit.Limiter.Counters filters them.
func (f *fixture) rateLimits(_ context.Context, apps []int64) ([]console.RateLimit, error) {
	var out []console.RateLimit
	for _, rl := range f.limits {
		if apps == nil || slices.Contains(apps, rl.AppID) {
			out = append(out, rl)
		}
	}
	return out, nil
}

// TestConsoleOpsPages: the rate limits, recent errors and charts pages
// show a user their own apps' records only, an administrator every app's
// (and, for errors and requests, those of no app).
func TestConsoleOpsPages(t *testing.T) {
	f := setup(t)
	ctx := t.Context()
	reset := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	f.limits = []console.RateLimit{
		{Rule: "users_lookup", Scope: "app", AppID: f.aliceApp.ID, Limit: 300, Used: 7, Remaining: 293, Reset: reset},
		{Rule: "tweets_create", Scope: "user", AppID: f.aliceApp.ID, UserID: f.alice.ID, Limit: 100, Used: 1, Remaining: 99, Reset: reset},
		{Rule: "bob_rule", Scope: "app", AppID: f.bobApp.ID, Limit: 5, Used: 5, Remaining: 0, Reset: reset},
	}
	rec := opsredis.NewRecorder(f.ops, nil)
	now := time.Now()
	rec.Request(f.aliceApp.ID, 200, now)
	rec.Request(f.aliceApp.ID, 200, now)
	rec.Request(f.aliceApp.ID, 429, now)
	rec.Request(f.bobApp.ID, 503, now)
	rec.Request(0, 401, now)
	rec.Error(storage.APIError{At: now.Add(-time.Second), AppID: f.aliceApp.ID, Method: "GET", Path: "/2/users/alice-old", Status: 400, Title: "Invalid Request", RequestID: "req-alice-1"})
	rec.Error(storage.APIError{At: now, AppID: f.aliceApp.ID, Method: "GET", Path: "/2/tweets/alice-new", Status: 429, Title: "Too Many Requests", Type: "about:blank", RequestID: "req-alice-2"})
	rec.Error(storage.APIError{At: now, AppID: f.bobApp.ID, Method: "POST", Path: "/2/tweets/bob", Status: 503, Title: "Service Unavailable", RequestID: "req-bob"})
	rec.Error(storage.APIError{At: now, AppID: 0, Method: "GET", Path: "/2/users/noapp", Status: 401, Title: "Unauthorized", RequestID: "req-none"})
	rec.Job("media", false, now)
	rec.Job("media", true, now)
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	minute := now.UTC().Truncate(time.Minute).Format("15:04")
	tests := []struct {
		name      string
		who       storage.User
		path      string
		want, not []string
	}{
		{"alice's rate limits", f.alice, "/console/ratelimits",
			[]string{"<td>alice-app</td><td>users_lookup</td><td>app</td><td>300</td><td>7</td><td>293</td>", "tweets_create", "<td>user "},
			[]string{"bob_rule", "bob-app"}},
		{"admin's rate limits", f.admin, "/console/ratelimits", []string{"users_lookup", "<td>bob-app</td><td>bob_rule</td><td>app</td><td>5</td><td>5</td><td>0</td>"}, nil},
		{"alice's errors, newest first", f.alice, "/console/errors",
			[]string{"/2/tweets/alice-new</code></td><td>429</td><td>Too Many Requests <code>about:blank</code></td><td><code>req-alice-2</code>"},
			[]string{"req-bob", "req-none"}},
		{"admin's errors", f.admin, "/console/errors", []string{"req-alice-1", "req-bob", "<td>no app</td>", "req-none"}, nil},
		{"alice's charts", f.alice, "/console/charts",
			[]string{"<tr><td>" + minute + "</td><td>2</td><td>0</td><td>1</td><td>0</td></tr>", `id="requests-chart"`,
				minute + `: 2 2xx</title>`, `<tr><td>` + minute + `</td><td>2</td><td>1</td></tr>`, minute + `: 1 failed</title>`},
			[]string{"<td>1</td><td>1</td></tr>"}},
		{"admin's charts", f.admin, "/console/charts",
			[]string{"<tr><td>" + minute + "</td><td>2</td><td>0</td><td>2</td><td>1</td></tr>", `id="jobs-chart-media"`}, nil},
		{"bob's errors", f.bob, "/console/errors", []string{"req-bob"}, []string{"req-alice", "req-none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.login(t, tt.who).get(tt.path)
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d", tt.path, p.status)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.body, w) {
					t.Errorf("lacks %s:\n%s", w, p.body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(p.body, n) {
					t.Errorf("shows %s", n)
				}
			}
		})
	}
	if p := f.login(t, f.alice).get("/console/errors"); strings.Index(p.body, "req-alice-2") > strings.Index(p.body, "req-alice-1") {
		t.Error("errors not newest first")
	}
}
