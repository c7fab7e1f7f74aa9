// Package adstest runs the whole API (core and ads features, production
// and sandbox listeners) on real PostgreSQL and Redis for the ads features'
// tests, and signs requests as the platform's ads clients do: OAuth 1.0a
// user context, parameters in the query string (GET, DELETE) or a form
// body (POST, PUT).
//
//	s := adstest.New(t)
//	alice := s.User(t, "alice")
//	acct := alice.Account(t)
//	r := alice.Get(t, "/12/accounts/"+acct.ID+"/campaigns", url.Values{"count": {"5"}})
//	r.Status(t, 200)
package adstest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// Server is the API under test. Its queue is the test's Redis database
// (RedisAddr, RedisDB), so a test can run workers on the tasks it enqueues.
type Server struct {
	RedisAddr  string
	RedisDB    int
	DB         *postgres.DB
	URL        string
	SandboxURL string
	App        storage.App
	// Bearer is an app-only token of App (refused by ads endpoints).
	Bearer  string
	modules api.AdsModules
	sql     *pgxpool.Pool
}

// Routes lists every ads endpoint served.
func (s *Server) Routes() []httpx.Endpoint { return s.modules.Endpoints() }

// Options adjust New.
type Options struct {
	// RateLimitScale multiplies every limit (default 1).
	RateLimitScale float64
}

// New starts the API on a new database and Redis database.
func New(t testing.TB, opts ...Options) *Server {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	db, _ := storagetest.NewDB(t)
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	w := apierr.Writer{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cursors, err := adsx.NewCursors(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatalf("cursors: %v", err)
	}
	queue := asynq.NewClient(asynq.RedisClientOpt{Addr: addr, DB: n})
	t.Cleanup(func() { queue.Close() })
	modules := api.Modules{Ads: api.NewAdsModules(adsx.Kit{Accounts: db, Cursors: cursors, Queue: queue, Logger: log}, db, nil)}
	s := &Server{DB: db, modules: modules.Ads, sql: sqlPool(t, db), RedisAddr: addr, RedisDB: n}
	for _, sandbox := range []bool{false, true} {
		authn, err := auth.New(db, auth.NewRedisNonceStore(rc, "t:nonce:"), "", time.Now, w)
		if err != nil {
			t.Fatalf("auth: %v", err)
		}
		srv := httptest.NewServer(api.New(api.Deps{Modules: modules, Auth: authn, Errors: w, Logger: log, Sandbox: sandbox,
			RateLimitScale: o.RateLimitScale, Limiter: ratelimit.NewLimiter(rc, "t:", time.Now, w)}))
		t.Cleanup(srv.Close)
		if sandbox {
			s.SandboxURL = srv.URL
		} else {
			s.URL = srv.URL
		}
	}
	s.App = factory.App(t, db, nil)
	tok, err := db.CreateBearerToken(context.Background(), s.App.ID)
	if err != nil {
		t.Fatalf("bearer: %v", err)
	}
	s.Bearer = "Bearer " + tok.Token
	return s
}

// sqlPool is a pool of the test's own on db's database, for the states no
// endpoint makes and the checks no endpoint shows.
func sqlPool(t testing.TB, db *postgres.DB) *pgxpool.Pool {
	t.Helper()
	dbURL, ok := storagetest.DatabaseURL(db)
	if !ok {
		t.Fatal("adstest: the database URL is unknown")
	}
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("adstest: connect: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// SQL is the test's own pool on the server's database (safe for
// concurrent use).
func (s *Server) SQL() *pgxpool.Pool { return s.sql }

// Exec runs one statement on SQL.
func (s *Server) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := s.sql.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}

// Scan runs a one-row query on SQL and scans the row into dest.
func (s *Server) Scan(t testing.TB, sql string, args []any, dest ...any) {
	t.Helper()
	if err := s.sql.QueryRow(context.Background(), sql, args...).Scan(dest...); err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
}

// With returns a copy of base with the pairs of kv set (name, value); an
// empty value removes the name: the "valid request but for one parameter"
// of bad-input tables.
func With(base url.Values, kv ...string) url.Values {
	v := url.Values{}
	for k, vs := range base {
		v[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			v.Del(kv[i])
			continue
		}
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// Caller is a user with a read-write access token of the server's app.
type Caller struct {
	s     *Server
	User  storage.User
	Token storage.AccessToken
	base  string
}

// User creates a user with a read-write token.
func (s *Server) User(t testing.TB, name string) *Caller {
	return s.userAt(t, name, "read-write")
}

// ReadOnlyUser creates a user whose token may only read.
func (s *Server) ReadOnlyUser(t testing.TB, name string) *Caller {
	return s.userAt(t, name, "read")
}

func (s *Server) userAt(t testing.TB, name, level string) *Caller {
	t.Helper()
	u := factory.User(t, s.DB, &factory.UserOpts{Username: name + storagetest.RandomSuffix(4)})
	tok, err := s.DB.EnsureAccessToken(context.Background(), s.App.ID, u.ID, level)
	if err != nil {
		t.Fatalf("access token: %v", err)
	}
	return &Caller{s: s, User: u, Token: tok, base: s.URL}
}

// Sandbox is the same caller on the sandbox listener.
func (c *Caller) Sandbox() *Caller {
	cp := *c
	cp.base = c.s.SandboxURL
	return &cp
}

// Account creates a production account the caller owns.
func (c *Caller) Account(t testing.TB) storage.AdAccount {
	t.Helper()
	return factory.AdAccount(t, c.s.DB, &factory.AdAccountOpts{Owner: &c.User, Sandbox: c.base == c.s.SandboxURL})
}

// Get sends a GET with params in the query string.
func (c *Caller) Get(t testing.TB, path string, params url.Values) Reply {
	return c.Do(t, http.MethodGet, path, params)
}

// Post sends a POST with params in a form body.
func (c *Caller) Post(t testing.TB, path string, params url.Values) Reply {
	return c.Do(t, http.MethodPost, path, params)
}

// Put sends a PUT with params in a form body.
func (c *Caller) Put(t testing.TB, path string, params url.Values) Reply {
	return c.Do(t, http.MethodPut, path, params)
}

// Delete sends a DELETE with params in the query string.
func (c *Caller) Delete(t testing.TB, path string, params url.Values) Reply {
	return c.Do(t, http.MethodDelete, path, params)
}

// Do sends a signed request: params go in the query string for GET and
// DELETE and in a form body for POST and PUT (path may carry a query string
// of its own).
func (c *Caller) Do(t testing.TB, method, path string, params url.Values) Reply {
	t.Helper()
	target := c.base + path
	var body io.Reader
	form := method == http.MethodPost || method == http.MethodPut
	if form && len(params) > 0 {
		body = strings.NewReader(params.Encode())
	} else if len(params) > 0 {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		target += sep + params.Encode()
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if form && len(params) > 0 {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return c.send(t, req)
}

// DoJSON sends a signed request with a JSON body (the batch endpoints).
func (c *Caller) DoJSON(t testing.TB, method, path string, body any) Reply {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("encode body: %v", err)
	}
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	return c.send(t, req)
}

func (c *Caller) send(t testing.TB, req *http.Request) Reply {
	t.Helper()
	if err := auth.SignRequest(req, "", c.s.App.ConsumerKey, c.s.App.ConsumerSecret, c.Token.Token, c.Token.Secret, time.Now(), ""); err != nil {
		t.Fatalf("sign: %v", err)
	}
	return Send(t, req)
}

// Send sends req as it is and reads the reply.
func Send(t testing.TB, req *http.Request) Reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := Reply{Code: resp.StatusCode, Header: resp.Header, Raw: string(raw), method: req.Method, url: req.URL.String()}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}

// Reply is a decoded response.
type Reply struct {
	Code   int
	Header http.Header
	Body   map[string]any
	Raw    string
	method string
	url    string
}

// Status fails the test unless the reply has status want.
func (r Reply) Status(t testing.TB, want int) Reply {
	t.Helper()
	if r.Code != want {
		t.Fatalf("%s %s: status %d, want %d: %s", r.method, r.url, r.Code, want, r.Raw)
	}
	return r
}

// Data is the single-object data.
func (r Reply) Data(t testing.TB) map[string]any {
	t.Helper()
	d, ok := r.Body["data"].(map[string]any)
	if !ok {
		t.Fatalf("%s %s: data is not an object: %s", r.method, r.url, r.Raw)
	}
	return d
}

// List is the list data.
func (r Reply) List(t testing.TB) []map[string]any {
	t.Helper()
	items, ok := r.Body["data"].([]any)
	if !ok {
		t.Fatalf("%s %s: data is not an array: %s", r.method, r.url, r.Raw)
	}
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i], _ = it.(map[string]any)
	}
	return out
}

// NextCursor is next_cursor ("" when null).
func (r Reply) NextCursor() string {
	s, _ := r.Body["next_cursor"].(string)
	return s
}

// Error is the first entry of the ads errors array.
type Error struct {
	Code, Message, Parameter string
}

// FirstError is the first entry of errors (zero when there is none).
func (r Reply) FirstError() Error {
	errs, _ := r.Body["errors"].([]any)
	if len(errs) == 0 {
		return Error{}
	}
	e, _ := errs[0].(map[string]any)
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	param, _ := e["parameter"].(string)
	return Error{Code: code, Message: msg, Parameter: param}
}

// Fails checks an error reply: status, the first error's code and, when
// param is not empty, the parameter it names.
func (r Reply) Fails(t testing.TB, status int, code, param string) {
	t.Helper()
	e := r.FirstError()
	if r.Code != status || e.Code != code || (param != "" && e.Parameter != param) {
		t.Fatalf("%s %s: got %d %s (parameter %q), want %d %s (parameter %q): %s",
			r.method, r.url, r.Code, e.Code, e.Parameter, status, code, param, r.Raw)
	}
	if _, ok := r.Body["request"].(map[string]any); !ok {
		t.Fatalf("%s %s: error without request: %s", r.method, r.url, r.Raw)
	}
}
