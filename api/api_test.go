package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/compliance"
	"github.com/aviary-dev/aviary/api/media"
	"github.com/aviary-dev/aviary/api/news"
	"github.com/aviary-dev/aviary/api/posts"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/api/search"
	"github.com/aviary-dev/aviary/api/users"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/validation"
)

const problems = "https://api.x.com/2/problems/"

// bundle is one API server on real PostgreSQL, Redis and local blobs, with
// two apps and users holding access tokens for the first.
type bundle struct {
	srv          *httptest.Server
	api          *api.Server
	db           *postgres.DB
	dbURL        string
	app, other   storage.App
	bearer       string
	otherBearer  string
	user, author storage.User
	token        storage.AccessToken
	authorToken  storage.AccessToken
	// tokens holds further access tokens of the first app by the name
	// call's "oauth:<name>" uses (see addUser).
	tokens map[string]storage.AccessToken
	// blobDir is the local blob store's directory (see storedObjects).
	blobDir string
}

// testModules builds the compliance, media and posts modules on db with a
// local blob store in a temporary directory, as every API test server
// serves them.
func testModules(t testing.TB, db *postgres.DB, w apierr.Writer, log *slog.Logger) api.Modules {
	t.Helper()
	return testModulesIn(t, db, w, log, t.TempDir())
}

// testModulesIn is testModules with the blob store in dir.
func testModulesIn(t testing.TB, db *postgres.DB, w apierr.Writer, log *slog.Logger, dir string) api.Modules {
	t.Helper()
	blobs, err := local.New(local.Options{Dir: dir, BaseURL: "http://blobs.invalid"})
	if err != nil {
		t.Fatalf("local blobs: %v", err)
	}
	val := validation.New()
	return api.Modules{
		Compliance: compliance.New(compliance.Deps{Store: db, Blobs: blobs, Validator: val, Problems: w, Logger: log}),
		Media:      media.New(media.Deps{Store: db, Blobs: blobs, Validator: val, Logger: log}),
		Posts:      posts.New(posts.Deps{Store: db, Validator: val, Problems: w}),
		Users:      users.New(users.Deps{Store: db, Problems: w}),
		Search:     search.New(search.Deps{Store: db}),
		News:       news.New(news.Deps{Store: db, Problems: w}),
	}
}

// setup starts a bundle; opts adjust the API dependencies before New.
func setup(t testing.TB, rateScale float64, opts ...func(*api.Deps)) *bundle {
	t.Helper()
	return setupOn(t, rateScale, func(_ *postgres.DB, d *api.Deps) {
		for _, opt := range opts {
			opt(d)
		}
	})
}

// setupOn starts a bundle; opt adjusts the API dependencies, on the
// bundle's database, before New.
func setupOn(t testing.TB, rateScale float64, opt func(*postgres.DB, *api.Deps)) *bundle {
	t.Helper()
	ctx := context.Background()
	db, dbURL := storagetest.NewDB(t)
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	w := apierr.Writer{}
	authn, err := auth.New(db, auth.NewRedisNonceStore(rc, "t:nonce:"), "", time.Now, w)
	if err != nil {
		t.Fatalf("auth: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	blobDir := t.TempDir()
	deps := api.Deps{
		Modules: testModulesIn(t, db, w, log, blobDir),
		Auth:    authn, Errors: w, RateLimitScale: rateScale,
		Logger:  log,
		Limiter: ratelimit.NewLimiter(rc, "t:", time.Now, w),
		Ready:   []api.Check{{Name: "database", Check: db.Ping}},
	}
	opt(db, &deps)
	handler := api.New(deps)
	b := &bundle{srv: httptest.NewServer(handler), api: handler, db: db, dbURL: dbURL, tokens: map[string]storage.AccessToken{}, blobDir: blobDir}
	t.Cleanup(b.srv.Close)
	b.app, b.bearer = newApp(t, db, "first")
	b.other, b.otherBearer = newApp(t, db, "second")
	b.user, b.token = newUser(t, db, b.app, "reader")
	b.author, b.authorToken = newUser(t, db, b.app, "author")
	_ = ctx
	return b
}

func newApp(t testing.TB, db *postgres.DB, name string) (storage.App, string) {
	t.Helper()
	app, err := db.CreateApp(context.Background(), name, "")
	if err != nil {
		t.Fatalf("create app: %v", err)
	}
	tok, err := db.CreateBearerToken(context.Background(), app.ID)
	if err != nil {
		t.Fatalf("create bearer: %v", err)
	}
	return app, "Bearer " + tok.Token
}

func newUser(t testing.TB, db *postgres.DB, app storage.App, name string) (storage.User, storage.AccessToken) {
	t.Helper()
	u, err := db.CreateUser(context.Background(), name, name)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	tok, err := db.EnsureAccessToken(context.Background(), app.ID, u.ID, "read-write")
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return u, tok
}

// addUser creates a user with an access token of the first app at level;
// call signs as them with "oauth:"+name.
func (b *bundle) addUser(t testing.TB, name, level string) storage.User {
	t.Helper()
	u, err := b.db.CreateUser(context.Background(), name, name)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	tok, err := b.db.EnsureAccessToken(context.Background(), b.app.ID, u.ID, level)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	b.tokens[name] = tok
	return u
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// noRedirects is a client that answers a redirect itself instead of
// following it: the API never redirects, so a test must see one if it does.
func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// call sends a request; authz "oauth:<token>" signs it as that user.
func (b *bundle) call(t testing.TB, method, path, authz, contentType string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	switch {
	case strings.HasPrefix(authz, "oauth:"):
		tok := b.token
		if authz == "oauth:author" {
			tok = b.authorToken
		}
		if named, ok := b.tokens[strings.TrimPrefix(authz, "oauth:")]; ok {
			tok = named
		}
		if err := auth.SignRequest(req, "", b.app.ConsumerKey, b.app.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
			// Unsignable input (fuzzing): send it with a bogus signature.
			req.Header.Set("Authorization", `OAuth oauth_consumer_key="`+b.app.ConsumerKey+`"`)
		}
	case authz != "":
		req.Header.Set("Authorization", authz)
	}
	resp, err := noRedirects().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// paramNames lists the parameter names of an invalid-request problem.
func paramNames(body map[string]any) []string {
	var names []string
	errs, _ := body["errors"].([]any)
	for _, e := range errs {
		params, _ := e.(map[string]any)["parameters"].(map[string]any)
		for name := range params {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func TestRejectedRequests(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	const jobs = "/2/compliance/jobs"
	js := "application/json"
	tests := []struct {
		name, method, path, authz, ctype string
		body                             []byte
		status                           int
		typ                              string // Problem type; "" skips
		params                           []string
	}{
		{"no credentials", "GET", jobs + "?type=tweets", "", "", nil, 401, "about:blank", nil},
		{"unknown bearer", "GET", jobs + "?type=tweets", "Bearer nope", "", nil, 401, "about:blank", nil},
		{"basic auth", "GET", jobs + "?type=tweets", "Basic dTpw", "", nil, 401, "about:blank", nil},
		{"missing type", "GET", jobs, b.bearer, "", nil, 400, problems + "invalid-request", []string{"type"}},
		{"bad type", "GET", jobs + "?type=likes", b.bearer, "", nil, 400, problems + "invalid-request", []string{"type"}},
		{"bad status", "GET", jobs + "?type=users&status=done", b.bearer, "", nil, 400, problems + "invalid-request", []string{"status"}},
		{"bad field", "GET", jobs + "?type=users&compliance_job.fields=id,secret", b.bearer, "", nil, 400, problems + "invalid-request", []string{"compliance_job.fields"}},
		{"empty fields", "GET", jobs + "?type=users&compliance_job.fields=", b.bearer, "", nil, 400, problems + "invalid-request", []string{"compliance_job.fields"}},
		{"unknown query parameter", "GET", jobs + "?type=users&max_results=5", b.bearer, "", nil, 400, problems + "invalid-request", []string{"max_results"}},
		{"repeated query parameter", "GET", jobs + "?type=tweets&type=users", b.bearer, "", nil, 400, problems + "invalid-request", []string{"type"}},
		{"repeated with the same value", "GET", jobs + "?type=users&type=users", b.bearer, "", nil, 400, problems + "invalid-request", []string{"type"}},
		{"repeated and unknown", "GET", jobs + "?type=users&status=failed&status=complete&x=1", b.bearer, "", nil, 400, problems + "invalid-request", []string{"status", "x"}},
		{"repeated empty field list", "GET", jobs + "/1?compliance_job.fields=&compliance_job.fields=", b.bearer, "", nil, 400, problems + "invalid-request", []string{"compliance_job.fields"}},
		{"repeated on create", "POST", jobs + "?compliance_job.fields=id&compliance_job.fields=id", b.bearer, js, jsonBody(map[string]any{"type": "users"}), 400, problems + "invalid-request", []string{"compliance_job.fields"}},
		{"malformed id", "GET", jobs + "/12ab", b.bearer, "", nil, 400, problems + "invalid-request", []string{"id"}},
		{"id too long", "GET", jobs + "/12345678901234567890", b.bearer, "", nil, 400, problems + "invalid-request", []string{"id"}},
		{"unknown job", "GET", jobs + "/42", b.bearer, "", nil, 404, problems + "resource-not-found", nil},
		{"create bad type", "POST", jobs, b.bearer, js, jsonBody(map[string]any{"type": "likes"}), 400, problems + "invalid-request", []string{"type"}},
		{"create no type", "POST", jobs, b.bearer, js, jsonBody(map[string]any{"name": "x"}), 400, problems + "invalid-request", []string{"type"}},
		{"create type not string", "POST", jobs, b.bearer, js, []byte(`{"type":5}`), 400, problems + "invalid-request", []string{"type"}},
		{"create unknown field", "POST", jobs, b.bearer, js, []byte(`{"type":"users","priority":1}`), 400, problems + "invalid-request", []string{"priority"}},
		{"create long name", "POST", jobs, b.bearer, js, jsonBody(map[string]any{"type": "users", "name": strings.Repeat("n", 65)}), 400, problems + "invalid-request", []string{"name"}},
		{"create invalid json", "POST", jobs, b.bearer, js, []byte(`{"type":`), 400, problems + "invalid-request", []string{"body"}},
		{"create two objects", "POST", jobs, b.bearer, js, []byte(`{"type":"users"}{"type":"users"}`), 400, problems + "invalid-request", []string{"body"}},
		{"create empty body", "POST", jobs, b.bearer, js, nil, 400, problems + "invalid-request", []string{"body"}},
		{"create wrong content type", "POST", jobs, b.bearer, "text/plain", []byte(`{"type":"users"}`), 415, "about:blank", nil},
		{"create oversized body", "POST", jobs, b.bearer, js, append([]byte(`{"type":"users","name":"`), bytes.Repeat([]byte("a"), 2<<20)...), 413, "about:blank", nil},
		{"create with user context", "POST", jobs, "oauth:reader", js, jsonBody(map[string]any{"type": "users"}), 403, problems + "unsupported-authentication", nil},
		{"post with bearer", "POST", "/2/tweets", b.bearer, js, jsonBody(map[string]any{"text": "hi"}), 403, problems + "unsupported-authentication", nil},
		{"post empty text", "POST", "/2/tweets", "oauth:reader", js, jsonBody(map[string]any{"text": ""}), 400, problems + "invalid-request", []string{"text"}},
		{"post no text", "POST", "/2/tweets", "oauth:reader", js, []byte(`{}`), 400, problems + "invalid-request", []string{"text"}},
		{"post with NUL", "POST", "/2/tweets", "oauth:reader", js, []byte(`{"text":"a\u0000b"}`), 400, problems + "invalid-request", []string{"text"}},
		{"job name with NUL", "POST", jobs, b.bearer, js, []byte(`{"type":"users","name":"\u0000"}`), 400, problems + "invalid-request", []string{"name"}},
		{"post too long", "POST", "/2/tweets", "oauth:reader", js, jsonBody(map[string]any{"text": strings.Repeat("é", 281)}), 400, problems + "invalid-request", []string{"text"}},
		{"delete unknown post", "DELETE", "/2/tweets/77", "oauth:reader", "", nil, 404, problems + "resource-not-found", nil},
		{"delete malformed id", "DELETE", "/2/tweets/x", "oauth:reader", "", nil, 400, problems + "invalid-request", []string{"id"}},
		{"wrong method", "DELETE", jobs, b.bearer, "", nil, 405, "about:blank", nil},
		{"unknown path", "GET", "/2/nothing", b.bearer, "", nil, 404, "about:blank", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.call(t, tt.method, tt.path, tt.authz, tt.ctype, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q: %s", ct, r.raw)
			}
			if r.body["type"] != tt.typ || r.body["title"] == "" || r.body["status"] != float64(tt.status) {
				t.Fatalf("problem %s; want type %s", r.raw, tt.typ)
			}
			if got := paramNames(r.body); strings.Join(got, ",") != strings.Join(tt.params, ",") {
				t.Fatalf("parameters %v, want %v: %s", got, tt.params, r.raw)
			}
		})
	}
	for _, app := range []storage.App{b.app, b.other} {
		for _, typ := range []string{"tweets", "users"} {
			listed, err := b.db.ListComplianceJobs(context.Background(), storage.ComplianceFilter{AppID: app.ID, Type: typ})
			if err != nil || len(listed) != 0 {
				t.Fatalf("rejected requests wrote jobs: %v %v", listed, err)
			}
		}
	}
}

func TestProblemDetails(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	r := b.call(t, "GET", "/2/compliance/jobs?type=likes", b.bearer, "", nil)
	if r.body["detail"] != "One or more parameters to your request was invalid." || r.body["title"] != "Invalid Request" {
		t.Errorf("invalid-request problem %s", r.raw)
	}
	errs := r.body["errors"].([]any)
	first := errs[0].(map[string]any)
	if first["message"] != "The `type` query parameter value [likes] is not one of [tweets,users]" {
		t.Errorf("message %v", first["message"])
	}
	if vals := first["parameters"].(map[string]any)["type"].([]any); len(vals) != 1 || vals[0] != "likes" {
		t.Errorf("parameters %v", first["parameters"])
	}
	r = b.call(t, "GET", "/2/compliance/jobs?type=tweets&type=users", b.bearer, "", nil)
	repeated, _ := r.body["errors"].([]any)
	if len(repeated) != 1 || repeated[0].(map[string]any)["message"] != "The query parameter [type] may be given only once" {
		t.Errorf("repeated-parameter problem %s", r.raw)
	}
	r = b.call(t, "GET", "/2/compliance/jobs/42", b.bearer, "", nil)
	if r.body["resource_type"] != "compliance_job" || r.body["resource_id"] != "42" || r.body["parameter"] != "id" {
		t.Errorf("not-found problem %s", r.raw)
	}
	r = b.call(t, "DELETE", "/2/compliance/jobs", b.bearer, "", nil)
	if r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	r = b.call(t, "GET", "/12/accounts/abc/nothing?count=5", b.bearer, "", nil)
	if r.status != 404 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("ads 404: %d %s", r.status, r.raw)
	}
	adsErr := r.body["errors"].([]any)[0].(map[string]any)
	if adsErr["code"] != "ROUTE_NOT_FOUND" || r.body["request"].(map[string]any)["params"].(map[string]any)["count"] != "5" {
		t.Errorf("ads envelope %s", r.raw)
	}
}

func TestComplianceConflictAndTenancy(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	ctx := context.Background()
	create := func(authz, typ string) reply {
		return b.call(t, "POST", "/2/compliance/jobs", authz, "application/json", jsonBody(map[string]any{"type": typ}))
	}
	first := create(b.bearer, "tweets")
	if first.status != 200 {
		t.Fatalf("create: %s", first.raw)
	}
	data := first.body["data"].(map[string]any)
	if !strings.HasPrefix(data["upload_url"].(string), b.srv.URL+"/2/compliance/jobs/"+data["id"].(string)+"/upload?") { // the upload gateway
		t.Errorf("upload url %v", data["upload_url"])
	}
	if second := create(b.bearer, "tweets"); second.status != 200 {
		t.Fatalf("a created (not in progress) job must not block: %s", second.raw)
	}
	id, _ := strconvID(data["id"].(string))
	if _, started, err := b.db.StartComplianceJob(ctx, id, time.Now()); err != nil || !started {
		t.Fatalf("start job: %v %v", started, err)
	}
	conflict := create(b.bearer, "tweets")
	if conflict.status != 409 || conflict.body["type"] != problems+"conflict" {
		t.Fatalf("conflict: %d %s", conflict.status, conflict.raw)
	}
	if r := create(b.bearer, "users"); r.status != 200 {
		t.Errorf("other type blocked: %s", r.raw)
	}
	if r := create(b.otherBearer, "tweets"); r.status != 200 {
		t.Errorf("other app blocked: %s", r.raw)
	}
	listed, _ := b.db.ListComplianceJobs(ctx, storage.ComplianceFilter{AppID: b.app.ID, Type: "tweets"})
	if len(listed) != 2 {
		t.Errorf("conflict wrote a job: %d tweets jobs", len(listed))
	}
	if r := b.call(t, "GET", "/2/compliance/jobs/"+data["id"].(string), b.otherBearer, "", nil); r.status != 404 {
		t.Errorf("other app reads job: %d", r.status)
	}
}

func strconvID(s string) (int64, bool) {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func TestPostsOwnership(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	r := b.call(t, "POST", "/2/tweets", "oauth:author", "application/json", jsonBody(map[string]any{"text": "mine"}))
	if r.status != 201 {
		t.Fatalf("create post: %d %s", r.status, r.raw)
	}
	id := r.body["data"].(map[string]any)["id"].(string)
	if r := b.call(t, "DELETE", "/2/tweets/"+id, "oauth:reader", "", nil); r.status != 403 || r.body["type"] != problems+"not-authorized-for-resource" {
		t.Fatalf("delete other's post: %d %s", r.status, r.raw)
	}
	if r := b.call(t, "DELETE", "/2/tweets/"+id, "oauth:author", "", nil); r.status != 200 || r.raw != "{\"data\":{\"deleted\":true}}\n" {
		t.Fatalf("delete own post: %d %s", r.status, r.raw)
	}
	if r := b.call(t, "DELETE", "/2/tweets/"+id, "oauth:author", "", nil); r.status != 404 {
		t.Fatalf("second delete: %d %s", r.status, r.raw)
	}
	n, _ := strconvID(id)
	p, err := b.db.PostByID(context.Background(), n)
	if err != nil || p.DeletedAt == nil || p.AuthorID != b.author.ID || ids.Format(p.ID) != id {
		t.Fatalf("stored post %+v %v", p, err)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, 1.0/150) // one request per window for the compliance routes
	first := b.call(t, "GET", "/2/compliance/jobs?type=users", b.bearer, "", nil)
	if first.status != 200 || first.header.Get("x-rate-limit-limit") != "1" || first.header.Get("x-rate-limit-remaining") != "0" {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	reset := first.header.Get("x-rate-limit-reset")
	if reset == "" {
		t.Fatalf("no reset header")
	}
	second := b.call(t, "GET", "/2/compliance/jobs?type=users", b.bearer, "", nil)
	if second.status != 429 || second.body["title"] != "Too Many Requests" || second.header.Get("x-rate-limit-reset") != reset {
		t.Fatalf("second: %d %s %v", second.status, second.raw, second.header)
	}
	if other := b.call(t, "GET", "/2/compliance/jobs?type=users", b.otherBearer, "", nil); other.status != 200 {
		t.Fatalf("another app shares the limit: %d", other.status)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	r := b.call(t, "GET", "/readyz", "", "", nil)
	if r.status != 200 || r.body["checks"].(map[string]any)["database"] != "ok" {
		t.Fatalf("readyz: %d %s", r.status, r.raw)
	}
	if r := b.call(t, "GET", "/healthz", "", "", nil); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
	if r.header.Get(api.RequestIDHeader) == "" {
		t.Errorf("no request id header")
	}
	req, _ := http.NewRequest("GET", b.srv.URL+"/healthz", nil)
	req.Header.Set(api.RequestIDHeader, "client-chosen-id")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get(api.RequestIDHeader) != "client-chosen-id" {
		t.Errorf("request id not echoed: %q", resp.Header.Get(api.RequestIDHeader))
	}
	for _, method := range []string{"PROPFIND", "BREW", "X-RANDOM"} {
		if r := b.call(t, method, "/healthz", "", "", nil); r.status != 405 {
			t.Errorf("%s /healthz: %d", method, r.status)
		}
	}
	m := b.call(t, "GET", "/metrics", "", "", nil)
	if m.status != 200 || !strings.Contains(m.raw, `aviary_http_requests_total{method="GET",route="GET /readyz",status="200"} 1`) {
		t.Fatalf("metrics: %d %.2000s", m.status, m.raw)
	}
	if !strings.Contains(m.raw, `aviary_http_requests_total{method="other",route="unmatched",status="405"} 3`) ||
		strings.Contains(m.raw, "PROPFIND") || strings.Contains(m.raw, "BREW") {
		t.Errorf("unusual methods are not labelled other: %.3000s", m.raw)
	}
}

func TestUserAccess(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	ctx := context.Background()
	b.addUser(t, "readonly", storage.AccessRead)
	for _, state := range []string{"deleted", "deactivated", "suspended", "protected"} {
		u := b.addUser(t, state, storage.AccessReadWrite)
		if _, err := b.db.SetUserState(ctx, u.ID, state, time.Now()); err != nil {
			t.Fatalf("set %s: %v", state, err)
		}
	}
	mine := b.call(t, "POST", "/2/tweets", "oauth:author", "application/json", jsonBody(map[string]any{"text": "kept"}))
	if mine.status != 201 {
		t.Fatalf("create post: %d %s", mine.status, mine.raw)
	}
	kept := mine.body["data"].(map[string]any)["id"].(string)
	const (
		readOnly  = "Your client app is not configured with the appropriate oauth1 app permissions for this endpoint."
		suspended = "Your account is suspended and is not permitted to access this feature."
	)
	post := jsonBody(map[string]any{"text": "hello"})
	tests := []struct {
		name, method, path, authz string
		body                      []byte
		status                    int
		title, detail             string // "" skips
	}{
		{"read-only token creates", "POST", "/2/tweets", "oauth:readonly", post, 403, "Forbidden", readOnly},
		{"read-only token deletes", "DELETE", "/2/tweets/" + kept, "oauth:readonly", nil, 403, "Forbidden", readOnly},
		{"read-only token, unknown post", "DELETE", "/2/tweets/77", "oauth:readonly", nil, 403, "Forbidden", readOnly},
		{"deleted user", "POST", "/2/tweets", "oauth:deleted", post, 401, "Unauthorized", ""},
		{"deactivated user", "POST", "/2/tweets", "oauth:deactivated", post, 401, "Unauthorized", ""},
		{"deactivated user deletes", "DELETE", "/2/tweets/" + kept, "oauth:deactivated", nil, 401, "Unauthorized", ""},
		{"suspended user", "POST", "/2/tweets", "oauth:suspended", post, 403, "Forbidden", suspended},
		{"suspended user deletes", "DELETE", "/2/tweets/" + kept, "oauth:suspended", nil, 403, "Forbidden", suspended},
		{"protected user", "POST", "/2/tweets", "oauth:protected", post, 201, "", ""},
		{"read-write token", "POST", "/2/tweets", "oauth:author", post, 201, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.call(t, tt.method, tt.path, tt.authz, "application/json", tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			if tt.status < 400 {
				return
			}
			if r.body["type"] != "about:blank" || r.body["title"] != tt.title {
				t.Errorf("problem %s; want about:blank titled %s", r.raw, tt.title)
			}
			if tt.detail != "" && r.body["detail"] != tt.detail {
				t.Errorf("detail %q, want %q", r.body["detail"], tt.detail)
			}
		})
	}
	n, _ := strconvID(kept)
	if p, err := b.db.PostByID(ctx, n); err != nil || p.DeletedAt != nil {
		t.Errorf("a refused delete deleted the post: %+v %v", p, err)
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	const secret = "dial tcp 10.9.8.7:5432: password authentication failed for user \"ops\""
	var failing atomic.Bool
	flaky := api.Check{Name: "flaky", Check: func(context.Context) error {
		if failing.Load() {
			return errors.New(secret)
		}
		return nil
	}}
	logs := &logRecorder{}
	b := setup(t, 100, func(d *api.Deps) {
		d.Ready = append(d.Ready, flaky)
		d.Logger = slog.New(logs)
	})
	// The cases run in order on one server: draining cannot be undone.
	tests := []struct {
		name         string
		fail, drain  bool
		status       int
		want         string
		wantWarnings int // readiness-check warnings logged so far
	}{
		{"ready", false, false, 200, `{"checks":{"database":"ok","flaky":"ok"},"status":"ok"}`, 0},
		{"dependency down", true, false, 503, `{"checks":{"database":"ok","flaky":"unavailable"},"status":"unavailable"}`, 1},
		{"recovered", false, false, 200, `{"checks":{"database":"ok","flaky":"ok"},"status":"ok"}`, 1},
		{"draining", false, true, 503, `{"status":"draining"}`, 1},
		{"draining while down", true, false, 503, `{"status":"draining"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failing.Store(tt.fail)
			if tt.drain {
				b.api.SetDraining()
			}
			r := b.call(t, "GET", "/readyz", "", "", nil)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			if got := canonicalJSON(t, r.raw); got != tt.want {
				t.Errorf("body %s, want %s", got, tt.want)
			}
			if strings.Contains(r.raw, "10.9.8.7") || strings.Contains(r.raw, "ops") {
				t.Errorf("dependency error leaked: %s", r.raw)
			}
			if got := logs.count("readiness check failed", slog.LevelWarn); got != tt.wantWarnings {
				t.Errorf("%d readiness warnings logged, want %d", got, tt.wantWarnings)
			}
		})
	}
	if r := b.call(t, "GET", "/healthz", "", "", nil); r.status != 200 {
		t.Errorf("healthz while draining: %d", r.status)
	}
}

// canonicalJSON re-encodes a JSON document with sorted keys.
func canonicalJSON(t *testing.T, raw string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestRequestLogLevels(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	b := setup(t, 100, func(d *api.Deps) { d.Logger = slog.New(logs) })
	tests := []struct {
		method, path string
		authz        string
		want         slog.Level
	}{
		{"GET", "/healthz", "", slog.LevelDebug},
		{"HEAD", "/healthz", "", slog.LevelDebug},
		{"GET", "/readyz", "", slog.LevelDebug},
		{"GET", "/metrics", "", slog.LevelDebug},
		{"GET", "/2/compliance/jobs?type=users", b.bearer, slog.LevelInfo},
		{"GET", "/2/compliance/jobs?type=likes", b.bearer, slog.LevelInfo},
		{"POST", "/healthz", "", slog.LevelInfo}, // not a probe: 405
		{"GET", "/healthz/x", "", slog.LevelInfo},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			before := logs.len()
			b.call(t, tt.method, tt.path, tt.authz, "", nil)
			lines := logs.since(before, "http request")
			if len(lines) != 1 {
				t.Fatalf("%d request lines logged, want 1", len(lines))
			}
			if lines[0].Level != tt.want {
				t.Errorf("logged at %v, want %v", lines[0].Level, tt.want)
			}
			attrs := map[string]string{}
			lines[0].Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			path, _, _ := strings.Cut(tt.path, "?")
			if attrs["method"] != tt.method || attrs["path"] != path || attrs["status"] == "" || attrs["route"] == "" || attrs["duration_ms"] == "" {
				t.Errorf("request line attributes %v; want method %s, path %s, a status, a route and a duration", attrs, tt.method, path)
			}
		})
	}
}

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.records)
}

// since returns the records with message msg logged after the first n.
func (l *logRecorder) since(n int, msg string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.records[n:] {
		if r.Message == msg {
			out = append(out, r)
		}
	}
	return out
}

// count returns how many records with message msg were logged at level.
func (l *logRecorder) count(msg string, level slog.Level) int {
	n := 0
	for _, r := range l.since(0, msg) {
		if r.Level == level {
			n++
		}
	}
	return n
}
