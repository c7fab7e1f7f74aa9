package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/faultsredis"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/opsredis"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/console"
)

const password = "correct horse battery"

// fixture is the console on real PostgreSQL and Redis with two users,
// alice and bob, each with an app of their own, and an administrator.
type fixture struct {
	srv               *httptest.Server
	db                *postgres.DB
	alice, bob, admin storage.User
	aliceApp, bobApp  storage.App
	announced         atomic.Int64
	faults            *faultsredis.Store
	resets            atomic.Int64
	blobs             *local.Store
	ended             chan []string // the connections each Kill announced
	ops               *opsredis.Store
	limits            []console.RateLimit // what the fake limiter holds
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	rc, prefix := storagetest.RedisPrefix(t)
	blobs, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://blobs.invalid/blobs/"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, faults: faultsredis.New(rc, prefix+"faults:"), blobs: blobs, ended: make(chan []string, 10), ops: opsredis.New(rc, prefix+"ops:")}
	f.alice, f.aliceApp = f.userWithApp(t, "alice", "alice-app")
	f.bob, f.bobApp = f.userWithApp(t, "bob", "bob-app")
	f.admin = f.user(t, "root")
	if err := db.SetUserAdmin(ctx, f.admin.ID, true); err != nil {
		t.Fatal(err)
	}
	sessions, err := web.NewSessions([]byte(strings.Repeat("k", 32)), false, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	kit, err := web.NewKit(sessions, web.NewThrottle(rc, prefix+"login:"), nil)
	if err != nil {
		t.Fatal(err)
	}
	count := func(context.Context) error { f.announced.Add(1); return nil }
	c, err := console.New(console.Config{Store: db, Kit: kit,
		Notify: console.Notify{OAuth2Revoked: count,
			BearerRevoked:      func(ctx context.Context, _ string) error { return count(ctx) },
			AccessTokenRevoked: func(ctx context.Context, _ string) error { return count(ctx) },
			UserChanged:        func(ctx context.Context, _ int64) error { return count(ctx) }},
		Queues: func(context.Context) ([]console.Queue, error) {
			return []console.Queue{{Name: "media", Size: 3, Pending: 2, Active: 1}, {Name: "compliance"}}, nil
		}, QueueDashboard: true,
		Faults: f.faults, Usage: db, Ops: f.ops, RateLimits: f.rateLimits,
		ResetState: func(context.Context) (console.ResetResult, error) {
			f.resets.Add(1)
			return console.ResetResult{Surfaces: []string{"core", "ads", "events"}, Removed: 7, Cleared: []string{"faults"}}, nil
		},
		OpenBlob: f.openBlob,
		EndStreams: func(_ context.Context, appID int64, conns []string) error {
			f.ended <- append([]string{strconv.FormatInt(appID, 10)}, conns...)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(c.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) user(t *testing.T, name string) storage.User {
	t.Helper()
	u, err := f.db.CreateUser(t.Context(), name, strings.ToUpper(name))
	if err != nil {
		t.Fatal(err)
	}
	hash, err := web.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.SetUserPassword(t.Context(), u.ID, hash); err != nil {
		t.Fatal(err)
	}
	return u
}

func (f *fixture) userWithApp(t *testing.T, name, app string) (storage.User, storage.App) {
	t.Helper()
	u := f.user(t, name)
	a, err := f.db.CreateApp(t.Context(), app, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.SetAppOwner(t.Context(), a.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateBearerToken(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	return u, a
}

// browser is a logged-in user agent that does not follow redirects.
type browser struct {
	t    *testing.T
	f    *fixture
	c    *http.Client
	csrf string
}

type page struct {
	status   int
	header   http.Header
	body     string
	location string
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func (f *fixture) login(t *testing.T, u storage.User) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, f: f, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	p := b.get("/console/login")
	b.csrf = csrfOf(t, p)
	p = b.post("/console/login", url.Values{"username": {u.Username}, "password": {password}})
	if p.status != http.StatusSeeOther || p.location != "/console/apps" {
		t.Fatalf("login as %s: %d %q\n%s", u.Username, p.status, p.location, p.body)
	}
	b.csrf = csrfOf(t, b.get("/console/apps"))
	return b
}

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on the page (%d):\n%s", p.status, p.body)
	}
	return m[1]
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(body), location: resp.Header.Get("Location")}
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest(http.MethodGet, b.f.srv.URL+path, nil)
	return b.do(req)
}

func (b *browser) htmx(path string) page {
	req, _ := http.NewRequest(http.MethodGet, b.f.srv.URL+path, nil)
	req.Header.Set("HX-Request", "true")
	return b.do(req)
}

// post sends form with the session's CSRF token (unless form has one).
func (b *browser) post(path string, form url.Values) page {
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", b.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func appPath(a storage.App) string { return "/console/apps/" + ids.Format(a.ID) }

// secrets are the values of a "shown once" page, by element id.
var secretValue = regexp.MustCompile(`<code id="([a-z-]+)">([^<]+)</code>`)

func secrets(p page) map[string]string {
	out := map[string]string{}
	for _, m := range secretValue.FindAllStringSubmatch(p.body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestConsoleLogin: pages need a login; a wrong password is refused with
// the form again; the console's CSP allows its own scripts only.
func TestConsoleLogin(t *testing.T) {
	t.Parallel()
	f := setup(t)
	anon := &browser{t: t, f: f, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for _, path := range []string{"/console/apps", "/console/users", "/console/compliance", "/console/webhooks", "/console/queues", appPath(f.aliceApp)} {
		if p := anon.get(path); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/console/login?next=") {
			t.Errorf("GET %s without a session: %d %q", path, p.status, p.location)
		}
	}
	if p := anon.htmx("/console/compliance/jobs"); p.status != http.StatusUnauthorized || p.header.Get("HX-Redirect") != "/console/login" {
		t.Errorf("htmx poll without a session: %d %q", p.status, p.header.Get("HX-Redirect"))
	}
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, f: f, c: &http.Client{Jar: jar, CheckRedirect: anon.c.CheckRedirect}}
	p := b.get("/console/login?next=/console/queues")
	if csp := p.header.Get("Content-Security-Policy"); csp != console.ContentSecurityPolicy || p.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers: CSP %q, X-Frame-Options %q", csp, p.header.Get("X-Frame-Options"))
	}
	b.csrf = csrfOf(t, p)
	if p := b.post("/console/login", url.Values{"username": {"alice"}, "password": {"wrong"}}); p.status != http.StatusUnauthorized ||
		!strings.Contains(p.body, "do not match") {
		t.Errorf("wrong password: %d", p.status)
	}
	p = b.post("/console/login", url.Values{"username": {"alice"}, "password": {password}, "next": {"/console/queues"}})
	if p.status != http.StatusSeeOther || p.location != "/console/queues" {
		t.Fatalf("login: %d %q", p.status, p.location)
	}
	b.csrf = csrfOf(t, b.get("/console/apps")) // a login starts a new session, with a new token
	if p := b.post("/console/login", url.Values{"username": {"alice"}, "password": {password}, "next": {"//evil.example/"}}); p.location != "/console/apps" {
		t.Errorf("login with an off-site next went to %q", p.location)
	}
	p = b.get("/console/queues")
	for _, want := range []string{"media", "compliance", `href="/admin/queues/"`, "@alice"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("queues page does not show %q:\n%s", want, p.body)
		}
	}
	b.csrf = csrfOf(t, p)
	if p := b.post("/console/logout", nil); p.status != http.StatusSeeOther {
		t.Errorf("logout: %d", p.status)
	}
	if p := b.get("/console/apps"); p.status != http.StatusSeeOther {
		t.Errorf("after logout: %d", p.status)
	}
}

// TestConsoleCSRF: every POST without the session's CSRF token (or with
// another session's) is refused with 403 and changes nothing.
func TestConsoleCSRF(t *testing.T) {
	t.Parallel()
	f := setup(t)
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)
	app := appPath(f.aliceApp)
	posts := []struct {
		path string
		form url.Values
	}{
		{"/console/apps", url.Values{"name": {"sneaky"}}},
		{app + "/bearer-tokens", nil},
		{app + "/bearer-tokens/revoke", url.Values{"ref": {"x"}}},
		{app + "/access-tokens", url.Values{"access": {"read"}}},
		{app + "/access-tokens/revoke", url.Values{"ref": {"x"}}},
		{app + "/grants/revoke", url.Values{"grant": {"1"}}},
		{app + "/callbacks", url.Values{"callback": {"https://evil.example/cb"}}},
		{app + "/callbacks/remove", url.Values{"callback": {"https://evil.example/cb"}}},
		{"/console/users", url.Values{"username": {"sneaky"}}},
		{"/console/users/" + ids.Format(f.bob.ID) + "/state", url.Values{"state": {"suspended"}}},
		{"/console/users/" + ids.Format(f.bob.ID) + "/verified", url.Values{"verified": {"on"}}},
		{app + "/webhooks/1/deliveries/1/redeliver", nil},
		{"/console/logout", nil},
	}
	for _, tc := range posts {
		// Users pages are the administrator's; the rest alice's. Each is
		// sent with no token and with the other session's.
		b, other := alice, admin
		if strings.HasPrefix(tc.path, "/console/users") {
			b, other = admin, alice
		}
		for _, token := range []string{"", other.csrf} {
			form := url.Values{"csrf_token": {token}}
			for k, v := range tc.form {
				form[k] = v
			}
			if p := b.post(tc.path, form); p.status != http.StatusForbidden {
				t.Errorf("POST %s with CSRF token %q: %d, want 403", tc.path, token, p.status)
			}
		}
	}
	ctx := t.Context()
	if _, err := f.db.AppByName(ctx, "sneaky"); err == nil {
		t.Error("an app was created without a CSRF token")
	}
	if urls, _ := f.db.CallbackURLs(ctx, f.aliceApp.ID); len(urls) != 0 {
		t.Errorf("callbacks changed: %v", urls)
	}
	if toks, _ := f.db.AppBearerTokens(ctx, f.aliceApp.ID); len(toks) != 1 {
		t.Errorf("bearer tokens changed: %d", len(toks))
	}
	if u, _ := f.db.UserByID(ctx, f.bob.ID); u.SuspendedAt != nil || u.Verified {
		t.Errorf("bob changed: %+v", u)
	}
	if _, err := f.db.UserByUsername(ctx, "sneaky"); err == nil {
		t.Error("a user was created without a CSRF token")
	}
}

// TestConsoleTenancy: a user never sees nor touches another user's app;
// an administrator sees every app.
func TestConsoleTenancy(t *testing.T) {
	t.Parallel()
	f := setup(t)
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)
	if p := alice.get("/console/apps"); !strings.Contains(p.body, "alice-app") || strings.Contains(p.body, "bob-app") {
		t.Errorf("alice's apps page:\n%s", p.body)
	}
	bob := appPath(f.bobApp)
	for _, path := range []string{bob, bob + "/webhooks/1"} {
		if p := alice.get(path); p.status != http.StatusNotFound || strings.Contains(p.body, f.bobApp.ConsumerKey) {
			t.Errorf("alice GET %s: %d", path, p.status)
		}
	}
	ref := postgres.TokenRefOf(firstBearer(t, f, f.bobApp))
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{bob + "/bearer-tokens", nil},
		{bob + "/bearer-tokens/revoke", url.Values{"ref": {ref}}},
		{bob + "/access-tokens", url.Values{"access": {"read"}}},
		{bob + "/callbacks", url.Values{"callback": {"https://evil.example/cb"}}},
	} {
		if p := alice.post(tc.path, tc.form); p.status != http.StatusNotFound {
			t.Errorf("alice POST %s: %d, want 404", tc.path, p.status)
		}
	}
	if toks, _ := f.db.AppBearerTokens(t.Context(), f.bobApp.ID); len(toks) != 1 {
		t.Errorf("bob's bearer tokens changed: %d", len(toks))
	}
	if urls, _ := f.db.CallbackURLs(t.Context(), f.bobApp.ID); len(urls) != 0 {
		t.Errorf("bob's callbacks changed: %v", urls)
	}
	p := admin.get("/console/apps")
	for _, want := range []string{"alice-app", "bob-app", "@alice", "@bob"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the administrator's apps page does not show %q", want)
		}
	}
	if p := admin.get(bob); p.status != http.StatusOK || !strings.Contains(p.body, f.bobApp.ConsumerKey) {
		t.Errorf("administrator GET bob's app: %d", p.status)
	}
}

func firstBearer(t *testing.T, f *fixture, a storage.App) string {
	t.Helper()
	b, err := f.db.FirstBearerToken(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b.Token
}

// TestConsoleAppsAndTokens: create an app (credentials shown once, the
// app owned by its creator), bearer and access tokens issued and revoked,
// callbacks added and removed, an OAuth 2.0 grant listed and revoked.
func TestConsoleAppsAndTokens(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	alice := f.login(t, f.alice)
	p := alice.post("/console/apps", url.Values{"name": {"my-new-app"}})
	got := secrets(p)
	if p.status != http.StatusCreated || got["consumer-key"] == "" || got["consumer-secret"] == "" || got["bearer-token"] == "" {
		t.Fatalf("create app: %d %v\n%s", p.status, got, p.body)
	}
	app, err := f.db.AppByBearerToken(ctx, got["bearer-token"])
	if err != nil || app.Name != "my-new-app" || app.ConsumerKey != got["consumer-key"] || app.ConsumerSecret != got["consumer-secret"] {
		t.Fatalf("the shown credentials: %+v, %v", app, err)
	}
	if owner, _ := f.db.AppOwner(ctx, app.ID); owner != f.alice.ID {
		t.Errorf("owner %d, want alice %d", owner, f.alice.ID)
	}
	if p := alice.post("/console/apps", url.Values{"name": {"my-new-app"}}); p.status != http.StatusConflict {
		t.Errorf("same name again: %d", p.status)
	}
	if p := alice.post("/console/apps", url.Values{"name": {""}}); p.status != http.StatusBadRequest {
		t.Errorf("empty name: %d", p.status)
	}
	detail := alice.get(appPath(app))
	if strings.Contains(detail.body, got["consumer-secret"]) || strings.Contains(detail.body, got["bearer-token"]) {
		t.Error("the app's page shows a secret again")
	}

	// Bearer tokens: a second one, then the first revoked by its reference.
	second := secrets(alice.post(appPath(app)+"/bearer-tokens", nil))["bearer-token"]
	if a, err := f.db.AppByBearerToken(ctx, second); err != nil || a.ID != app.ID {
		t.Fatalf("second bearer token: %v", err)
	}
	before := f.announced.Load()
	p = alice.post(appPath(app)+"/bearer-tokens/revoke", url.Values{"ref": {postgres.TokenRefOf(got["bearer-token"])}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "done=bearer-revoked") {
		t.Fatalf("revoke bearer: %d %q", p.status, p.location)
	}
	if _, err := f.db.AppByBearerToken(ctx, got["bearer-token"]); err == nil {
		t.Error("the revoked bearer token still authenticates")
	}
	if _, err := f.db.AppByBearerToken(ctx, second); err != nil {
		t.Errorf("the other bearer token: %v", err)
	}
	if f.announced.Load() != before+1 {
		t.Error("the revocation was not announced")
	}
	if p := alice.post(appPath(app)+"/bearer-tokens/revoke", url.Values{"ref": {postgres.TokenRefOf(got["bearer-token"])}}); p.status != http.StatusNotFound {
		t.Errorf("revoke again: %d", p.status)
	}

	// The viewer's own OAuth 1.0a access token.
	tok := secrets(alice.post(appPath(app)+"/access-tokens", url.Values{"access": {"read"}}))
	at, err := f.db.AccessToken(ctx, tok["access-token"])
	if err != nil || at.Secret != tok["access-token-secret"] || at.UserID != f.alice.ID || at.AccessLevel != "read" {
		t.Fatalf("access token: %+v, %v", at, err)
	}
	if p := alice.get(appPath(app)); !strings.Contains(p.body, "@alice") {
		t.Error("the app's page does not list alice's access token")
	}
	alice.post(appPath(app)+"/access-tokens/revoke", url.Values{"ref": {postgres.TokenRefOf(tok["access-token"])}})
	if toks, _ := f.db.AppAccessTokens(ctx, app.ID); len(toks) != 0 {
		t.Errorf("access tokens after revoke: %d", len(toks))
	}

	// Callbacks.
	if p := alice.post(appPath(app)+"/callbacks", url.Values{"callback": {"javascript:alert(1)"}}); p.status != http.StatusBadRequest {
		t.Errorf("bad callback: %d", p.status)
	}
	alice.post(appPath(app)+"/callbacks", url.Values{"callback": {"https://client.example/cb"}})
	if ok, _ := f.db.HasCallbackURL(ctx, app.ID, "https://client.example/cb"); !ok {
		t.Error("callback not added")
	}
	alice.post(appPath(app)+"/callbacks/remove", url.Values{"callback": {"https://client.example/cb"}})
	if ok, _ := f.db.HasCallbackURL(ctx, app.ID, "https://client.example/cb"); ok {
		t.Error("callback not removed")
	}

	// An OAuth 2.0 grant (issued through the code exchange) is listed, then revoked.
	family := grant(t, f, app)
	p = alice.get(appPath(app))
	if !strings.Contains(p.body, `name="grant" value="`+ids.Format(family)+`"`) || !strings.Contains(p.body, "tweet.read") {
		t.Fatalf("the grant is not listed:\n%s", p.body)
	}
	alice.post(appPath(app)+"/grants/revoke", url.Values{"grant": {ids.Format(family)}})
	if gs, _ := f.db.AppOAuth2Grants(ctx, app.ID); len(gs) != 0 {
		t.Errorf("grants after revoke: %+v", gs)
	}
}

// grant gives alice an OAuth 2.0 grant to app through a code exchange and
// returns its family id.
func grant(t *testing.T, f *fixture, app storage.App) int64 {
	t.Helper()
	ctx := t.Context()
	code := "code-" + ids.Format(app.ID)
	err := f.db.CreateOAuth2Code(ctx, code, storage.OAuth2Code{AppID: app.ID, UserID: f.alice.ID, RedirectURI: "https://client.example/cb",
		Scopes: []string{"tweet.read", "users.read"}, Challenge: strings.Repeat("a", 43), Method: "plain", ExpiresAt: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.db.ExchangeOAuth2Code(ctx, code, time.Now(), func(storage.OAuth2Code) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{Access: "access-" + code, AccessExpires: time.Now().Add(time.Hour), Scopes: []string{"tweet.read", "users.read"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.db.OAuth2Token(ctx, "access-"+code)
	if err != nil {
		t.Fatalf("the issued token: %v (code %+v)", err, c)
	}
	return tok.FamilyID
}

// TestConsoleUsers: only an administrator creates users and changes their
// state; every change is what `aviary admin` would store, and announced.
func TestConsoleUsers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)
	if p := alice.get("/console/users"); !strings.Contains(p.body, "@alice") || strings.Contains(p.body, "@bob") {
		t.Errorf("alice's users page lists others:\n%s", p.body)
	}
	bobPath := "/console/users/" + ids.Format(f.bob.ID)
	for _, tc := range []struct {
		path string
		form url.Values
	}{{"/console/users", url.Values{"username": {"carol"}}}, {bobPath + "/state", url.Values{"state": {"suspended"}}},
		{bobPath + "/verified", url.Values{"verified": {"on"}}}} {
		if p := alice.post(tc.path, tc.form); p.status != http.StatusForbidden {
			t.Errorf("alice POST %s: %d, want 403", tc.path, p.status)
		}
	}
	if p := admin.get("/console/users"); !strings.Contains(p.body, "@bob") || !strings.Contains(p.body, "@alice") {
		t.Errorf("the administrator's users page:\n%s", p.body)
	}
	if p := admin.post("/console/users", url.Values{"username": {"carol"}, "name": {"Carol"}, "password": {"pw of carol"}}); p.status != http.StatusSeeOther {
		t.Fatalf("create user: %d\n%s", p.status, p.body)
	}
	carol, _, err := f.db.UserPassword(ctx, "carol")
	if err != nil || carol.Name != "Carol" {
		t.Fatalf("carol: %+v %v", carol, err)
	}
	if p := admin.post("/console/users", url.Values{"username": {"carol"}}); p.status != http.StatusConflict {
		t.Errorf("carol again: %d", p.status)
	}
	if p := admin.post("/console/users", url.Values{"username": {"not a handle!"}}); p.status != http.StatusBadRequest {
		t.Errorf("bad username: %d", p.status)
	}
	before := f.announced.Load()
	for _, form := range []url.Values{{"state": {"protected"}}, {"state": {"suspended"}}} {
		if p := admin.post(bobPath+"/state", form); p.status != http.StatusSeeOther {
			t.Errorf("state %v: %d", form, p.status)
		}
	}
	admin.post(bobPath+"/verified", url.Values{"verified": {"on"}})
	bob, _ := f.db.UserByID(ctx, f.bob.ID)
	if bob.ProtectedAt == nil || bob.SuspendedAt == nil || !bob.Verified {
		t.Errorf("bob after the changes: %+v", bob)
	}
	if f.announced.Load() != before+3 {
		t.Errorf("announced %d changes, want 3", f.announced.Load()-before)
	}
	if p := admin.post(bobPath+"/state", url.Values{"state": {"deleted"}}); p.status != http.StatusBadRequest {
		t.Errorf("state deleted: %d", p.status)
	}
	// A suspended user cannot log in any more (as on the consent pages).
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, f: f, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	b.csrf = csrfOf(t, b.get("/console/login"))
	if p := b.post("/console/login", url.Values{"username": {"bob"}, "password": {password}}); p.status != http.StatusUnauthorized {
		t.Errorf("suspended bob logs in: %d", p.status)
	}
}

// TestConsoleCompliance: the jobs fragment polls every 2 s while a job is
// open and stops once every job is final; another user's jobs are not
// shown.
func TestConsoleCompliance(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	job := func(app storage.App, name string) storage.ComplianceJob {
		now := time.Now()
		j, err := f.db.CreateComplianceJob(ctx, storage.ComplianceJob{ID: now.UnixNano(), AppID: app.ID, Type: storage.ComplianceTypeTweets,
			Name: name, UploadKey: "u/" + name, ResultKey: "r/" + name, UploadURL: "https://blobs.example/u", DownloadURL: "https://blobs.example/d",
			UploadExpiresAt: now.Add(time.Hour), DownloadExpiresAt: now.Add(time.Hour), CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	mine, theirs := job(f.aliceApp, "alice-job"), job(f.bobApp, "bob-job")
	alice := f.login(t, f.alice)
	p := alice.get("/console/compliance")
	if !strings.Contains(p.body, "alice-job") || strings.Contains(p.body, "bob-job") || !strings.Contains(p.body, `hx-trigger="every 2s"`) {
		t.Fatalf("compliance page:\n%s", p.body)
	}
	if _, _, err := f.db.StartComplianceJob(ctx, mine.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if p := alice.htmx("/console/compliance/jobs"); !strings.Contains(p.body, "in_progress") || !strings.Contains(p.body, "hx-trigger") {
		t.Errorf("fragment in progress:\n%s", p.body)
	}
	if err := f.db.CompleteComplianceJob(ctx, mine.ID, storage.ComplianceProgress{LinesRead: 3, ResultLines: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	p = alice.htmx("/console/compliance/jobs")
	status := regexp.MustCompile(`id="job-` + ids.Format(mine.ID) + `-status">([a-z_]+)<`).FindStringSubmatch(p.body)
	if p.status != http.StatusOK || status == nil || status[1] != "complete" || strings.Contains(p.body, "hx-trigger") ||
		strings.Contains(p.body, "<html") {
		t.Errorf("fragment after completion (%v):\n%s", status, p.body)
	}
	if strings.Contains(p.body, ids.Format(theirs.ID)) {
		t.Error("alice sees bob's job")
	}
}

// TestConsoleWebhooks: the delivery log of one's webhook and the redeliver
// button (a copy queued, as POST .../redeliver does); another user's
// webhook is not found.
func TestConsoleWebhooks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	hook, err := f.db.CreateWebhook(ctx, storage.WebhookCreate{AppID: f.aliceApp.ID, URL: "https://receiver.example/hook", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AddWebhookDeliveries(ctx, []storage.NewDelivery{{WebhookID: hook.ID, AppID: f.aliceApp.ID, EventSeq: 1,
		EventAt: time.Now(), Body: []byte(`{"data":{}}`)}}); err != nil {
		t.Fatal(err)
	}
	ds, err := f.db.WebhookDeliveries(ctx, storage.WebhookDeliveryQuery{AppID: f.aliceApp.ID, WebhookID: hook.ID, Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %v %v", ds, err)
	}
	alice, bob := f.login(t, f.alice), f.login(t, f.bob)
	if p := alice.get("/console/webhooks"); !strings.Contains(p.body, "https://receiver.example/hook") {
		t.Errorf("webhooks page:\n%s", p.body)
	}
	if p := bob.get("/console/webhooks"); strings.Contains(p.body, "receiver.example") {
		t.Error("bob sees alice's webhook")
	}
	hookPath := appPath(f.aliceApp) + "/webhooks/" + ids.Format(hook.ID)
	if p := alice.get(hookPath); !strings.Contains(p.body, `id="delivery-`+ids.Format(ds[0].ID)+`"`) || !strings.Contains(p.body, "Redeliver") {
		t.Fatalf("delivery log:\n%s", p.body)
	}
	redeliver := hookPath + "/deliveries/" + ids.Format(ds[0].ID) + "/redeliver"
	if p := bob.post(redeliver, nil); p.status != http.StatusNotFound {
		t.Errorf("bob redelivers alice's delivery: %d", p.status)
	}
	if p := bob.get(hookPath); p.status != http.StatusNotFound {
		t.Errorf("bob GET alice's webhook: %d", p.status)
	}
	p := alice.post(redeliver, nil)
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "redelivered=") {
		t.Fatalf("redeliver: %d %q", p.status, p.location)
	}
	after, _ := f.db.WebhookDeliveries(ctx, storage.WebhookDeliveryQuery{AppID: f.aliceApp.ID, WebhookID: hook.ID, Limit: 10})
	if len(after) != 2 || after[0].RedeliveryOf != ds[0].ID {
		t.Errorf("after redeliver: %+v", after)
	}
	if p := alice.get(p.location); !strings.Contains(p.body, "Queued again as delivery "+ids.Format(after[0].ID)) {
		t.Errorf("flash after redeliver:\n%s", p.body)
	}
}
