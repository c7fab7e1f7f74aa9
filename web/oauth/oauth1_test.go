package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

// plainVerifier stands in for api/auth (web/ may not import it): the
// signature is PLAINTEXT (consumer secret & token secret), nonces are
// remembered. api/auth's TestVerifyConsumer covers HMAC-SHA1 and the e2e
// tests the two together.
type plainVerifier struct {
	db     *postgres.DB
	mu     sync.Mutex
	nonces map[string]bool
}

func (v *plainVerifier) VerifyOAuth1(r *http.Request, secret func(context.Context, storage.App, string) (string, error)) (oauth.OAuth1Request, error) {
	refuse := func(d string) (oauth.OAuth1Request, error) {
		return oauth.OAuth1Request{}, &oauth.SignatureError{Status: http.StatusUnauthorized, Detail: d}
	}
	h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "OAuth ")
	if !ok {
		return refuse("no OAuth header")
	}
	hp := url.Values{}
	for _, pair := range strings.Split(h, ", ") {
		name, quoted, _ := strings.Cut(pair, "=")
		value, _ := url.PathUnescape(strings.Trim(quoted, `"`))
		hp.Set(name, value)
	}
	app, err := v.db.AppByConsumerKey(r.Context(), hp.Get("oauth_consumer_key"))
	if err != nil {
		return refuse("consumer key")
	}
	tokenSecret := ""
	if tok := hp.Get("oauth_token"); tok != "" {
		if secret == nil {
			return refuse("no token taken")
		}
		if tokenSecret, err = secret(r.Context(), app, tok); errors.Is(err, storage.ErrNotFound) {
			return refuse("token")
		} else if err != nil {
			return oauth.OAuth1Request{}, err
		}
	}
	if hp.Get("oauth_signature") != app.ConsumerSecret+"&"+tokenSecret {
		return refuse("signature")
	}
	v.mu.Lock()
	replay := v.nonces[hp.Get("oauth_nonce")]
	v.nonces[hp.Get("oauth_nonce")] = true
	v.mu.Unlock()
	if replay {
		return refuse("nonce replayed")
	}
	all := r.URL.Query()
	_ = r.ParseForm()
	for k, vs := range r.PostForm {
		all[k] = append(all[k], vs...)
	}
	for k, vs := range hp {
		all[k] = append(vs, all[k]...)
	}
	return oauth.OAuth1Request{App: app, Token: hp.Get("oauth_token"), Params: all}, nil
}

type fixture1 struct {
	*fixture
	srv1      *httptest.Server
	nonce     atomic.Int64
	announced atomic.Int64
}

func setup1(t *testing.T, change func(*oauth.OAuth1Config)) *fixture1 {
	t.Helper()
	f := &fixture1{fixture: setup(t)}
	ctx := context.Background()
	for _, cb := range []string{"oob", "myapp://done"} {
		if err := f.db.AddCallbackURL(ctx, f.app.ID, cb); err != nil {
			t.Fatal(err)
		}
	}
	rc, prefix := storagetest.RedisPrefix(t)
	now := func() time.Time { return time.Now().Add(time.Duration(f.skew.Load())) }
	sessions, _ := web.NewSessions([]byte(strings.Repeat("k", 32)), false, now)
	kit, err := web.NewKit(sessions, web.NewThrottle(rc, prefix+"login:"), nil)
	if err != nil {
		t.Fatal(err)
	}
	kit.SetNotice("Development mode, plain HTTP")
	cfg := oauth.OAuth1Config{Store: f.db, Verifier: &plainVerifier{db: f.db, nonces: map[string]bool{}}, AllowHTTP: true,
		AccessTokenChanged: func(context.Context, string) error { f.announced.Add(1); return nil }}
	if change != nil {
		change(&cfg)
		if cfg.AppLimit != nil {
			cfg.AppLimit = web.NewRateLimit(rc, prefix+"limit:", cfg.AppLimit.Limit, time.Minute)
		}
	}
	f.srv1 = httptest.NewServer(oauth.New(f.db, kit, now, oauth.Revocations{}).WithOAuth1(cfg).Handler())
	t.Cleanup(f.srv1.Close)
	return f
}

// call POSTs form to path signed (PLAINTEXT) with the app's consumer
// credentials, token and its secret, and header's extra oauth_* values.
func (f *fixture1) call(t *testing.T, path, token, tokenSecret string, header map[string]string, form url.Values) page {
	t.Helper()
	return f.callNonce(t, path, token, tokenSecret, header, form, "")
}

func (f *fixture1) callNonce(t *testing.T, path, token, tokenSecret string, header map[string]string, form url.Values, nonce string) page {
	t.Helper()
	if nonce == "" {
		nonce = "n" + string(rune('A'+f.nonce.Add(1)%26)) + time.Now().Format("150405.000000000")
	}
	parts := []string{`oauth_consumer_key="` + url.PathEscape(f.app.ConsumerKey) + `"`, `oauth_nonce="` + nonce + `"`,
		`oauth_signature="` + url.QueryEscape(f.app.ConsumerSecret+"&"+tokenSecret) + `"`}
	if token != "" {
		parts = append(parts, `oauth_token="`+token+`"`)
	}
	for k, v := range header {
		parts = append(parts, k+`="`+url.QueryEscape(v)+`"`)
	}
	if form == nil {
		form = url.Values{}
	}
	req, _ := http.NewRequest("POST", f.srv1.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "OAuth "+strings.Join(parts, ", "))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

// v1Code is the first error code of a v1.1 error body.
func v1Code(t *testing.T, p page) int {
	t.Helper()
	var body struct {
		Errors []struct {
			Code int `json:"code"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(p.body), &body); err != nil || len(body.Errors) == 0 {
		t.Fatalf("not a v1.1 error (%d): %s", p.status, p.body)
	}
	return body.Errors[0].Code
}

// requestToken obtains a request token for cb.
func (f *fixture1) requestToken(t *testing.T, cb string, form url.Values) (token, secret string) {
	t.Helper()
	p := f.call(t, "/oauth/request_token", "", "", map[string]string{"oauth_callback": cb}, form)
	q, _ := url.ParseQuery(p.body)
	if p.status != 200 || q.Get("oauth_callback_confirmed") != "true" || q.Get("oauth_token") == "" {
		t.Fatalf("request_token: %d %s", p.status, p.body)
	}
	return q.Get("oauth_token"), q.Get("oauth_token_secret")
}

func TestOAuth1RequestToken(t *testing.T) {
	f := setup1(t, nil)
	tests := []struct {
		name       string
		header     map[string]string
		form       url.Values
		token      string
		nonce      string
		wantStatus int
		wantCode   int
		wantLevel  string
	}{
		{name: "callback missing", wantStatus: 400, wantCode: 417},
		{name: "callback not registered", header: map[string]string{"oauth_callback": "http://evil.example/cb"}, wantStatus: 403, wantCode: 415},
		{name: "callback prefix only", header: map[string]string{"oauth_callback": callback + "/more"}, wantStatus: 403, wantCode: 415},
		{name: "registered, header", header: map[string]string{"oauth_callback": callback}, wantStatus: 200, wantLevel: storage.AccessReadWrite},
		{name: "oob in the body, read", form: url.Values{"oauth_callback": {"oob"}, "x_auth_access_type": {"read"}}, wantStatus: 200, wantLevel: storage.AccessRead},
		{name: "custom scheme, write", header: map[string]string{"oauth_callback": "myapp://done"}, form: url.Values{"x_auth_access_type": {"write"}}, wantStatus: 200, wantLevel: storage.AccessReadWrite},
		{name: "bad access type", header: map[string]string{"oauth_callback": "oob"}, form: url.Values{"x_auth_access_type": {"admin"}}, wantStatus: 400, wantCode: 214},
		{name: "first use of a nonce", header: map[string]string{"oauth_callback": "oob"}, nonce: "same", wantStatus: 200, wantLevel: storage.AccessReadWrite},
		{name: "replayed nonce", header: map[string]string{"oauth_callback": "oob"}, nonce: "same", wantStatus: 401, wantCode: 32},
		{name: "token sent", header: map[string]string{"oauth_callback": "oob"}, token: "x", wantStatus: 401, wantCode: 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.callNonce(t, "/oauth/request_token", tt.token, "", tt.header, tt.form, tt.nonce)
			if p.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", p.status, tt.wantStatus, p.body)
			}
			if tt.wantCode != 0 {
				if got := v1Code(t, p); got != tt.wantCode {
					t.Errorf("code %d, want %d", got, tt.wantCode)
				}
				return
			}
			q, _ := url.ParseQuery(p.body)
			rt, err := f.db.RequestToken(context.Background(), q.Get("oauth_token"))
			if err != nil || q.Get("oauth_callback_confirmed") != "true" || rt.Secret != q.Get("oauth_token_secret") || rt.AccessLevel != tt.wantLevel {
				t.Errorf("%s: stored %+v (%v)", p.body, rt, err)
			}
			if ttl := time.Until(rt.ExpiresAt); ttl < 14*time.Minute || ttl > 16*time.Minute {
				t.Errorf("request token lives %v", ttl)
			}
		})
	}
}

var pinRE = regexp.MustCompile(`id="pin">(\d{7})<`)

// visit GETs an authorize/authenticate page with a logged-in (or not)
// browser.
func (f *fixture1) page(t *testing.T, c *http.Client, path, token string, extra url.Values) (string, page) {
	t.Helper()
	q := url.Values{"oauth_token": {token}}
	for k, v := range extra {
		q[k] = v
	}
	target := f.srv1.URL + path + "?" + q.Encode()
	return target, do(t, c, "GET", target, nil)
}

// authorizeFlow logs a browser in on the authorize page and answers the
// consent page with action; it returns the redirect's query (or the page).
func (f *fixture1) authorizeFlow(t *testing.T, token, action string) (url.Values, page) {
	t.Helper()
	c := browser(t)
	target, _ := f.page(t, c, "/oauth/authorize", token, nil)
	f.login(t, c, target)
	p := do(t, c, "GET", target, nil)
	if p.status != 200 || !strings.Contains(p.body, `id="allow"`) {
		t.Fatalf("consent page: %d %s", p.status, p.body)
	}
	p = do(t, c, "POST", target, url.Values{"csrf_token": {csrf(t, p)}, "action": {action}})
	if p.status != http.StatusSeeOther {
		return nil, p
	}
	loc, _ := url.Parse(p.header.Get("Location"))
	return loc.Query(), p
}

func TestOAuth1ThreeLegged(t *testing.T) {
	f := setup1(t, nil)
	ctx := context.Background()
	exchange := func(token, secret, verifier string, inHeader bool) page {
		if inHeader {
			return f.call(t, "/oauth/access_token", token, secret, map[string]string{"oauth_verifier": verifier}, nil)
		}
		return f.call(t, "/oauth/access_token", token, secret, nil, url.Values{"oauth_verifier": {verifier}})
	}

	// The good path, verifier in the header; the token cannot be used twice.
	token, secret := f.requestToken(t, callback, url.Values{"x_auth_access_type": {"read"}})
	q, _ := f.authorizeFlow(t, token, "allow")
	if q.Get("oauth_token") != token || q.Get("oauth_verifier") == "" {
		t.Fatalf("callback query %v", q)
	}
	p := exchange(token, secret, q.Get("oauth_verifier"), true)
	got, _ := url.ParseQuery(p.body)
	if p.status != 200 || got.Get("screen_name") != "alice" || got.Get("user_id") == "" || got.Get("oauth_token_secret") == "" {
		t.Fatalf("access_token: %d %s", p.status, p.body)
	}
	at, err := f.db.AccessToken(ctx, got.Get("oauth_token"))
	if err != nil || at.AccessLevel != storage.AccessRead || at.Secret != got.Get("oauth_token_secret") {
		t.Errorf("issued %+v (%v), want a read token", at, err)
	}
	if p := exchange(token, secret, q.Get("oauth_verifier"), true); p.status != 401 {
		t.Errorf("reused verifier: %d %s", p.status, p.body)
	}

	// A wrong verifier is refused and spends the token.
	token, secret = f.requestToken(t, callback, nil)
	q, _ = f.authorizeFlow(t, token, "allow")
	if p := exchange(token, secret, "wrong", false); p.status != 401 || v1Code(t, p) != 32 {
		t.Errorf("wrong verifier: %d %s", p.status, p.body)
	}
	if p := exchange(token, secret, q.Get("oauth_verifier"), false); p.status != 401 {
		t.Errorf("right verifier after a wrong one: %d %s", p.status, p.body)
	}
	// Approving write later raises the same token's level and tells the caches.
	token, secret = f.requestToken(t, callback, nil)
	q, _ = f.authorizeFlow(t, token, "allow")
	p = exchange(token, secret, q.Get("oauth_verifier"), false)
	again, _ := url.ParseQuery(p.body)
	if p.status != 200 || again.Get("oauth_token") != at.Token || f.announced.Load() != 1 {
		t.Errorf("second grant: %s, announced %d", p.body, f.announced.Load())
	}

	// Expired: the page refuses it, and so does the exchange.
	token, secret = f.requestToken(t, callback, nil)
	q, _ = f.authorizeFlow(t, token, "allow")
	f.skew.Store(int64(16 * time.Minute))
	if p := exchange(token, secret, q.Get("oauth_verifier"), false); p.status != 401 {
		t.Errorf("expired token exchanged: %d %s", p.status, p.body)
	}
	if _, p := f.page(t, browser(t), "/oauth/authorize", token, nil); p.status != 400 {
		t.Errorf("expired token page: %d", p.status)
	}
	f.skew.Store(0)

	// Cancel: the app hears denied=<token>.
	token, _ = f.requestToken(t, callback, nil)
	if q, _ := f.authorizeFlow(t, token, "deny"); q.Get("denied") != token || q.Get("oauth_verifier") != "" {
		t.Errorf("deny redirect query %v", q)
	}
}

func TestOAuth1PIN(t *testing.T) {
	f := setup1(t, nil)
	token, secret := f.requestToken(t, "oob", nil)
	_, p := f.authorizeFlow(t, token, "allow")
	m := pinRE.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || !strings.Contains(p.body, `id="dev-notice"`) {
		t.Fatalf("PIN page: %d %s", p.status, p.body)
	}
	r := f.call(t, "/oauth/access_token", token, secret, nil, url.Values{"oauth_verifier": {m[1]}})
	if got, _ := url.ParseQuery(r.body); r.status != 200 || got.Get("screen_name") != "alice" {
		t.Errorf("PIN exchange: %d %s", r.status, r.body)
	}
}

func TestOAuth1Pages(t *testing.T) {
	f := setup1(t, nil)
	ctx := context.Background()
	loggedIn := browser(t)
	token, _ := f.requestToken(t, callback, nil)
	target, _ := f.page(t, loggedIn, "/oauth/authorize", token, nil)
	f.login(t, loggedIn, target)
	// alice approved a read-write token earlier.
	if _, _, err := f.db.GrantAccessToken(ctx, f.app.ID, f.user.ID, storage.AccessReadWrite); err != nil {
		t.Fatal(err)
	}
	const (
		login   = "login"
		consent = "consent"
		skip    = "skip"
		refused = "refused"
	)
	tests := []struct {
		name   string
		path   string
		signIn bool
		anon   bool
		extra  url.Values
		want   string
	}{
		{name: "oauth_callback refused", path: "/oauth/authorize", extra: url.Values{"oauth_callback": {callback}}, want: refused},
		{name: "unknown token", path: "/oauth/authorize", extra: url.Values{"oauth_token": {"nope"}}, want: refused},
		{name: "no session", path: "/oauth/authorize", anon: true, want: login},
		{name: "screen_name prefill", path: "/oauth/authorize", anon: true, extra: url.Values{"screen_name": {"bob"}}, want: login},
		{name: "force_login with a session", path: "/oauth/authorize", extra: url.Values{"force_login": {"true"}}, want: login},
		{name: "authorize always asks", path: "/oauth/authorize", signIn: true, want: consent},
		{name: "authenticate without sign-in asks", path: "/oauth/authenticate", want: consent},
		{name: "authenticate with sign-in skips", path: "/oauth/authenticate", signIn: true, want: skip},
		{name: "authenticate with force_login", path: "/oauth/authenticate", signIn: true, extra: url.Values{"force_login": {"true"}}, want: login},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.db.SetAppSignIn(ctx, f.app.ID, tt.signIn); err != nil {
				t.Fatal(err)
			}
			token, _ := f.requestToken(t, callback, nil)
			c := loggedIn
			if tt.anon {
				c = browser(t)
			}
			extra := url.Values{}
			for k, v := range tt.extra {
				extra[k] = v
			}
			if tt.name == "unknown token" {
				token = "nope"
			}
			target, p := f.page(t, c, tt.path, token, extra)
			switch tt.want {
			case refused:
				if p.status != 400 || !strings.Contains(p.body, `role="alert"`) {
					t.Errorf("%d %s", p.status, p.body)
				}
			case login:
				if p.status != 200 || !strings.Contains(p.body, `name="password"`) {
					t.Fatalf("%d %s", p.status, p.body)
				}
				if sn := tt.extra.Get("screen_name"); sn != "" && !strings.Contains(p.body, `value="`+sn+`"`) {
					t.Errorf("screen_name not pre-filled: %s", p.body)
				}
				if tt.extra.Get("force_login") == "true" {
					// After the forced login the consent page follows, never a skip.
					r := do(t, c, "POST", target, url.Values{"csrf_token": {csrf(t, p)}, "action": {"login"}, "username": {"alice"}, "password": {password}})
					if r.status != 200 || !strings.Contains(r.body, `id="allow"`) {
						t.Errorf("after forced login: %d %s", r.status, r.body)
					}
				}
			case consent:
				if p.status != 200 || !strings.Contains(p.body, `id="allow"`) || !strings.Contains(p.body, "client-app") {
					t.Errorf("%d %s", p.status, p.body)
				}
			case skip:
				loc, _ := url.Parse(p.header.Get("Location"))
				if p.status != http.StatusSeeOther || !strings.HasPrefix(loc.String(), callback+"?") || loc.Query().Get("oauth_verifier") == "" {
					t.Errorf("%d %s %s", p.status, p.header.Get("Location"), p.body)
				}
			}
		})
	}
	// A read approval does not cover a write request: consent again.
	if _, _, err := f.db.GrantAccessToken(ctx, f.app.ID, f.user.ID, storage.AccessRead); err != nil {
		t.Fatal(err)
	}
	token, _ = f.requestToken(t, callback, nil)
	if _, p := f.page(t, loggedIn, "/oauth/authenticate", token, nil); p.status != 200 || !strings.Contains(p.body, `id="allow"`) {
		t.Errorf("write over a read approval: %d %s", p.status, p.body)
	}
	// A POST without the CSRF token is refused.
	if p := do(t, loggedIn, "POST", target, url.Values{"action": {"allow"}}); p.status != 403 {
		t.Errorf("POST without CSRF: %d", p.status)
	}
}

func TestOAuth1InvalidateToken(t *testing.T) {
	f := setup1(t, nil)
	at, _, err := f.db.GrantAccessToken(context.Background(), f.app.ID, f.user.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/oauth/invalidate_token", "/1.1/oauth/invalidate_token.json"} {
		p := f.call(t, path, at.Token, at.Secret, nil, nil)
		if path == "/oauth/invalidate_token" {
			var body map[string]string
			if p.status != 200 || json.Unmarshal([]byte(p.body), &body) != nil || body["access_token"] != at.Token || f.announced.Load() != 1 {
				t.Fatalf("invalidate: %d %s (announced %d)", p.status, p.body, f.announced.Load())
			}
			continue
		}
		if p.status != 401 || v1Code(t, p) != 89 {
			t.Errorf("invalidate again: %d %s", p.status, p.body)
		}
	}
	if _, err := f.db.AccessToken(context.Background(), at.Token); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("token still live: %v", err)
	}
}

func TestOAuth1HTTPSAndLimits(t *testing.T) {
	strict := setup1(t, func(c *oauth.OAuth1Config) { c.AllowHTTP = false; c.PublicURL = "http://localhost:8080" })
	if p := strict.call(t, "/oauth/request_token", "", "", map[string]string{"oauth_callback": "oob"}, nil); p.status != 403 || v1Code(t, p) != 92 {
		t.Errorf("plain HTTP request_token: %d %s", p.status, p.body)
	}
	if _, p := strict.page(t, browser(t), "/oauth/authorize", "x", nil); p.status != 403 {
		t.Errorf("plain HTTP page: %d", p.status)
	}
	behindTLS := setup1(t, func(c *oauth.OAuth1Config) { c.AllowHTTP = false; c.PublicURL = "https://aviary.example" })
	behindTLS.requestToken(t, "oob", nil)

	limited := setup1(t, func(c *oauth.OAuth1Config) { c.AppLimit = &web.RateLimit{Limit: 2} })
	limited.requestToken(t, "oob", nil)
	limited.requestToken(t, "oob", nil)
	p := limited.call(t, "/oauth/request_token", "", "", map[string]string{"oauth_callback": "oob"}, nil)
	if p.status != http.StatusTooManyRequests || v1Code(t, p) != 88 || p.header.Get("Retry-After") == "" {
		t.Errorf("over the limit: %d %s", p.status, p.body)
	}
}
