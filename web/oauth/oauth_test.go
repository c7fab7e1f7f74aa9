package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

const (
	callback = "http://client.example/callback"
	password = "correct horse battery"
	verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)

// challenge is verifier's S256 challenge.
func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// fixture is the authorization server on real PostgreSQL and Redis with
// one app (a confidential client with a registered callback), a public
// client app and a user with a password.
type fixture struct {
	srv          *httptest.Server
	db           *postgres.DB
	app, public  storage.App
	client       storage.OAuth2Client
	secret       string
	publicClient storage.OAuth2Client
	user         storage.User
	skew         atomic.Int64 // nanoseconds added to the server clock
	revocations  atomic.Int64
	server       *oauth.Server
	rc           *redis.Client
	prefix       string // the test's Redis key prefix
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	rc, prefix := storagetest.RedisPrefix(t)
	f := &fixture{db: db, rc: rc, prefix: prefix}
	var err error
	if f.app, err = db.CreateApp(ctx, "client-app", ""); err != nil {
		t.Fatal(err)
	}
	if f.client, f.secret, err = db.EnsureOAuth2Client(ctx, f.app.ID); err != nil || f.secret == "" {
		t.Fatalf("client: %v (secret %q)", err, f.secret)
	}
	if f.public, err = db.CreateApp(ctx, "spa-app", ""); err != nil {
		t.Fatal(err)
	}
	if f.publicClient, _, err = db.SetOAuth2Client(ctx, f.public.ID, storage.ClientPublic); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{f.app.ID, f.public.ID} {
		if err := db.AddCallbackURL(ctx, id, callback); err != nil {
			t.Fatal(err)
		}
	}
	if f.user, err = db.CreateUser(ctx, "alice", "Alice"); err != nil {
		t.Fatal(err)
	}
	hash, err := web.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetUserPassword(ctx, f.user.ID, hash); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Now().Add(time.Duration(f.skew.Load())) }
	sessions, err := web.NewSessions([]byte(strings.Repeat("k", 32)), false, now)
	if err != nil {
		t.Fatal(err)
	}
	kit, err := web.NewKit(sessions, web.NewThrottle(rc, prefix+"login:"), nil)
	if err != nil {
		t.Fatal(err)
	}
	count := func(context.Context) error { f.revocations.Add(1); return nil }
	f.server = oauth.New(db, kit, now, oauth.Revocations{OAuth2: count, Bearer: func(context.Context, string) error { return count(nil) }})
	f.srv = httptest.NewServer(f.server.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// browser is a user agent with a cookie jar that does not follow
// redirects (the test follows the ones it expects).
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type page struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, c *http.Client, method, target string, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func csrf(t *testing.T, p page) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token in the page: %s", p.body)
	}
	return m[1]
}

// authorizeURL is an authorization request of client.
func (f *fixture) authorizeURL(clientID string, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback},
		"scope": {"tweet.read users.read offline.access"}, "state": {"xyz-state"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
	for k, v := range extra {
		q[k] = v
	}
	return f.srv.URL + "/i/oauth2/authorize?" + q.Encode()
}

// login logs the browser in through the login page of target.
func (f *fixture) login(t *testing.T, c *http.Client, target string) {
	t.Helper()
	p := do(t, c, "GET", target, nil)
	if p.status != 200 || !strings.Contains(p.body, `name="password"`) {
		t.Fatalf("login page: %d %s", p.status, p.body)
	}
	p = do(t, c, "POST", target, url.Values{"csrf_token": {csrf(t, p)}, "action": {"login"}, "username": {"alice"}, "password": {password}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", p.status, p.body)
	}
}

// consent answers the consent page of target with action and returns the
// redirect's query.
func (f *fixture) consent(t *testing.T, c *http.Client, target, action string) url.Values {
	t.Helper()
	p := do(t, c, "GET", target, nil)
	if p.status != 200 || !strings.Contains(p.body, "client-app") && !strings.Contains(p.body, "spa-app") {
		t.Fatalf("consent page: %d %s", p.status, p.body)
	}
	p = do(t, c, "POST", target, url.Values{"csrf_token": {csrf(t, p)}, "action": {action}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("consent %s: %d %s", action, p.status, p.body)
	}
	loc, err := url.Parse(p.header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), callback+"?") {
		t.Fatalf("redirect to %q, want the callback", p.header.Get("Location"))
	}
	return loc.Query()
}

// code runs the whole browser side and returns an authorization code.
func (f *fixture) code(t *testing.T, clientID string, extra url.Values) string {
	t.Helper()
	c := browser(t)
	target := f.authorizeURL(clientID, extra)
	f.login(t, c, target)
	q := f.consent(t, c, target, "allow")
	if q.Get("state") != "xyz-state" || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	return q.Get("code")
}

type reply struct {
	status int
	body   map[string]any
}

// post sends params to path: form-encoded, or JSON with asJSON; basic
// sets the Basic header to id:secret.
func (f *fixture) post(t *testing.T, path string, params url.Values, basic []string, asJSON bool) reply {
	t.Helper()
	var body string
	ct := "application/x-www-form-urlencoded"
	if asJSON {
		m := map[string]string{}
		for k := range params {
			m[k] = params.Get(k)
		}
		raw, _ := json.Marshal(m)
		body, ct = string(raw), "application/json"
	} else {
		body = params.Encode()
	}
	req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s answered %d %q: not JSON", path, resp.StatusCode, raw)
	}
	return r
}

func (f *fixture) basic() []string { return []string{f.client.ClientID, f.secret} }

func (f *fixture) exchange(t *testing.T, code, v string) reply {
	t.Helper()
	return f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
		"code_verifier": {v}}, f.basic(), false)
}

func wantError(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.status != status || r.body["error"] != code {
		t.Fatalf("got %d %v, want %d error %s", r.status, r.body, status, code)
	}
	if d, _ := r.body["error_description"].(string); d == "" {
		t.Errorf("error without error_description: %v", r.body)
	}
}

func (f *fixture) live(t *testing.T, token string) bool {
	t.Helper()
	tok, err := f.db.OAuth2Token(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Live(time.Now())
}

// TestAuthorizationCodeFlow walks the flow a confidential client drives:
// login, consent, exchange, refresh with rotation, revoke.
func TestAuthorizationCodeFlow(t *testing.T) {
	f := setup(t)
	r := f.exchange(t, f.code(t, f.client.ClientID, nil), verifier)
	if r.status != 200 {
		t.Fatalf("exchange: %d %v", r.status, r.body)
	}
	if r.body["token_type"] != "bearer" || r.body["expires_in"] != float64(7200) || r.body["scope"] != "tweet.read users.read offline.access" {
		t.Errorf("token response %v", r.body)
	}
	access, _ := r.body["access_token"].(string)
	refresh, _ := r.body["refresh_token"].(string)
	if access == "" || refresh == "" || !f.live(t, access) {
		t.Fatalf("token response %v: want a live access token and a refresh token (offline.access)", r.body)
	}

	// Refresh rotates: a new pair, the old refresh token spent.
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, f.basic(), false)
	if r.status != 200 || r.body["refresh_token"] == refresh || r.body["refresh_token"] == nil || r.body["access_token"] == access {
		t.Fatalf("refresh: %d %v", r.status, r.body)
	}
	access2, refresh2 := r.body["access_token"].(string), r.body["refresh_token"].(string)

	// Asking for more than was granted is refused, the token still usable.
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh2}, "scope": {"tweet.read tweet.write offline.access"}}, f.basic(), false)
	wantError(t, r, 400, "invalid_scope")

	// Narrowing works (and drops the refresh token with offline.access).
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh2}, "scope": {"tweet.read"}}, f.basic(), false)
	if r.status != 200 || r.body["scope"] != "tweet.read" || r.body["refresh_token"] != nil {
		t.Fatalf("narrowing refresh: %d %v", r.status, r.body)
	}

	// Reusing a rotated refresh token revokes the whole family.
	before := f.revocations.Load()
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, f.basic(), false)
	wantError(t, r, 400, "invalid_request")
	if f.live(t, access2) || f.live(t, access) {
		t.Error("tokens of the family still live after a refresh token was reused")
	}
	if f.revocations.Load() == before {
		t.Error("the family's revocation was not announced to the API caches")
	}

	// Revoke: a fresh grant's refresh token takes its access token along.
	r = f.exchange(t, f.code(t, f.client.ClientID, nil), verifier)
	access3, refresh3 := r.body["access_token"].(string), r.body["refresh_token"].(string)
	r = f.post(t, "/2/oauth2/revoke", url.Values{"token": {refresh3}}, f.basic(), false)
	if r.status != 200 || r.body["revoked"] != true {
		t.Fatalf("revoke: %d %v", r.status, r.body)
	}
	if f.live(t, access3) {
		t.Error("access token live after its refresh token was revoked")
	}
	// Unknown tokens are no error (RFC 7009), another client's secret is.
	if r = f.post(t, "/2/oauth2/revoke", url.Values{"token": {"nope"}}, f.basic(), false); r.status != 200 {
		t.Errorf("revoke unknown: %d %v", r.status, r.body)
	}
	wantError(t, f.post(t, "/2/oauth2/revoke", url.Values{"token": {access3}}, []string{f.client.ClientID, "wrong"}, false), 401, "invalid_client")
}

// TestPublicClientJSONAndQuery: a public client authenticates by client_id
// alone, with parameters as JSON or in the query string; method names are
// case-insensitive.
func TestPublicClientJSONAndQuery(t *testing.T) {
	f := setup(t)
	code := f.code(t, f.publicClient.ClientID, url.Values{"code_challenge_method": {"s256"}})
	r := f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
		"code_verifier": {verifier}, "client_id": {f.publicClient.ClientID}}, nil, true)
	if r.status != 200 || r.body["refresh_token"] == nil {
		t.Fatalf("JSON exchange: %d %v", r.status, r.body)
	}
	q := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.body["refresh_token"].(string)}, "client_id": {f.publicClient.ClientID}}
	resp, err := http.Post(f.srv.URL+"/2/oauth2/token?"+q.Encode(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("query-string refresh: %d", resp.StatusCode)
	}
	// Plain PKCE.
	code = f.code(t, f.publicClient.ClientID, url.Values{"code_challenge": {"challenge"}, "code_challenge_method": {"plain"}})
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
		"code_verifier": {"challenge"}, "client_id": {f.publicClient.ClientID}}, nil, false)
	if r.status != 200 {
		t.Fatalf("plain exchange: %d %v", r.status, r.body)
	}
	// A confidential client may send its secret in the body instead of
	// the Basic header.
	code = f.code(t, f.client.ClientID, nil)
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
		"code_verifier": {verifier}, "client_id": {f.client.ClientID}, "client_secret": {f.secret}}, nil, false)
	if r.status != 200 {
		t.Fatalf("exchange with the secret in the body: %d %v", r.status, r.body)
	}
	// A confidential client without its secret is refused.
	wantError(t, f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {f.client.ClientID}}, nil, false),
		401, "invalid_client")
}

// TestCodeSecurity: codes are single use (reuse revokes what the first
// exchange issued), bound to the verifier, the redirect_uri and the
// client, and short lived.
func TestCodeSecurity(t *testing.T) {
	f := setup(t)
	t.Run("reused code", func(t *testing.T) {
		code := f.code(t, f.client.ClientID, nil)
		r := f.exchange(t, code, verifier)
		if r.status != 200 {
			t.Fatalf("first exchange: %d %v", r.status, r.body)
		}
		wantError(t, f.exchange(t, code, verifier), 400, "invalid_grant")
		if f.live(t, r.body["access_token"].(string)) {
			t.Error("tokens of a reused code still live")
		}
	})
	t.Run("PKCE mismatch", func(t *testing.T) {
		wantError(t, f.exchange(t, f.code(t, f.client.ClientID, nil), strings.Repeat("a", 43)), 400, "invalid_grant")
	})
	t.Run("wrong redirect_uri", func(t *testing.T) {
		code := f.code(t, f.client.ClientID, nil)
		wantError(t, f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {callback + "/other"}, "code_verifier": {verifier}}, f.basic(), false), 400, "invalid_grant")
	})
	t.Run("another client's code", func(t *testing.T) {
		code := f.code(t, f.publicClient.ClientID, nil)
		wantError(t, f.exchange(t, code, verifier), 400, "invalid_grant")
	})
	t.Run("expired code", func(t *testing.T) {
		code := f.code(t, f.client.ClientID, nil)
		f.skew.Store(int64(31 * time.Second))
		defer f.skew.Store(0)
		wantError(t, f.exchange(t, code, verifier), 400, "invalid_grant")
	})
	t.Run("missing verifier", func(t *testing.T) {
		wantError(t, f.exchange(t, f.code(t, f.client.ClientID, nil), ""), 400, "invalid_request")
	})
}

// TestAuthorizePage: the pages' refusals, redirects and headers.
func TestAuthorizePage(t *testing.T) {
	f := setup(t)
	t.Run("security headers", func(t *testing.T) {
		p := do(t, browser(t), "GET", f.authorizeURL(f.client.ClientID, nil), nil)
		for h, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"} {
			if p.header.Get(h) != want {
				t.Errorf("%s = %q, want %q", h, p.header.Get(h), want)
			}
		}
		if !strings.Contains(p.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("CSP %q", p.header.Get("Content-Security-Policy"))
		}
		cookie := p.header.Get("Set-Cookie")
		if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Lax") {
			t.Errorf("session cookie %q: want HttpOnly and SameSite=Lax", cookie)
		}
	})
	t.Run("unregistered redirect_uri is never redirected to", func(t *testing.T) {
		p := do(t, browser(t), "GET", f.authorizeURL(f.client.ClientID, url.Values{"redirect_uri": {"http://evil.example/cb"}}), nil)
		if p.status != 400 || p.header.Get("Location") != "" {
			t.Errorf("got %d Location %q", p.status, p.header.Get("Location"))
		}
	})
	t.Run("unknown client", func(t *testing.T) {
		if p := do(t, browser(t), "GET", f.authorizeURL("nope", nil), nil); p.status != 400 {
			t.Errorf("got %d", p.status)
		}
	})
	for name, extra := range map[string]url.Values{
		"unknown scope":       {"scope": {"tweet.read everything"}},
		"no code_challenge":   {"code_challenge": {""}},
		"unknown method":      {"code_challenge_method": {"S512"}},
		"token response type": {"response_type": {"token"}},
	} {
		t.Run(name+" goes back to the client", func(t *testing.T) {
			p := do(t, browser(t), "GET", f.authorizeURL(f.client.ClientID, extra), nil)
			loc, _ := url.Parse(p.header.Get("Location"))
			if p.status != http.StatusSeeOther || loc == nil || loc.Query().Get("error") == "" || loc.Query().Get("state") != "xyz-state" {
				t.Errorf("got %d Location %q", p.status, p.header.Get("Location"))
			}
		})
	}
	t.Run("deny", func(t *testing.T) {
		c := browser(t)
		target := f.authorizeURL(f.client.ClientID, nil)
		f.login(t, c, target)
		if q := f.consent(t, c, target, "deny"); q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "xyz-state" {
			t.Errorf("deny redirect %v", q)
		}
	})
	t.Run("CSRF token missing or foreign", func(t *testing.T) {
		c := browser(t)
		target := f.authorizeURL(f.client.ClientID, nil)
		f.login(t, c, target)
		do(t, c, "GET", target, nil)
		if p := do(t, c, "POST", target, url.Values{"action": {"allow"}}); p.status != 403 || p.header.Get("Location") != "" {
			t.Errorf("allow without CSRF token: %d", p.status)
		}
		other := browser(t)
		foreign := csrf(t, do(t, other, "GET", target, nil))
		if p := do(t, c, "POST", target, url.Values{"action": {"allow"}, "csrf_token": {foreign}}); p.status != 403 {
			t.Errorf("allow with another session's token: %d", p.status)
		}
		if p := do(t, browser(t), "POST", target, url.Values{"action": {"login"}, "username": {"alice"}, "password": {password}}); p.status != 403 {
			t.Errorf("login without CSRF token: %d", p.status)
		}
	})
	t.Run("forged session cookie is ignored", func(t *testing.T) {
		c := browser(t)
		target := f.authorizeURL(f.client.ClientID, nil)
		u, _ := url.Parse(f.srv.URL)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: web.SessionCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(`{"id":"x","uid":1,"exp":9999999999}`)) + ".AAAA"}})
		if p := do(t, c, "GET", target, nil); !strings.Contains(p.body, `name="password"`) {
			t.Errorf("a forged session skipped the login page")
		}
	})
}

// TestLoginThrottle: failed logins are limited per user name.
func TestLoginThrottle(t *testing.T) {
	f := setup(t)
	c := browser(t)
	target := f.authorizeURL(f.client.ClientID, nil)
	token := csrf(t, do(t, c, "GET", target, nil))
	try := func(pw string) int {
		return do(t, c, "POST", target, url.Values{"csrf_token": {token}, "action": {"login"}, "username": {"Alice"}, "password": {pw}}).status
	}
	for i := range web.LoginFailuresPerUser {
		if got := try("wrong"); got != 401 {
			t.Fatalf("failure %d: %d, want 401", i+1, got)
		}
	}
	if got := try(password); got != http.StatusTooManyRequests {
		t.Fatalf("after %d failures the right password got %d, want 429", web.LoginFailuresPerUser, got)
	}
}

// TestAppOnlyToken: client_credentials gives the app's bearer token, the
// same on every call, until it is invalidated.
func TestAppOnlyToken(t *testing.T) {
	f := setup(t)
	creds := []string{f.app.ConsumerKey, f.app.ConsumerSecret}
	grant := url.Values{"grant_type": {"client_credentials"}}
	a := f.post(t, "/oauth2/token", grant, creds, false)
	b := f.post(t, "/oauth2/token", grant, creds, false)
	if a.status != 200 || a.body["token_type"] != "bearer" || a.body["access_token"] == nil || a.body["access_token"] != b.body["access_token"] {
		t.Fatalf("tokens %v and %v: want the same bearer token", a.body, b.body)
	}
	bad := f.post(t, "/oauth2/token", grant, []string{f.app.ConsumerKey, "wrong"}, false)
	if errs, _ := bad.body["errors"].([]any); bad.status != 403 || len(errs) != 1 {
		t.Errorf("wrong secret: %d %v", bad.status, bad.body)
	}
	if r := f.post(t, "/oauth2/token", url.Values{}, creds, false); r.status != 403 {
		t.Errorf("no grant_type: %d %v", r.status, r.body)
	}
	inv := f.post(t, "/oauth2/invalidate_token", url.Values{"access_token": {a.body["access_token"].(string)}}, creds, false)
	if inv.status != 200 || inv.body["access_token"] != a.body["access_token"] {
		t.Fatalf("invalidate: %d %v", inv.status, inv.body)
	}
	c := f.post(t, "/oauth2/token", grant, creds, false)
	if c.status != 200 || c.body["access_token"] == a.body["access_token"] {
		t.Errorf("after invalidation: %v, want a new token", c.body)
	}
	other := []string{f.public.ConsumerKey, f.public.ConsumerSecret}
	if r := f.post(t, "/oauth2/invalidate_token", url.Values{"access_token": {c.body["access_token"].(string)}}, other, false); r.status != 403 {
		t.Errorf("another app invalidated the token: %d", r.status)
	}
}
