package oauth_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

// Attacks a malicious client, user or site would try on the authorization
// server (docs/oauth.md), each against the real server on PostgreSQL and
// Redis.

// parallel runs n copies of send at once and returns their statuses
// (-1: the request failed). send must not call t.Fatal.
func parallel(n int, send func() int) []int {
	out := make([]int, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			out[i] = send()
		}()
	}
	start.Done()
	done.Wait()
	return out
}

func count(statuses []int, want int) int {
	n := 0
	for _, s := range statuses {
		if s == want {
			n++
		}
	}
	return n
}

// rawPost POSTs form with c and returns the status (-1 on a transport
// error); safe from any goroutine.
func rawPost(c *http.Client, target string, form url.Values, basic []string) int {
	req, err := http.NewRequest("POST", target, strings.NewReader(form.Encode()))
	if err != nil {
		return -1
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := c.Do(req)
	if err != nil {
		return -1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestHostileLoginThrottleRace: wrong passwords sent all at once must not
// get more tries than the throttle allows one after the other.
func TestHostileLoginThrottleRace(t *testing.T) {
	f := setup(t)
	c := browser(t)
	target := f.authorizeURL(f.client.ClientID, nil)
	token := csrf(t, do(t, c, "GET", target, nil))
	const tries = 12
	statuses := parallel(tries, func() int {
		return rawPost(c, target, url.Values{"csrf_token": {token}, "action": {"login"}, "username": {"alice"}, "password": {"guess"}}, nil)
	})
	if checked := count(statuses, http.StatusUnauthorized); checked > web.LoginFailuresPerUser {
		t.Errorf("%d concurrent guesses: %d were checked (401), want at most %d; statuses %v", tries, checked, web.LoginFailuresPerUser, statuses)
	}
	if got := count(statuses, http.StatusUnauthorized) + count(statuses, http.StatusTooManyRequests); got != tries {
		t.Errorf("statuses %v: want only 401 and 429", statuses)
	}
	p := do(t, c, "POST", target, url.Values{"csrf_token": {token}, "action": {"login"}, "username": {"alice"}, "password": {password}})
	if p.status != http.StatusTooManyRequests {
		t.Errorf("the right password after the burst: %d, want 429", p.status)
	}
}

// TestHostileLoginThrottleSuccessFreesAddress: a good password does not
// leave a failure charged to the address (the reservation is given back).
func TestHostileLoginThrottleSuccessFreesAddress(t *testing.T) {
	f := setup(t)
	for i := range web.LoginFailuresPerAddress + 2 {
		c := browser(t)
		target := f.authorizeURL(f.client.ClientID, nil)
		p := do(t, c, "GET", target, nil)
		p = do(t, c, "POST", target, url.Values{"csrf_token": {csrf(t, p)}, "action": {"login"}, "username": {"alice"}, "password": {password}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("good login %d: %d, want 303", i+1, p.status)
		}
	}
}

// TestHostileRedirectURITricks: only the registered callback, byte for
// byte, is ever redirected to; every look-alike is an error page.
func TestHostileRedirectURITricks(t *testing.T) {
	f := setup(t)
	for _, uri := range []string{
		callback + "/evil", callback + "evil", callback + "?x=1", callback + "#frag", callback + "/",
		"HTTP://CLIENT.EXAMPLE/callback", "http://client.example/Callback", "http://client.example/%63allback",
		"http://client.example.evil.test/callback", "http://evil.test@client.example/callback",
		"http://client.example@evil.test/callback", "http://client.example:80/callback", "//client.example/callback",
		"http://client.example/callback/../callback", " " + callback, callback + " ", "javascript:alert(1)//" + callback,
	} {
		c := browser(t)
		p := do(t, c, "GET", f.authorizeURL(f.client.ClientID, url.Values{"redirect_uri": {uri}}), nil)
		if p.status != http.StatusBadRequest || p.header.Get("Location") != "" {
			t.Errorf("redirect_uri %q: %d Location %q, want a 400 error page", uri, p.status, p.header.Get("Location"))
		}
		// Nor can a consent form carry it through a POST.
		p = do(t, c, "POST", f.authorizeURL(f.client.ClientID, url.Values{"redirect_uri": {uri}}), url.Values{"action": {"deny"}})
		if p.header.Get("Location") != "" {
			t.Errorf("POST with redirect_uri %q redirected to %q", uri, p.header.Get("Location"))
		}
	}
}

// TestHostileConsentCSRF: the consent form cannot be answered without the
// session's own token, from another session, or by a GET.
func TestHostileConsentCSRF(t *testing.T) {
	f := setup(t)
	victim := browser(t)
	target := f.authorizeURL(f.client.ClientID, nil)
	f.login(t, victim, target)
	attacker := browser(t)
	theirs := csrf(t, do(t, attacker, "GET", target, nil))
	for name, form := range map[string]url.Values{
		"no token":               {"action": {"allow"}},
		"empty token":            {"action": {"allow"}, "csrf_token": {""}},
		"another session's":      {"action": {"allow"}, "csrf_token": {theirs}},
		"token in a second copy": {"action": {"allow"}, "csrf_token": {"x", theirs}},
	} {
		p := do(t, victim, "POST", target, form)
		if p.status != http.StatusForbidden || p.header.Get("Location") != "" {
			t.Errorf("%s: %d Location %q, want 403", name, p.status, p.header.Get("Location"))
		}
	}
	// The token in the query string of a POST is not the form's.
	mine := csrf(t, do(t, victim, "GET", target, nil))
	p := do(t, victim, "POST", target+"&csrf_token="+url.QueryEscape(mine)+"&action=allow", url.Values{})
	if p.header.Get("Location") != "" {
		t.Errorf("a query-string CSRF token was accepted: redirected to %q", p.header.Get("Location"))
	}
	// A GET with the form's fields only shows the page again.
	p = do(t, victim, "GET", target+"&csrf_token="+url.QueryEscape(mine)+"&action=allow", nil)
	if p.header.Get("Location") != "" {
		t.Errorf("a GET approved: redirected to %q", p.header.Get("Location"))
	}
}

// TestHostileCodeRace: one code redeemed twice at once issues at most one
// live grant.
func TestHostileCodeRace(t *testing.T) {
	f := setup(t)
	for range 3 {
		code := f.code(t, f.client.ClientID, nil)
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {verifier}}
		statuses := parallel(4, func() int { return rawPost(http.DefaultClient, f.srv.URL+"/2/oauth2/token", form, f.basic()) })
		if n := count(statuses, http.StatusOK); n > 1 {
			t.Fatalf("one code exchanged %d times at once: %v", n, statuses)
		}
	}
}

// TestHostileRefreshRace: one refresh token rotated twice at once issues
// at most one new pair.
func TestHostileRefreshRace(t *testing.T) {
	f := setup(t)
	r := f.exchange(t, f.code(t, f.client.ClientID, nil), verifier)
	refresh, _ := r.body["refresh_token"].(string)
	if refresh == "" {
		t.Fatalf("exchange: %v", r.body)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}
	statuses := parallel(4, func() int { return rawPost(http.DefaultClient, f.srv.URL+"/2/oauth2/token", form, f.basic()) })
	if n := count(statuses, http.StatusOK); n > 1 {
		t.Fatalf("one refresh token rotated %d times at once: %v", n, statuses)
	}
}

// TestHostileTokenResponseHeaders: token responses, good or bad, are not
// cached (RFC 6749 section 5.1: Cache-Control: no-store, Pragma: no-cache).
func TestHostileTokenResponseHeaders(t *testing.T) {
	f := setup(t)
	code := f.code(t, f.client.ClientID, nil)
	cases := []struct {
		name, path string
		form       url.Values
		basic      []string
	}{
		{"code exchange", "/2/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {verifier}}, f.basic()},
		{"bad grant", "/2/oauth2/token", url.Values{"grant_type": {"password"}}, f.basic()},
		{"bad client", "/2/oauth2/token", url.Values{"grant_type": {"client_credentials"}}, []string{f.client.ClientID, "wrong"}},
		{"app token", "/oauth2/token", url.Values{"grant_type": {"client_credentials"}}, []string{f.app.ConsumerKey, f.app.ConsumerSecret}},
		{"revoke", "/2/oauth2/revoke", url.Values{"token": {"nothing"}}, f.basic()},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("POST", f.srv.URL+tc.path, strings.NewReader(tc.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(tc.basic[0]), url.QueryEscape(tc.basic[1]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Pragma") != "no-cache" {
			t.Errorf("%s: %d Cache-Control %q Pragma %q", tc.name, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("Pragma"))
		}
	}
}

// TestHostileCrossAppTokens: a client cannot redeem, refresh or revoke
// another app's grant.
func TestHostileCrossAppTokens(t *testing.T) {
	f := setup(t)
	code := f.code(t, f.client.ClientID, nil)
	other := url.Values{"client_id": {f.publicClient.ClientID}}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {verifier}}
	for k, v := range other {
		form[k] = v
	}
	wantError(t, f.post(t, "/2/oauth2/token", form, nil, false), 400, "invalid_grant")
	r := f.exchange(t, code, verifier)
	if r.status != 200 {
		t.Fatalf("the rightful client after another's attempt: %d %v", r.status, r.body)
	}
	access, refresh := r.body["access_token"].(string), r.body["refresh_token"].(string)
	wantError(t, f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh},
		"client_id": {f.publicClient.ClientID}}, nil, false), 400, "invalid_request")
	for _, tok := range []string{access, refresh} {
		r = f.post(t, "/2/oauth2/revoke", url.Values{"token": {tok}, "client_id": {f.publicClient.ClientID}}, nil, false)
		if r.status != 200 || !f.live(t, access) {
			t.Fatalf("another app's revoke: %d %v, access live %v", r.status, r.body, f.live(t, access))
		}
	}
	// Nor is a grant usable after the other app tried to spend its refresh token.
	r = f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, f.basic(), false)
	if r.status != 200 {
		t.Fatalf("refresh by its own client: %d %v", r.status, r.body)
	}
}

// TestHostileOAuth1RequestTokenRace: one authorized request token
// exchanged twice at once gives the access token once.
func TestHostileOAuth1RequestTokenRace(t *testing.T) {
	f := setup1(t, nil)
	token, secret := f.requestToken(t, callback, nil)
	q, _ := f.authorizeFlow(t, token, "allow")
	v := q.Get("oauth_verifier")
	if v == "" {
		t.Fatalf("no verifier: %v", q)
	}
	var mu sync.Mutex
	var pages []page
	parallel(4, func() int {
		p := f.call(t, "/oauth/access_token", token, secret, map[string]string{"oauth_verifier": v}, nil)
		mu.Lock()
		pages = append(pages, p)
		mu.Unlock()
		return p.status
	})
	ok := 0
	for _, p := range pages {
		if p.status == 200 {
			ok++
		}
	}
	if ok != 1 {
		t.Fatalf("%d of 4 concurrent access_token calls succeeded, want 1", ok)
	}
}

// TestHostileOAuth1CrossApp: app B cannot exchange or invalidate app A's
// tokens, nor use its request token's authorize page to reach its own
// callback.
func TestHostileOAuth1CrossApp(t *testing.T) {
	f := setup1(t, nil)
	ctx := context.Background()
	token, secret := f.requestToken(t, callback, nil)
	q, _ := f.authorizeFlow(t, token, "allow")
	// App B signs with its own consumer credentials and A's request token.
	appB := f.public
	orig := f.app
	f.app = appB
	p := f.call(t, "/oauth/access_token", token, secret, map[string]string{"oauth_verifier": q.Get("oauth_verifier")}, nil)
	f.app = orig
	if p.status != http.StatusUnauthorized {
		t.Fatalf("app B exchanging app A's request token: %d %s", p.status, p.body)
	}
	p = f.call(t, "/oauth/access_token", token, secret, map[string]string{"oauth_verifier": q.Get("oauth_verifier")}, nil)
	if p.status != 200 {
		t.Fatalf("app A after app B's attempt: %d %s", p.status, p.body)
	}
	at, _ := url.ParseQuery(p.body)
	f.app = appB
	p = f.call(t, "/oauth/invalidate_token", at.Get("oauth_token"), at.Get("oauth_token_secret"), nil, nil)
	f.app = orig
	if p.status != http.StatusUnauthorized {
		t.Fatalf("app B invalidating app A's token: %d %s", p.status, p.body)
	}
	if _, err := f.db.AccessToken(ctx, at.Get("oauth_token")); err != nil {
		t.Fatalf("app A's token after app B's invalidate: %v", err)
	}
}

// TestHostileClientSecretBurst: wrong client secrets sent all at once get
// no more tries than the per-address limit allows one after the other.
func TestHostileClientSecretBurst(t *testing.T) {
	f := setup(t)
	const limit, tries = 3, 12
	f.server.WithLimits(oauth.Limits{Window: web.NewWindow(f.rc, f.prefix+"token:", time.Minute), PerAddress: limit})
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}}
	statuses := parallel(tries, func() int {
		return rawPost(http.DefaultClient, f.srv.URL+"/2/oauth2/token", form, []string{f.client.ClientID, "guess"})
	})
	if checked := count(statuses, http.StatusUnauthorized); checked > limit {
		t.Errorf("%d concurrent wrong secrets: %d were checked (401), want at most %d; statuses %v", tries, checked, limit, statuses)
	}
	// Good credentials from another burst's address still pass once the
	// address is under the limit: successes are not charged to it.
	g := setup(t)
	g.server.WithLimits(oauth.Limits{Window: web.NewWindow(g.rc, g.prefix+"token:", time.Minute), PerAddress: limit})
	for i := range limit + 3 {
		if r := g.send(t, "/2/oauth2/revoke", url.Values{"token": {"nope"}}, g.basic()); r.status != 200 {
			t.Fatalf("good client %d: %d %v", i+1, r.status, r.body)
		}
	}
}

// TestHostileForwardedProto: with plain HTTP refused and a public URL set,
// a client's own X-Forwarded-Proto does not make a plain-HTTP call secure.
func TestHostileForwardedProto(t *testing.T) {
	f := setup1(t, func(c *oauth.OAuth1Config) { c.AllowHTTP, c.PublicURL = false, "http://aviary.example" })
	for _, proto := range []string{"https", "HTTPS", "https, http"} {
		req, _ := http.NewRequest("GET", f.srv1.URL+"/oauth/authorize?oauth_token=x", nil)
		req.Header.Set("X-Forwarded-Proto", proto)
		req.Header.Set("Forwarded", "proto=https")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("X-Forwarded-Proto %q: %d, want 403", proto, resp.StatusCode)
		}
	}
}

// TestHostileOOBRedirectURI: oob is an OAuth 1.0a callback (the PIN flow);
// registered for an app, it is no OAuth 2.0 redirect_uri, which must be an
// absolute URL: a relative one would send the code to a path of Aviary's
// own.
func TestHostileOOBRedirectURI(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	for _, uri := range []string{"oob", "relative/cb", "/i/oauth2/cb"} {
		if err := f.db.AddCallbackURL(ctx, f.app.ID, uri); err != nil {
			t.Fatal(err)
		}
		c := browser(t)
		target := f.authorizeURL(f.client.ClientID, url.Values{"redirect_uri": {uri}})
		p := do(t, c, "GET", target, nil)
		if p.status != http.StatusBadRequest {
			t.Errorf("redirect_uri %q: %d, want a 400 error page", uri, p.status)
			continue
		}
		if loc := p.header.Get("Location"); loc != "" {
			t.Errorf("redirect_uri %q redirected to %q", uri, loc)
		}
	}
}

// TestHostileMalformedBodies: odd bodies, content types and parameter
// spellings get RFC 6749 errors (never a 500, never a token).
func TestHostileMalformedBodies(t *testing.T) {
	f := setup(t)
	code := f.code(t, f.client.ClientID, nil)
	good := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {verifier}}.Encode()
	tests := []struct {
		name, contentType, body, query string
		status                         int
		code                           string
	}{
		{"huge body", "application/x-www-form-urlencoded", "grant_type=x&pad=" + strings.Repeat("a", 70<<10), "", 400, "invalid_request"},
		{"bad escape", "application/x-www-form-urlencoded", "grant_type=%zz", "", 400, "invalid_request"},
		{"JSON array", "application/json", `["grant_type"]`, "", 400, "invalid_request"},
		{"JSON nested", "application/json", `{"grant_type":{"a":1}}`, "", 400, "invalid_request"},
		{"JSON list value", "application/json", `{"grant_type":["authorization_code","refresh_token"]}`, "", 400, "invalid_request"},
		{"JSON truncated", "application/json", `{"grant_type":"authorization_code"`, "", 400, "invalid_request"},
		{"form sent as JSON type", "application/json", good, "", 400, "invalid_request"},
		{"repeated in body", "application/x-www-form-urlencoded", good + "&code=other", "", 400, "invalid_request"},
		{"repeated grant in query", "application/x-www-form-urlencoded", "", "grant_type=a&grant_type=b", 400, "invalid_request"},
		{"NUL in code", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=a%00b&redirect_uri=x&code_verifier=" + verifier, "", 400, "invalid_request"},
		{"invalid UTF-8 code", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=%ff%fe&redirect_uri=x&code_verifier=" + verifier, "", 400, "invalid_request"},
		{"invalid UTF-8 refresh", "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=%ff", "", 400, "invalid_request"},
		{"invalid UTF-8 subject", "application/x-www-form-urlencoded", "grant_type=urn:ietf:params:oauth:grant-type:token-exchange&subject_token=%ff&subject_token_type=urn:x:params:oauth:token-type:oauth1_token&oauth_token_secret=x", "", 400, "invalid_request"},
		{"unknown grant", "text/plain", "grant_type=password&username=alice&password=x", "", 400, "unsupported_grant_type"},
	}
	for _, tt := range tests {
		target := f.srv.URL + "/2/oauth2/token"
		if tt.query != "" {
			target += "?" + tt.query
		}
		req, _ := http.NewRequest("POST", target, strings.NewReader(tt.body))
		req.Header.Set("Content-Type", tt.contentType)
		req.SetBasicAuth(url.QueryEscape(f.client.ClientID), url.QueryEscape(f.secret))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(raw), `"error":"`+tt.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", tt.name, resp.StatusCode, raw, tt.status, tt.code)
		}
	}
	// The code is still good after all that.
	if r := f.exchange(t, code, verifier); r.status != 200 {
		t.Errorf("the code after the malformed requests: %d %v", r.status, r.body)
	}
}

// TestHostileUndecodableText: bytes PostgreSQL cannot store as text
// (invalid UTF-8, NUL) in any parameter that reaches a lookup are the
// client's error, never a 500 (an attacker-made server error, logged at
// ERROR on every request).
func TestHostileUndecodableText(t *testing.T) {
	f := setup1(t, nil)
	bad := "%ff%fe"
	type check struct {
		name, method, path, query, body string
		basic                           []string
	}
	checks := []check{
		{"token client_id", "POST", "/2/oauth2/token", "", "grant_type=refresh_token&refresh_token=x&client_id=" + bad, nil},
		{"token Basic id", "POST", "/2/oauth2/token", "", "grant_type=refresh_token&refresh_token=x", []string{"\xff\xfe", "x"}},
		{"app token Basic key", "POST", "/oauth2/token", "", "grant_type=client_credentials", []string{"\xff\xfe", "x"}},
		{"invalidate access_token", "POST", "/oauth2/invalidate_token", "", "access_token=" + bad, []string{f.app.ConsumerKey, f.app.ConsumerSecret}},
		{"authorize client_id", "GET", "/i/oauth2/authorize", "client_id=" + bad, "", nil},
		{"authorize redirect_uri", "GET", "/i/oauth2/authorize", "client_id=" + url.QueryEscape(f.client.ClientID) + "&redirect_uri=" + bad, "", nil},
		{"oauth1 page token", "GET", "/oauth/authorize", "oauth_token=" + bad, "", nil},
		{"oauth1 page NUL token", "GET", "/oauth/authenticate", "oauth_token=a%00b", "", nil},
	}
	for _, c := range checks {
		srv := f.srv.URL
		if strings.HasPrefix(c.path, "/oauth/") {
			srv = f.srv1.URL
		}
		target := srv + c.path
		if c.query != "" {
			target += "?" + c.query
		}
		req, _ := http.NewRequest(c.method, target, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c.basic != nil {
			req.SetBasicAuth(c.basic[0], c.basic[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, raw)
		}
	}
	// A login with such a user name is a failed login.
	c := browser(t)
	target := f.authorizeURL(f.client.ClientID, nil)
	p := do(t, c, "GET", target, nil)
	p = do(t, c, "POST", target, url.Values{"csrf_token": {csrf(t, p)}, "action": {"login"}, "username": {"al\xffice"}, "password": {"x"}})
	if p.status != http.StatusUnauthorized {
		t.Errorf("login with an undecodable user name: %d", p.status)
	}
	// And an OAuth 1.0a callback so spelled is not registered.
	if p := f.call(t, "/oauth/request_token", "", "", map[string]string{"oauth_callback": "http://x/\xff"}, nil); p.status >= 500 {
		t.Errorf("request_token with an undecodable callback: %d %s", p.status, p.body)
	}
}
