package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dghubble/oauth1"
)

// oauth1Config is the demo app as a github.com/dghubble/oauth1 client of s.
func (s *stack) oauth1Config(callback string) *oauth1.Config {
	return &oauth1.Config{ConsumerKey: s.creds.ConsumerKey, ConsumerSecret: s.creds.ConsumerSecret, CallbackURL: callback,
		HTTPClient: s.client, Endpoint: oauth1.Endpoint{RequestTokenURL: s.baseURL + "/oauth/request_token",
			AuthorizeURL: s.baseURL + "/oauth/authorize", AccessTokenURL: s.baseURL + "/oauth/access_token"}}
}

// oauth1Pages logs browser c in on an OAuth 1.0a page (if it shows the
// login form) and approves on the consent page; it returns the last
// answer (the redirect to the callback, or the PIN page). On
// /oauth/authenticate the demo app (sign-in enabled, and the demo user
// holds its bootstrap access token, an earlier approval) sends the
// browser back without a consent page.
func (s *stack) oauth1Pages(t *testing.T, c *http.Client, target string) pageResponse {
	t.Helper()
	token := func(p pageResponse) string {
		m := csrfField.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no CSRF token in %d %s", p.Status, p.body)
		}
		return m[1]
	}
	p := browse(t, c, "GET", target, nil)
	if strings.Contains(p.body, `type="password"`) {
		if !strings.Contains(p.body, `id="dev-notice"`) && strings.HasPrefix(s.baseURL, "http://") {
			t.Errorf("plain-HTTP page without the development notice: %s", p.body)
		}
		p = browse(t, c, "POST", target, url.Values{"csrf_token": {token(p)}, "action": {"login"}, "username": {s.creds.Username}, "password": {s.creds.Password}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("login: %d %s", p.Status, p.body)
		}
		p = browse(t, c, "GET", target, nil)
		if p.Status == http.StatusSeeOther && strings.Contains(target, "/oauth/authenticate?") {
			return p // sign in with: an app the user approved before, no consent page
		}
	}
	if p.Status != 200 || !strings.Contains(p.body, `id="allow"`) {
		t.Fatalf("consent page: %d %s", p.Status, p.body)
	}
	return browse(t, c, "POST", target, url.Values{"csrf_token": {token(p)}, "action": {"allow"}})
}

// callbackQuery is the query of a redirect to the demo callback.
func (s *stack) callbackQuery(t *testing.T, p pageResponse) url.Values {
	t.Helper()
	loc, err := url.Parse(p.header.Get("Location"))
	if p.Status != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), s.creds.CallbackURL+"?") {
		t.Fatalf("want a redirect to the callback: %d Location %q %s", p.Status, p.header.Get("Location"), p.body)
	}
	return loc.Query()
}

// TestOAuth1GoClient runs the three-legged flow with
// github.com/dghubble/oauth1: request token, the authorize pages in a
// browser, access token, GET /2/users/me with it; a reused verifier and an
// unregistered callback are refused; authenticate skips consent for the
// demo app (sign-in enabled by bootstrap) once approved; invalidate_token
// revokes the token at once on the API.
func TestOAuth1GoClient(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	conf := s.oauth1Config(s.creds.CallbackURL)
	ctx := context.WithValue(context.Background(), oauth1.HTTPClient, s.client)

	rt, rs, err := conf.RequestToken()
	if err != nil {
		t.Fatalf("request token: %v", err)
	}
	authURL, err := conf.AuthorizationURL(rt)
	if err != nil {
		t.Fatal(err)
	}
	browser := s.browser()
	q := s.callbackQuery(t, s.oauth1Pages(t, browser, authURL.String()))
	cb, _ := http.NewRequest("GET", s.creds.CallbackURL+"?"+q.Encode(), nil)
	gotToken, verifier, err := oauth1.ParseAuthorizationCallback(cb)
	if err != nil || gotToken != rt {
		t.Fatalf("callback: %v (token %q, want %q)", err, gotToken, rt)
	}
	at, as, err := conf.AccessToken(rt, rs, verifier)
	if err != nil || at == "" || as == "" {
		t.Fatalf("access token: %v", err)
	}
	api := conf.Client(ctx, oauth1.NewToken(at, as))
	me := func() (int, string) {
		resp, err := api.Get(s.baseURL + "/2/users/me")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, body := me(); status != 200 || !strings.Contains(body, `"id":"`+s.creds.UserID+`"`) {
		t.Fatalf("users/me: %d %s", status, body)
	}
	if _, _, err := conf.AccessToken(rt, rs, verifier); err == nil {
		t.Error("a reused verifier was accepted")
	}
	if _, _, err := s.oauth1Config("http://unregistered.example/cb").RequestToken(); err == nil || !strings.Contains(err.Error(), `"code":415`) {
		t.Errorf("an unregistered callback: %v, want 403 code 415", err)
	}

	// Sign in with: the same browser is sent back at once by authenticate,
	// and the app gets the same access token.
	auth := *conf
	auth.Endpoint.AuthorizeURL = s.baseURL + "/oauth/authenticate"
	rt2, rs2, err := auth.RequestToken()
	if err != nil {
		t.Fatal(err)
	}
	authURL, _ = auth.AuthorizationURL(rt2)
	q = s.callbackQuery(t, browse(t, browser, "GET", authURL.String(), nil))
	if at2, _, err := auth.AccessToken(rt2, rs2, q.Get("oauth_verifier")); err != nil || at2 != at {
		t.Errorf("sign in again: %v (token %q, want %q)", err, at2, at)
	}

	// invalidate_token: the app revokes the token; the API refuses it.
	resp, err := api.Post(s.baseURL+"/1.1/oauth/invalidate_token.json", "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"access_token":"`+at+`"`) {
		t.Fatalf("invalidate_token: %d %s", resp.StatusCode, raw)
	}
	waitUntilStatus(t, func() int { status, _ := me(); return status }, 401)
}

var pinField = regexp.MustCompile(`id="pin">(\d+)<`)

// TestOAuth1PIN: the out-of-band flow (oob, registered for the demo app):
// the page shows a PIN, which is the verifier.
func TestOAuth1PIN(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	conf := s.oauth1Config("oob")
	rt, rs, err := conf.RequestToken()
	if err != nil {
		t.Fatalf("request token: %v", err)
	}
	authURL, _ := conf.AuthorizationURL(rt)
	p := s.oauth1Pages(t, s.browser(), authURL.String())
	m := pinField.FindStringSubmatch(p.body)
	if p.Status != 200 || m == nil {
		t.Fatalf("PIN page: %d %s", p.Status, p.body)
	}
	at, as, err := conf.AccessToken(rt, rs, m[1])
	if err != nil || at == "" || as == "" {
		t.Fatalf("access token with the PIN: %v", err)
	}
	ctx := context.WithValue(context.Background(), oauth1.HTTPClient, s.client)
	resp, err := conf.Client(ctx, oauth1.NewToken(at, as)).Get(s.baseURL + "/2/users/me")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("users/me with the PIN's token: %d", resp.StatusCode)
	}
}

// TestOAuth1RequiresHTTPS: without AVIARY_OAUTH_INSECURE_HTTP a plain-HTTP
// server refuses the flow (403 code 92 for the client, an error page for
// the browser), as the platform requires HTTPS for every step.
func TestOAuth1RequiresHTTPS(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", env: []string{"AVIARY_OAUTH_INSECURE_HTTP=false"}})
	_, _, err := s.oauth1Config(s.creds.CallbackURL).RequestToken()
	if err == nil || !strings.Contains(err.Error(), "invalid status 403") || !strings.Contains(err.Error(), `"code":92`) {
		t.Errorf("request_token over plain HTTP: %v", err)
	}
	if p := browse(t, s.browser(), "GET", s.baseURL+"/oauth/authorize?oauth_token=x", nil); p.Status != 403 || strings.Contains(p.body, `type="password"`) {
		t.Errorf("authorize page over plain HTTP: %d %s", p.Status, p.body)
	}
}
