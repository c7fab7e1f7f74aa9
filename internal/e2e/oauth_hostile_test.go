package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
)

// signedForm sends a form POST to path signed with HMAC-SHA1 over base
// (the URL the signature names; "" is the stack's own) with the demo
// app's consumer credentials and token/secret, and the nonce ("" for a
// fresh one); Host and the connection stay the stack's.
func (s *stack) signedForm(t *testing.T, base, path string, form url.Values, token, secret, nonce string) response {
	t.Helper()
	if base == "" {
		base = s.baseURL
	}
	req, err := http.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := auth.SignRequest(req, "", s.creds.ConsumerKey, s.creds.ConsumerSecret, token, secret, time.Now(), nonce); err != nil {
		t.Fatal(err)
	}
	to, _ := url.Parse(s.baseURL)
	req.URL.Scheme, req.URL.Host, req.Host = to.Scheme, to.Host, to.Host
	return s.send(req)
}

func noStore(t *testing.T, what string, r response) {
	t.Helper()
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
		t.Errorf("%s (%d): Cache-Control %q Pragma %q, want no-store and no-cache", what, r.Status, r.Header.Get("Cache-Control"), r.Header.Get("Pragma"))
	}
}

// TestOAuthHostile attacks a production-mode stack (no signature bases)
// as a malicious client or user would: signatures over another host, a
// spoofed Host, replayed nonces, a read-only OAuth 1.0a token that posts
// or is exchanged for write scopes, X-Forwarded-For to dodge the login
// throttle, and token responses that must not be cached.
func TestOAuthHostile(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	cb := url.Values{"oauth_callback": {s.creds.CallbackURL}}

	t.Run("signature over the platform's host is refused when bases are off", func(t *testing.T) {
		if r := s.signedForm(t, "https://api.x.com", "/oauth/request_token", cb, "", "", ""); r.Status != 401 {
			t.Errorf("signed for api.x.com: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("spoofed Host and X-Forwarded-Proto do not move the base URL", func(t *testing.T) {
		req, _ := http.NewRequest("POST", "https://evil.test/oauth/request_token", strings.NewReader(cb.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if err := auth.SignRequest(req, "", s.creds.ConsumerKey, s.creds.ConsumerSecret, "", "", time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		to, _ := url.Parse(s.baseURL)
		req.URL.Scheme, req.URL.Host = to.Scheme, to.Host
		req.Host = "evil.test"
		req.Header.Set("X-Forwarded-Proto", "https")
		if r := s.send(req); r.Status != 401 {
			t.Errorf("signed for the spoofed Host: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("replayed request_token", func(t *testing.T) {
		nonce := fmt.Sprintf("hostile-%d", time.Now().UnixNano())
		r := s.signedForm(t, "", "/oauth/request_token", cb, "", "", nonce)
		if r.Status != 200 {
			t.Fatalf("request_token: %d %s", r.Status, r.Raw)
		}
		noStore(t, "request_token", r)
		if r := s.signedForm(t, "", "/oauth/request_token", cb, "", "", nonce); r.Status != 401 || !strings.Contains(string(r.Raw), `"code":32`) {
			t.Errorf("replay: %d %s", r.Status, r.Raw)
		}
	})

	// A read-only OAuth 1.0a token through the real flow.
	form := url.Values{"oauth_callback": {s.creds.CallbackURL}, "x_auth_access_type": {"read"}}
	r := s.signedForm(t, "", "/oauth/request_token", form, "", "", "")
	rq, _ := url.ParseQuery(string(r.Raw))
	if r.Status != 200 || rq.Get("oauth_token") == "" {
		t.Fatalf("request_token (read): %d %s", r.Status, r.Raw)
	}
	back := s.callbackQuery(t, s.oauth1Pages(t, s.browser(), s.baseURL+"/oauth/authorize?oauth_token="+url.QueryEscape(rq.Get("oauth_token"))))
	r = s.signedForm(t, "", "/oauth/access_token", url.Values{"oauth_verifier": {back.Get("oauth_verifier")}}, rq.Get("oauth_token"), rq.Get("oauth_token_secret"), "")
	at, _ := url.ParseQuery(string(r.Raw))
	if r.Status != 200 || at.Get("oauth_token") == "" {
		t.Fatalf("access_token: %d %s", r.Status, r.Raw)
	}
	noStore(t, "access_token", r)
	token, secret := at.Get("oauth_token"), at.Get("oauth_token_secret")

	t.Run("read-only OAuth 1.0a token posting", func(t *testing.T) {
		req := s.newRequest("POST", "/2/tweets", map[string]string{"text": "read-only tokens cannot post"})
		if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, token, secret, time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		if r := s.send(req); r.Status != 403 {
			t.Errorf("POST /2/tweets with a read token: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("exchange asking for more than the read level", func(t *testing.T) {
		base := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {token},
			"subject_token_type": {"urn:x:params:oauth:token-type:oauth1_token"}, "oauth_token_secret": {secret},
			"client_id": {s.creds.ClientID}, "client_secret": {s.creds.ClientSecret}}
		wide := url.Values{"scope": {"tweet.read tweet.write"}}
		for k, v := range base {
			wide[k] = v
		}
		r := s.postForm(t, "/2/oauth2/token", wide)
		if r.Status != 400 || r.Body["error"] != "invalid_scope" {
			t.Errorf("exchange for tweet.write with a read token: %d %s", r.Status, r.Raw)
		}
		noStore(t, "token error", r)
		r = s.postForm(t, "/2/oauth2/token", base)
		if r.Status != 200 || strings.Contains(fmt.Sprint(r.Body["scope"]), ".write") {
			t.Fatalf("exchange of a read token: %d %s", r.Status, r.Raw)
		}
		noStore(t, "token exchange", r)
		if r := s.do("POST", "/2/tweets", "Bearer "+r.Body["access_token"].(string), map[string]string{"text": "no"}); r.Status != 403 {
			t.Errorf("exchanged read token posting: %d %s", r.Status, r.Raw)
		}
		access, refresh := r.Body["access_token"].(string), r.Body["refresh_token"].(string)
		if r := s.do("GET", "/2/users/me", "Bearer "+access, nil); r.Status != 200 {
			t.Errorf("exchanged read token reading: %d %s", r.Status, r.Raw)
		}
		if r := s.do("GET", "/2/users/me", "Bearer "+refresh, nil); r.Status != 401 {
			t.Errorf("a refresh token used as a bearer token: %d %s", r.Status, r.Raw)
		}
		// Refreshing with a wider scope than the exchange granted.
		r = s.postForm(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh},
			"scope": {"tweet.read tweet.write offline.access"}, "client_id": {s.creds.ClientID}, "client_secret": {s.creds.ClientSecret}})
		if r.Status != 400 || r.Body["error"] != "invalid_scope" {
			t.Errorf("refresh widening the grant: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("app token endpoint", func(t *testing.T) {
		req, _ := http.NewRequest("POST", s.baseURL+"/oauth2/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(s.creds.ConsumerKey, s.creds.ConsumerSecret)
		r := s.send(req)
		if r.Status != 200 {
			t.Fatalf("/oauth2/token: %d %s", r.Status, r.Raw)
		}
		noStore(t, "/oauth2/token", r)
	})
	t.Run("X-Forwarded-For does not reset the address throttle", func(t *testing.T) {
		c := s.browser()
		target := s.baseURL + "/i/oauth2/authorize?" + url.Values{"response_type": {"code"}, "client_id": {s.creds.ClientID},
			"redirect_uri": {s.creds.CallbackURL}, "scope": {"tweet.read"}, "code_challenge": {"challenge"}}.Encode()
		p := browse(t, c, "GET", target, nil)
		m := csrfField.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("login page: %d %s", p.Status, p.body)
		}
		last := 0
		for i := range 21 {
			req, _ := http.NewRequest("POST", target, strings.NewReader(url.Values{"csrf_token": {m[1]}, "action": {"login"},
				"username": {fmt.Sprintf("nobody%d", i)}, "password": {"guess-guess"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
			req.Header.Set("X-Real-IP", fmt.Sprintf("198.51.100.%d", i+1))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			last = resp.StatusCode
		}
		if last != http.StatusTooManyRequests {
			t.Errorf("21st failed login from one peer with 21 forwarded addresses: %d, want 429", last)
		}
	})
}

// postForm POSTs a form to path.
func (s *stack) postForm(t *testing.T, path string, form url.Values) response {
	t.Helper()
	req, _ := http.NewRequest("POST", s.baseURL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.send(req)
}
