package e2e

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/dghubble/oauth1"
	"github.com/jackc/pgx/v5"
)

// TestOAuth1PagesBrowser drives the OAuth 1.0a pages in headless Chromium,
// a screenshot of each page kept (AVIARY_TEST_ARTIFACTS), with
// github.com/dghubble/oauth1 for the machine steps: authorize (login page
// pre-filled by screen_name, a wrong password, consent, "Authorize app",
// the callback, the access token and GET /2/users/me), "Cancel"
// (denied=<token>, the token spent), the oob PIN page and its "Cancel"
// page, authenticate (a session skips consent; force_login=true asks
// again), an expired and an unknown token, oauth_callback in the query,
// and /oauth/authorize in an iframe. Every page passes the accessibility
// audit, sends the anti-framing headers and shows the plain-HTTP notice
// (checkShots).
func TestOAuth1PagesBrowser(t *testing.T) {
	t.Parallel()
	s, site, callback := newBrowserStack(t)
	runBrowserScenarios(t, s, oauth1BrowserScenarios(t, s, site, callback))
}

// oauth1BrowserFlow is one request token of the demo app, got with
// dghubble/oauth1 before the browser runs.
type oauth1BrowserFlow struct {
	conf          *oauth1.Config
	token, secret string
	authURL       string // the conf's authorization URL (authorize or authenticate)
}

func newOAuth1BrowserFlow(t *testing.T, s *stack, callback, page string) oauth1BrowserFlow {
	t.Helper()
	conf := s.oauth1Config(callback)
	conf.Endpoint.AuthorizeURL = s.baseURL + page
	token, secret, err := conf.RequestToken()
	if err != nil {
		t.Fatalf("request token (%s): %v", callback, err)
	}
	u, err := conf.AuthorizationURL(token)
	if err != nil {
		t.Fatal(err)
	}
	return oauth1BrowserFlow{conf: conf, token: token, secret: secret, authURL: u.String()}
}

// with returns the authorization URL with more query parameters.
func (f oauth1BrowserFlow) with(params url.Values) string {
	return f.authURL + "&" + params.Encode()
}

// callbackQuery is the one query the client's callback got for the flow's
// request token (as oauth_token or denied).
func (f oauth1BrowserFlow) callbackQuery(t *testing.T, site *clientSite) url.Values {
	t.Helper()
	var found []url.Values
	for _, q := range site.queries("/callback") {
		if q.Get("oauth_token") == f.token || q.Get("denied") == f.token {
			found = append(found, q)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the callback got %d requests for token %q, want 1: %v", len(found), f.token, site.queries("/callback"))
	}
	return found[0]
}

// exchange trades the verifier for an access token with dghubble/oauth1
// and asks GET /2/users/me who it belongs to; it returns the token.
func (f oauth1BrowserFlow) exchange(t *testing.T, s *stack, verifier string) string {
	t.Helper()
	at, as, err := f.conf.AccessToken(f.token, f.secret, verifier)
	if err != nil || at == "" || as == "" {
		t.Fatalf("access token with the verifier from the browser: %v", err)
	}
	ctx := context.WithValue(t.Context(), oauth1.HTTPClient, s.client)
	resp, err := f.conf.Client(ctx, oauth1.NewToken(at, as)).Get(s.baseURL + "/2/users/me")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"id":"`+s.creds.UserID+`"`) {
		t.Fatalf("GET /2/users/me with the access token: %d %s", resp.StatusCode, raw)
	}
	return at
}

// exchangeCallback is exchange with the verifier the callback got.
func (f oauth1BrowserFlow) exchangeCallback(t *testing.T, s *stack, site *clientSite) string {
	t.Helper()
	q := f.callbackQuery(t, site)
	if q.Get("oauth_verifier") == "" {
		t.Fatalf("the callback got no oauth_verifier: %v", q)
	}
	return f.exchange(t, s, q.Get("oauth_verifier"))
}

// expire makes the flow's request token expired, as 15 minutes would.
func (f oauth1BrowserFlow) expire(t *testing.T, s *stack) {
	t.Helper()
	s.query(t, func(conn *pgx.Conn) error {
		tag, err := conn.Exec(context.Background(),
			`UPDATE oauth1_request_tokens SET expires_at = now() - interval '1 minute' WHERE token = $1`, f.token)
		if err == nil && tag.RowsAffected() != 1 {
			t.Fatalf("request token %q: %d rows", f.token, tag.RowsAffected())
		}
		return err
	})
}

// checkErrorPage asserts that shot is the pages' 400 error page saying
// want.
func checkErrorPage(t *testing.T, s *stack, page browserShot, want string) {
	t.Helper()
	if page.Status != 400 || !strings.HasPrefix(page.URL, s.baseURL+"/oauth/") ||
		!strings.Contains(page.Text, "This authorization link does not work") || !strings.Contains(page.Text, want) ||
		page.Elements["password"] != (browserElement{}) || page.Elements["allow"] != (browserElement{}) {
		t.Errorf("error page %s: %d at %s, want %q: %q", page.Name, page.Status, page.URL, want, page.Text)
	}
}

// oauth1BrowserScenarios is the OAuth 1.0a table (see browser_test.go for
// adding pages). It gets the request tokens first (and expires one).
func oauth1BrowserScenarios(t *testing.T, s *stack, site *clientSite, callback string) []browserScenario {
	user, password := s.creds.Username, s.creds.Password
	const (
		wrongPassword = "The username and password do not match."
		readWrite     = "Post, repost, like and upload media for you."
		spent         = "This request token has expired or was already used."
	)
	flow := func(callback, page string) oauth1BrowserFlow { return newOAuth1BrowserFlow(t, s, callback, page) }
	approve := flow(callback, "/oauth/authorize")
	deny := flow(callback, "/oauth/authorize")
	pin, pinDeny := flow("oob", "/oauth/authorize"), flow("oob", "/oauth/authorize")
	signIn, again, forced := flow(callback, "/oauth/authenticate"), flow(callback, "/oauth/authenticate"), flow(callback, "/oauth/authenticate")
	expired := flow(callback, "/oauth/authorize")
	expired.expire(t, s)
	withCallback := flow(callback, "/oauth/authorize")
	framed := flow(callback, "/oauth/authorize")

	steps := func(parts ...[]browserStep) []browserStep {
		var all []browserStep
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	consent := []browserStep{expectText("Authorize app"), shot("consent")}

	return []browserScenario{
		{Name: "oauth1-authorize", Start: approve.with(url.Values{"screen_name": {"@" + user}}), Steps: steps(
			[]browserStep{shot("login"), fill("Password", "not the password"), click("Log in"), expectText(wrongPassword), shot("login-error")},
			login(user, password), consent, []browserStep{click("Authorize app"), waitURL(callback + "?"), shot("callback")}),
			check: func(t *testing.T, r browserResult) {
				login := r.shot(t, "login")
				if login.Status != 200 || !strings.Contains(login.Text, "Log in to authorize aviary-demo") || login.Elements["username"].Value != user {
					t.Errorf("login page: %d, username field %+v (screen_name %q): %q", login.Status, login.Elements["username"], user, login.Text)
				}
				if bad := r.shot(t, "login-error"); bad.Status != 401 || !strings.Contains(bad.Text, wrongPassword) {
					t.Errorf("login with a wrong password: %d %q", bad.Status, bad.Text)
				}
				page := r.shot(t, "consent")
				for _, want := range []string{"aviary-demo wants to access your account", "@" + user, readWrite, callback, "Cancel"} {
					if !strings.Contains(page.Text, want) {
						t.Errorf("the consent page does not show %q:\n%s", want, page.Text)
					}
				}
				approve.exchangeCallback(t, s, site)
			}},
		{Name: "oauth1-deny", Start: deny.authURL, Steps: steps(login(user, password), []browserStep{
			click("Cancel"), waitURL(callback + "?"), goTo(deny.authURL), shot("denied-again")}),
			check: func(t *testing.T, r browserResult) {
				q := deny.callbackQuery(t, site)
				if q.Get("denied") != deny.token || q.Get("oauth_verifier") != "" || q.Get("oauth_token") != "" {
					t.Errorf("Cancel: the callback got %v, want denied=%s only", q, deny.token)
				}
				checkErrorPage(t, s, r.shot(t, "denied-again"), spent)
				if _, _, err := deny.conf.AccessToken(deny.token, deny.secret, "0000000"); err == nil {
					t.Error("a denied request token was exchanged")
				}
			}},
		{Name: "oauth1-pin", Start: pin.authURL, Steps: steps(login(user, password), consent,
			[]browserStep{click("Authorize app"), expectText("Enter this PIN"), shot("pin")}),
			check: func(t *testing.T, r browserResult) {
				if page := r.shot(t, "consent"); !strings.Contains(page.Text, "You will be shown a PIN") || strings.Contains(page.Text, "sent back to") {
					t.Errorf("the oob consent page does not announce a PIN:\n%s", page.Text)
				}
				page := r.shot(t, "pin")
				code := page.Elements["pin"]
				if page.Status != 200 || !code.Visible || len(code.Text) != 7 || strings.Trim(code.Text, "0123456789") != "" {
					t.Fatalf("PIN page: %d, pin %+v: %q", page.Status, code, page.Text)
				}
				pin.exchange(t, s, code.Text)
			}},
		{Name: "oauth1-pin-deny", Start: pinDeny.authURL, Steps: steps(login(user, password),
			[]browserStep{click("Cancel"), expectText("You did not authorize aviary-demo"), shot("denied")}),
			check: func(t *testing.T, r browserResult) {
				page := r.shot(t, "denied")
				if page.Status != 200 || !page.Elements["denied"].Visible || page.Elements["pin"] != (browserElement{}) {
					t.Errorf("oob Cancel page: %d %+v", page.Status, page.Elements)
				}
				if _, _, err := pinDeny.conf.AccessToken(pinDeny.token, pinDeny.secret, "0000000"); err == nil {
					t.Error("a denied oob request token was exchanged")
				}
			}},
		{Name: "oauth1-authenticate", Start: signIn.authURL, Steps: steps(login(user, password), []browserStep{
			waitURL(callback + "?"), goTo(again.authURL), expectURL(callback + "?oauth_token=" + again.token),
			goTo(forced.with(url.Values{"force_login": {"true"}})), expectText("Log in to authorize aviary-demo"), shot("force-login")},
			login(user, password), consent, []browserStep{click("Authorize app"), waitURL(callback + "?")}),
			check: func(t *testing.T, r browserResult) {
				if page := r.shot(t, "force-login"); page.Elements["password"].Value != "" || !page.Elements["password"].Visible {
					t.Errorf("force_login: the login form is not shown: %+v", page.Elements)
				}
				first := signIn.exchangeCallback(t, s, site)
				if next := again.exchangeCallback(t, s, site); next != first {
					t.Errorf("sign in again: access token %q, want the same %q", next, first)
				}
				forced.exchangeCallback(t, s, site)
			}},
		{Name: "oauth1-bad-token", Start: expired.authURL, Steps: []browserStep{shot("expired"),
			goTo(s.baseURL + "/oauth/authorize?oauth_token=unknown-token"), shot("unknown")},
			check: func(t *testing.T, r browserResult) {
				checkErrorPage(t, s, r.shot(t, "expired"), spent)
				checkErrorPage(t, s, r.shot(t, "unknown"), "This request token is unknown.")
			}},
		{Name: "oauth1-callback-in-query", Start: withCallback.with(url.Values{"oauth_callback": {site.URL + "/evil"}}),
			Steps: []browserStep{shot("error")}, check: func(t *testing.T, r browserResult) {
				checkErrorPage(t, s, r.shot(t, "error"), "oauth_callback is not accepted here")
				if got := site.queries("/evil"); len(got) > 0 {
					t.Errorf("the browser was sent to the oauth_callback of the query: %v", got)
				}
			}},
		{Name: "oauth1-framed", Start: site.framedURL(framed.authURL), Steps: []browserStep{recordFrames(), shot("framed")},
			check: func(t *testing.T, r browserResult) { checkNotFramed(t, s, site, r) }},
	}
}
