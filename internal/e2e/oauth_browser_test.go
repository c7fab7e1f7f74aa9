package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestOAuth2ConsentPagesBrowser drives the OAuth 2.0 pages in headless
// Chromium as a person does, a screenshot of each page kept
// (AVIARY_TEST_ARTIFACTS): an authorization code + PKCE flow built with
// golang.org/x/oauth2 (login page, a wrong password, consent, "Authorize
// app", the callback, the code exchanged and GET /2/users/me), "Cancel"
// (access_denied), the same flow with JavaScript disabled, an unregistered
// redirect_uri (an error page, never redirected to), and the login page
// inside an iframe (not shown). Every page passes the accessibility audit
// and sends the anti-framing headers (checkShots).
func TestOAuth2ConsentPagesBrowser(t *testing.T) {
	t.Parallel()
	s, site, callback := newBrowserStack(t)
	runBrowserScenarios(t, s, oauth2BrowserScenarios(s, site, callback))
}

// newBrowserStack starts a stack for browser tests (after checking that
// Chromium is there, so no stack starts for nothing) and a client site
// whose /callback the demo app registers.
func newBrowserStack(t *testing.T) (s *stack, site *clientSite, callback string) {
	t.Helper()
	requireBrowser(t)
	s = newStack(t, stackOptions{driver: "local"})
	site = newClientSite(t)
	callback = site.URL + "/callback"
	s.run("admin", "callback", "add", "--app", "aviary-demo", "--callback", callback)
	return s, site, callback
}

// oauth2Flow is one authorization request: its config and PKCE verifier.
type oauth2Flow struct {
	conf     *oauth2.Config
	state    string
	verifier string
}

func newOAuth2Flow(s *stack, redirect, state string) oauth2Flow {
	conf := &oauth2.Config{ClientID: s.creds.ClientID, ClientSecret: s.creds.ClientSecret, RedirectURL: redirect,
		Scopes: []string{"tweet.read", "users.read", "offline.access"},
		Endpoint: oauth2.Endpoint{AuthURL: s.baseURL + "/i/oauth2/authorize", TokenURL: s.baseURL + "/2/oauth2/token",
			AuthStyle: oauth2.AuthStyleInHeader}}
	return oauth2Flow{conf: conf, state: state, verifier: oauth2.GenerateVerifier()}
}

func (f oauth2Flow) authURL() string {
	return f.conf.AuthCodeURL(f.state, oauth2.S256ChallengeOption(f.verifier))
}

// callbackQuery is the one query the client's callback got with the
// flow's state.
func (f oauth2Flow) callbackQuery(t *testing.T, site *clientSite) url.Values {
	t.Helper()
	var found []url.Values
	for _, q := range site.queries("/callback") {
		if q.Get("state") == f.state {
			found = append(found, q)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the callback got %d requests with state %q, want 1: %v", len(found), f.state, site.queries("/callback"))
	}
	return found[0]
}

// exchange trades the code at the callback for tokens with x/oauth2 and
// asks GET /2/users/me who they belong to.
func (f oauth2Flow) exchange(t *testing.T, s *stack, site *clientSite) {
	t.Helper()
	q := f.callbackQuery(t, site)
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, s.client)
	tok, err := f.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.verifier))
	if err != nil {
		t.Fatalf("exchange the code from the browser: %v", err)
	}
	if tok.RefreshToken == "" || tok.Extra("scope") != "tweet.read users.read offline.access" {
		t.Errorf("token: refresh %q, scope %v", tok.RefreshToken, tok.Extra("scope"))
	}
	me := s.do("GET", "/2/users/me", "Bearer "+tok.AccessToken, nil)
	if me.Status != 200 || !strings.Contains(string(me.Raw), `"id":"`+s.creds.UserID+`"`) {
		t.Fatalf("GET /2/users/me: %d %s", me.Status, me.Raw)
	}
}

// oauth2BrowserScenarios is the OAuth 2.0 table (see browser_test.go for
// adding pages).
func oauth2BrowserScenarios(s *stack, site *clientSite, callback string) []browserScenario {
	user, password := s.creds.Username, s.creds.Password
	approve := newOAuth2Flow(s, callback, "approve-state")
	cancel := newOAuth2Flow(s, callback, "cancel-state")
	noJS := newOAuth2Flow(s, callback, "nojs-state")
	unregistered := newOAuth2Flow(s, site.URL+"/elsewhere", "unregistered-state")
	framed := newOAuth2Flow(s, callback, "framed-state")
	const wrongPassword = "The username and password do not match."

	consentSteps := func() []browserStep {
		return []browserStep{expectText("Authorize app"), shot("consent")}
	}
	var (
		approveSteps = []browserStep{shot("login")}
		noJSSteps    = []browserStep{shot("login")}
		cancelSteps  []browserStep
	)
	approveSteps = append(approveSteps, login(user, "not the password")...)
	approveSteps = append(approveSteps, expectText(wrongPassword), shot("login-error"))
	approveSteps = append(approveSteps, login(user, password)...)
	approveSteps = append(approveSteps, consentSteps()...)
	approveSteps = append(approveSteps, click("Authorize app"), waitURL(callback+"?"))
	noJSSteps = append(append(append(noJSSteps, login(user, password)...), consentSteps()...), click("Authorize app"), waitURL(callback+"?"))
	cancelSteps = append(append(cancelSteps, login(user, password)...), click("Cancel"), waitURL(callback+"?"))

	return []browserScenario{
		{Name: "oauth2-approve", Start: approve.authURL(), Steps: approveSteps, check: func(t *testing.T, r browserResult) {
			login := r.shot(t, "login")
			if login.Status != 200 || !strings.Contains(login.Text, "Log in to authorize aviary-demo") {
				t.Errorf("login page: %d %q", login.Status, login.Text)
			}
			if bad := r.shot(t, "login-error"); bad.Status != 401 || !strings.Contains(bad.Text, wrongPassword) {
				t.Errorf("login with a wrong password: %d %q", bad.Status, bad.Text)
			}
			consent := r.shot(t, "consent")
			for _, want := range []string{"aviary-demo wants to access your account", "@" + user, "tweet.read", "users.read", "offline.access", callback, "Cancel"} {
				if !strings.Contains(consent.Text, want) {
					t.Errorf("the consent page does not show %q:\n%s", want, consent.Text)
				}
			}
			approve.exchange(t, s, site)
		}},
		{Name: "oauth2-cancel", Start: cancel.authURL(), Steps: cancelSteps, check: func(t *testing.T, r browserResult) {
			q := cancel.callbackQuery(t, site)
			if q.Get("error") != "access_denied" || q.Get("code") != "" {
				t.Errorf("Cancel: the callback got %v, want error=access_denied", q)
			}
		}},
		{Name: "oauth2-nojs", Start: noJS.authURL(), NoJavaScript: true, Steps: noJSSteps, check: func(t *testing.T, r browserResult) {
			noJS.exchange(t, s, site)
		}},
		{Name: "oauth2-unregistered-redirect", Start: unregistered.authURL(), Steps: []browserStep{shot("error")},
			check: func(t *testing.T, r browserResult) {
				page := r.shot(t, "error")
				if page.Status != 400 || !strings.HasPrefix(page.URL, s.baseURL+"/i/oauth2/authorize?") ||
					!strings.Contains(page.Text, "This authorization link does not work") || !strings.Contains(page.Text, "redirect_uri") {
					t.Errorf("unregistered redirect_uri: %d at %s: %q", page.Status, page.URL, page.Text)
				}
				if got := site.queries("/elsewhere"); len(got) > 0 {
					t.Errorf("the browser was sent to the unregistered redirect_uri: %v", got)
				}
			}},
		{Name: "oauth2-framed", Start: site.framedURL(framed.authURL()),
			Steps: []browserStep{recordFrames(), shot("framed")}, check: func(t *testing.T, r browserResult) {
				checkNotFramed(t, s, site, r)
			}},
	}
}
