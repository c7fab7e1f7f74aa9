package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// browser is a user agent for the consent pages: a cookie jar, s's
// transport (TLS stacks), redirects left to the caller.
func (s *stack) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return &http.Client{Transport: s.client.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// pageResponse is one answer of the web tier.
type pageResponse struct {
	Status int
	header http.Header
	body   string
}

func browse(t *testing.T, c *http.Client, method, target string, form url.Values) pageResponse {
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
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return pageResponse{Status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

// authorizeInBrowser does what a person does with an authorization URL:
// log in as the demo user (the password bootstrap printed), approve on the
// consent page, and returns the query of the redirect to the callback.
func (s *stack) authorizeInBrowser(t *testing.T, authURL string) url.Values {
	t.Helper()
	c := s.browser()
	p := browse(t, c, "GET", authURL, nil)
	if p.Status != 200 || !strings.Contains(p.body, `type="password"`) {
		t.Fatalf("login page: %d %s", p.Status, p.body)
	}
	if p.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(p.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("login page may be framed: %v", p.header)
	}
	token := func(p pageResponse) string {
		m := csrfField.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no CSRF token in %s", p.body)
		}
		return m[1]
	}
	// Without the CSRF token the form is refused.
	if r := browse(t, c, "POST", authURL, url.Values{"action": {"login"}, "username": {s.creds.Username}, "password": {s.creds.Password}}); r.Status != 403 {
		t.Errorf("login without CSRF token: %d", r.Status)
	}
	p = browse(t, c, "POST", authURL, url.Values{"csrf_token": {token(p)}, "action": {"login"}, "username": {s.creds.Username}, "password": {s.creds.Password}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", p.Status, p.body)
	}
	p = browse(t, c, "GET", authURL, nil)
	if p.Status != 200 || !strings.Contains(p.body, `value="allow"`) {
		t.Fatalf("consent page: %d %s", p.Status, p.body)
	}
	p = browse(t, c, "POST", authURL, url.Values{"csrf_token": {token(p)}, "action": {"allow"}})
	loc, err := url.Parse(p.header.Get("Location"))
	if p.Status != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), s.creds.CallbackURL+"?") {
		t.Fatalf("consent: %d Location %q", p.Status, p.header.Get("Location"))
	}
	return loc.Query()
}

// TestOAuth2GoClient runs the authorization code flow with PKCE as a Go
// program does with golang.org/x/oauth2: AuthCodeURL with an S256
// verifier, the pages in a browser, Exchange, calls with the token,
// refresh rotation (a replayed refresh token revokes the grant), a token
// without tweet.write refused on POST /2/tweets, and revocation.
func TestOAuth2GoClient(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	if s.creds.ClientID == "" || s.creds.ClientSecret == "" || s.creds.Password == "" || s.creds.CallbackURL == "" {
		t.Fatalf("bootstrap printed no OAuth 2.0 credentials: %+v", s.creds)
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.client)
	conf := func(scopes ...string) *oauth2.Config {
		return &oauth2.Config{ClientID: s.creds.ClientID, ClientSecret: s.creds.ClientSecret, RedirectURL: s.creds.CallbackURL, Scopes: scopes,
			Endpoint: oauth2.Endpoint{AuthURL: s.baseURL + "/i/oauth2/authorize", TokenURL: s.baseURL + "/2/oauth2/token", AuthStyle: oauth2.AuthStyleInHeader}}
	}
	grant := func(c *oauth2.Config) *oauth2.Token {
		t.Helper()
		verifier := oauth2.GenerateVerifier()
		q := s.authorizeInBrowser(t, c.AuthCodeURL("state-123", oauth2.S256ChallengeOption(verifier)))
		if q.Get("state") != "state-123" {
			t.Fatalf("state %q", q.Get("state"))
		}
		tok, err := c.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		return tok
	}
	call := func(tok *oauth2.Token, method, path string, body any) response {
		return s.do(method, path, "Bearer "+tok.AccessToken, body)
	}

	full := conf("tweet.read", "tweet.write", "users.read", "offline.access")
	tok := grant(full)
	if tok.RefreshToken == "" || tok.Expiry.Before(time.Now().Add(119*time.Minute)) || tok.Extra("scope") != "tweet.read tweet.write users.read offline.access" {
		t.Fatalf("token %+v scope %v", tok, tok.Extra("scope"))
	}
	me := call(tok, "GET", "/2/users/me", nil)
	if me.Status != 200 || !strings.Contains(string(me.Raw), `"id":"`+s.creds.UserID+`"`) {
		t.Fatalf("users/me: %d %s", me.Status, me.Raw)
	}
	if r := call(tok, "POST", "/2/tweets", map[string]any{"text": "posted with an OAuth 2.0 user token"}); r.Status != 201 {
		t.Fatalf("POST /2/tweets: %d %s", r.Status, r.Raw)
	}

	// Refresh: the library sees an expired token and rotates.
	expired := &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	fresh, err := full.TokenSource(ctx, expired).Token()
	if err != nil || fresh.RefreshToken == "" || fresh.RefreshToken == tok.RefreshToken || fresh.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: %v %+v", err, fresh)
	}
	if r := call(fresh, "GET", "/2/users/me", nil); r.Status != 200 {
		t.Fatalf("users/me with the refreshed token: %d %s", r.Status, r.Raw)
	}
	// Replaying the spent refresh token revokes the whole grant, at once on
	// the API (the revocation reaches its credential cache over Redis).
	_, err = full.TokenSource(ctx, expired).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response.StatusCode != 400 {
		t.Fatalf("replayed refresh token: %v", err)
	}
	waitUntilStatus(t, func() int { return call(fresh, "GET", "/2/users/me", nil).Status }, 401)

	// A grant without tweet.write reads but cannot post.
	reader := grant(conf("tweet.read", "users.read"))
	if reader.RefreshToken != "" {
		t.Errorf("refresh token without offline.access")
	}
	if r := call(reader, "POST", "/2/tweets", map[string]any{"text": "not allowed"}); r.Status != 403 || !strings.Contains(string(r.Raw), "tweet.write") {
		t.Errorf("POST /2/tweets without tweet.write: %d %s", r.Status, r.Raw)
	}
	if r := call(reader, "GET", "/2/users/me", nil); r.Status != 200 {
		t.Errorf("users/me with the read grant: %d %s", r.Status, r.Raw)
	}

	// Revocation.
	form := url.Values{"token": {reader.AccessToken}}
	req, _ := http.NewRequest("POST", s.baseURL+"/2/oauth2/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(s.creds.ClientID, s.creds.ClientSecret)
	if r := s.send(req); r.Status != 200 || !strings.Contains(string(r.Raw), `"revoked":true`) {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	waitUntilStatus(t, func() int { return call(reader, "GET", "/2/users/me", nil).Status }, 401)

	// App-only: client_credentials answers the bootstrap's bearer token.
	req, _ = http.NewRequest("POST", s.baseURL+"/oauth2/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")
	req.SetBasicAuth(url.QueryEscape(s.creds.ConsumerKey), url.QueryEscape(s.creds.ConsumerSecret))
	r := s.send(req)
	var app struct{ TokenType, AccessToken string }
	_ = json.Unmarshal(r.Raw, &struct {
		TokenType   *string `json:"token_type"`
		AccessToken *string `json:"access_token"`
	}{&app.TokenType, &app.AccessToken})
	if r.Status != 200 || app.TokenType != "bearer" || app.AccessToken != s.creds.BearerToken {
		t.Errorf("client_credentials: %d %s, want the bootstrap bearer token", r.Status, r.Raw)
	}
}

// waitUntilStatus polls f until it answers want (a revocation reaches the
// API's credential cache through Redis pub/sub: at once, but not
// synchronously with the token endpoint's answer).
func waitUntilStatus(t *testing.T, f func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		got := f()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %d, want %d", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
