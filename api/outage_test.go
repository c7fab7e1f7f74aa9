package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// dependencyTimeout is the bound the outage bundle gives each dependency
// call, as AVIARY_DEPENDENCY_TIMEOUT does in production.
const dependencyTimeout = 500 * time.Millisecond

// outageLimit is the upper bound an answer during an outage must meet. It is
// a generous multiple of dependencyTimeout that only proves the request did
// not wait for a driver default (go-redis took 5 s, pgx waits forever): the
// repo has no timed assertions for speed, only upper bounds like this one.
const outageLimit = 3 * time.Second

// readyLimit is the same for /readyz, whose checks run under their own 2 s
// timeout.
const readyLimit = 4 * time.Second

// outageBundle is a bundle whose API server reaches PostgreSQL through a
// proxy and uses a Redis of its own, so a test can freeze or stop either.
type outageBundle struct {
	*apitest.Bundle
	redis *storagetest.RedisProcess
	pg    *storagetest.Proxy
}

// setupOutage starts a bundle (its store creates the apps, users and
// tokens) and replaces its server by one on the proxied database and a
// private Redis, wired as cmd/aviary wires them.
func setupOutage(t *testing.T) *outageBundle {
	t.Helper()
	return setupOutageWith(t, false)
}

// setupOutageWith is setupOutage; with directAuth authentication reads the
// database directly, so only the handlers' calls go through the proxy.
func setupOutageWith(t *testing.T, directAuth bool) *outageBundle {
	t.Helper()
	b := apitest.Setup(t, 100)
	o := &outageBundle{Bundle: b, redis: storagetest.PrivateRedis(t)}
	db := o.proxiedDB(t)
	authDB := db
	if directAuth {
		authDB = b.DB
	}
	rc := redis.NewClient(&redis.Options{Addr: o.redis.Addr, ContextTimeoutEnabled: true, DialTimeout: dependencyTimeout,
		ReadTimeout: dependencyTimeout, WriteTimeout: dependencyTimeout, PoolTimeout: dependencyTimeout})
	t.Cleanup(func() { rc.Close() })
	handler := api.New(outageDeps(t, authDB, db, rc))
	b.API, b.Srv = handler, httptest.NewServer(handler)
	t.Cleanup(b.Srv.Close)
	return o
}

// proxiedDB opens the bundle's database through a proxy o.pg controls.
func (o *outageBundle) proxiedDB(t *testing.T) *postgres.DB {
	t.Helper()
	dbURL, ok := storagetest.DatabaseURL(o.DB)
	if !ok {
		t.Fatal("bundle database has no URL")
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	o.pg = storagetest.NewProxy(t, u.Host)
	u.Host = o.pg.Addr()
	db, err := postgres.OpenWith(context.Background(), u.String(), postgres.Options{CallTimeout: dependencyTimeout, ConnectTimeout: dependencyTimeout})
	if err != nil {
		t.Fatalf("open proxied database: %v", err)
	}
	t.Cleanup(db.Close)
	t.Cleanup(func() { o.pg.SetDown(true) }) // first: a call stuck on a regression must not block Close
	return db
}

// outageDeps wires the API as cmd/aviary does: authentication reads
// authDB, the features db.
func outageDeps(t *testing.T, authDB, db *postgres.DB, rc *redis.Client) api.Deps {
	t.Helper()
	w := apierr.Writer{}
	log := slog.New(slog.DiscardHandler)
	authn, err := auth.New(authDB, auth.NewRedisNonceStore(rc, "t:nonce:").WithTimeout(dependencyTimeout), "", time.Now, w)
	if err != nil {
		t.Fatal(err)
	}
	return api.Deps{
		Modules: apitest.Modules(t, db, w, log),
		Auth:    authn, Errors: w, Logger: log, RateLimitScale: 100,
		Limiter: ratelimit.NewLimiter(rc, "t:", time.Now, w),
		Ready: []api.Check{
			{Name: "database", Check: db.Ping},
			{Name: "redis", Check: func(ctx context.Context) error { return rc.Ping(ctx).Err() }},
		},
	}
}

// timedReply is a reply and how long it took to come.
type timedReply struct {
	apitest.Reply
	elapsed time.Duration
}

// timedCall is apitest.Bundle.Call with a deadline: a request that hangs
// fails the test instead of blocking it. It reports how long the answer took.
func (o *outageBundle) timedCall(t *testing.T, method, path, authz string, body []byte) timedReply {
	t.Helper()
	req, err := http.NewRequest(method, o.Srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz == "oauth:author" {
		if err := auth.SignRequest(req, "", o.App.ConsumerKey, o.App.ConsumerSecret, o.AuthorToken.Token, o.AuthorToken.Secret, time.Now(), ""); err != nil {
			t.Fatal(err)
		}
	} else if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: no answer after %v: %v", method, path, time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := timedReply{Reply: apitest.Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}, elapsed: time.Since(start)}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}

// assertUnavailable checks a 503 Problem with Retry-After that came within
// outageLimit.
func assertUnavailable(t *testing.T, r timedReply) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503: %s", r.Status, r.Raw)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.Body["type"] != "about:blank" || r.Body["title"] != "Service Unavailable" || r.Body["status"] != float64(503) {
		t.Errorf("problem %s", r.Raw)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After header")
	}
	if r.elapsed >= outageLimit {
		t.Errorf("answered after %v; want under %v", r.elapsed.Round(time.Millisecond), outageLimit)
	}
}

// assertReadyz checks /readyz reports check unavailable within readyLimit.
func (o *outageBundle) assertReadyz(t *testing.T, check string) {
	t.Helper()
	r := o.timedCall(t, "GET", "/readyz", "", nil)
	checks, _ := r.Body["checks"].(map[string]any)
	if r.Status != http.StatusServiceUnavailable || checks[check] != "unavailable" {
		t.Errorf("readyz %d %s; want 503 with %s unavailable", r.Status, r.Raw, check)
	}
	if r.elapsed >= readyLimit {
		t.Errorf("readyz answered after %v; want under %v", r.elapsed.Round(time.Millisecond), readyLimit)
	}
}

const listJobs = "/2/compliance/jobs?type=tweets"

func postBody() []byte { return apitest.JSONBody(map[string]any{"text": "during an outage"}) }

// TestRedisOutage freezes, thaws and stops the API's Redis: a write needing
// an OAuth nonce check answers 503 (fail closed), a bearer read is served
// without rate-limit headers (the limiter fails open), readiness reports
// Redis unavailable, and nothing waits for a driver default.
func TestRedisOutage(t *testing.T) {
	t.Parallel()
	o := setupOutage(t)
	if r := o.timedCall(t, "POST", "/2/tweets", "oauth:author", postBody()); r.Status != http.StatusCreated {
		t.Fatalf("baseline post: %d %s", r.Status, r.Raw)
	}
	o.redis.Freeze()
	t.Run("frozen: write with OAuth", func(t *testing.T) {
		assertUnavailable(t, o.timedCall(t, "POST", "/2/tweets", "oauth:author", postBody()))
	})
	t.Run("frozen: bearer read fails open", func(t *testing.T) {
		assertServedUnlimited(t, o.timedCall(t, "GET", listJobs, o.Bearer, nil))
	})
	t.Run("frozen: readiness", func(t *testing.T) { o.assertReadyz(t, "redis") })
	o.redis.Thaw()
	t.Run("thawed: write succeeds", func(t *testing.T) {
		if r := o.timedCall(t, "POST", "/2/tweets", "oauth:author", postBody()); r.Status != http.StatusCreated {
			t.Errorf("post after thaw: %d %s", r.Status, r.Raw)
		}
	})
	o.redis.Stop()
	t.Run("stopped: write with OAuth", func(t *testing.T) {
		assertUnavailable(t, o.timedCall(t, "POST", "/2/tweets", "oauth:author", postBody()))
	})
	t.Run("stopped: bearer read fails open", func(t *testing.T) {
		assertServedUnlimited(t, o.timedCall(t, "GET", listJobs, o.Bearer, nil))
	})
	t.Run("stopped: readiness", func(t *testing.T) { o.assertReadyz(t, "redis") })
}

// assertServedUnlimited checks a 200 without rate-limit headers within
// outageLimit.
func assertServedUnlimited(t *testing.T, r timedReply) {
	t.Helper()
	if r.Status != http.StatusOK || r.Header.Get("x-rate-limit-limit") != "" {
		t.Errorf("status %d, x-rate-limit-limit %q; want 200 without it: %s", r.Status, r.Header.Get("x-rate-limit-limit"), r.Raw)
	}
	if r.elapsed >= outageLimit {
		t.Errorf("answered after %v; want under %v", r.elapsed.Round(time.Millisecond), outageLimit)
	}
}

// TestPostgresOutage freezes the API's PostgreSQL connection (the proxy
// accepts but relays nothing) and then takes it down: a bearer read, a
// bearer write and an OAuth write answer 503 within the bound, readiness
// reports the database unavailable, and service resumes after a thaw.
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	o := setupOutage(t)
	if r := o.timedCall(t, "GET", listJobs, o.Bearer, nil); r.Status != http.StatusOK {
		t.Fatalf("baseline read: %d %s", r.Status, r.Raw)
	}
	requests := []struct{ name, method, path, authz string }{
		{"bearer read", "GET", listJobs, o.Bearer},
		{"bearer write", "POST", "/2/compliance/jobs", o.Bearer},
		{"OAuth write", "POST", "/2/tweets", "oauth:author"},
	}
	bodies := map[string][]byte{"/2/compliance/jobs": apitest.JSONBody(map[string]any{"type": "tweets"}), "/2/tweets": postBody()}
	for _, mode := range []struct {
		name       string
		take, give func()
	}{
		{"frozen", o.pg.Freeze, o.pg.Thaw},
		{"down", func() { o.pg.SetDown(true) }, func() { o.pg.SetDown(false) }},
	} {
		mode.take()
		for _, rq := range requests {
			t.Run(mode.name+": "+rq.name, func(t *testing.T) {
				assertUnavailable(t, o.timedCall(t, rq.method, rq.path, rq.authz, bodies[rq.path]))
			})
		}
		t.Run(mode.name+": readiness", func(t *testing.T) { o.assertReadyz(t, "database") })
		mode.give()
		t.Run(mode.name+": recovered", func(t *testing.T) {
			if r := o.timedCall(t, "GET", listJobs, o.Bearer, nil); r.Status != http.StatusOK {
				t.Errorf("read after recovery: %d %s", r.Status, r.Raw)
			}
		})
	}
}

// TestPostgresOutageInHandler authenticates on a healthy database and
// freezes the one the handlers use: their reads, writes and transactions
// answer 503 within the bound too.
func TestPostgresOutageInHandler(t *testing.T) {
	t.Parallel()
	o := setupOutageWith(t, true)
	created := o.timedCall(t, "POST", "/2/compliance/jobs", o.Bearer, apitest.JSONBody(map[string]any{"type": "tweets"}))
	if created.Status != http.StatusOK {
		t.Fatalf("baseline create: %d %s", created.Status, created.Raw)
	}
	id, _ := created.Body["data"].(map[string]any)["id"].(string)
	o.pg.Freeze()
	defer o.pg.Thaw()
	requests := []struct {
		name, method, path, authz string
		body                      []byte
	}{
		{"read one job", "GET", "/2/compliance/jobs/" + id, o.Bearer, nil},
		{"create a job (id, then a transaction)", "POST", "/2/compliance/jobs", o.Bearer, apitest.JSONBody(map[string]any{"type": "users"})},
		{"create a post", "POST", "/2/tweets", "oauth:author", postBody()},
		{"delete a post", "DELETE", "/2/tweets/1", "oauth:author", nil},
	}
	for _, rq := range requests {
		t.Run(rq.name, func(t *testing.T) {
			assertUnavailable(t, o.timedCall(t, rq.method, rq.path, rq.authz, rq.body))
		})
	}
}

// TestReadinessStuckCheck: a readiness check that ignores its context (as
// go-redis did without ContextTimeoutEnabled) is reported unavailable when
// the check timeout ends instead of holding /readyz until it returns.
func TestReadinessStuckCheck(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	stuck := api.Check{Name: "stuck", Check: func(context.Context) error { <-release; return nil }}
	b := apitest.Setup(t, 100, func(d *api.Deps) { d.Ready = append(d.Ready, stuck) })
	t.Cleanup(func() { close(release) }) // before the server closes: cleanups run last-in first-out
	o := &outageBundle{Bundle: b}
	r := o.timedCall(t, "GET", "/readyz", "", nil)
	if got := apitest.CanonicalJSON(t, r.Raw); r.Status != http.StatusServiceUnavailable ||
		got != `{"checks":{"database":"ok","stuck":"unavailable"},"status":"unavailable"}` {
		t.Errorf("readyz %d %s", r.Status, got)
	}
	if r.elapsed >= readyLimit {
		t.Errorf("readyz answered after %v; want under %v", r.elapsed.Round(time.Millisecond), readyLimit)
	}
}
