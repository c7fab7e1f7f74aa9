package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/aviary-dev/aviary/api/auth"
)

// TestOAuth1TokenExchange exchanges the demo OAuth 1.0a token and secret
// for an OAuth 2.0 grant as the platform's migration guide shows (form
// body, Basic client authentication), calls GET /2/users/me with it,
// refreshes it with golang.org/x/oauth2, and checks that a wrong secret is
// invalid_grant and that the endpoint's rate limit headers are there, then
// exchanges again with an OAuth 1.0a signed request, which revokes the
// first exchange's grant.
func TestOAuth1TokenExchange(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local"})
	exchange := func(secret string) response {
		form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {s.creds.AccessToken},
			"subject_token_type": {"urn:x:params:oauth:token-type:oauth1_token"}, "oauth_token_secret": {secret}}
		req, _ := http.NewRequest("POST", s.baseURL+"/2/oauth2/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(s.creds.ClientID, s.creds.ClientSecret)
		return s.send(req)
	}
	r := exchange(s.creds.AccessTokenSecret)
	var tok struct {
		TokenType    string `json:"token_type"`
		ExpiresIn    int    `json:"expires_in"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
	}
	if err := json.Unmarshal(r.Raw, &tok); r.Status != 200 || err != nil || tok.RefreshToken == "" || tok.ExpiresIn != 7200 ||
		!strings.Contains(" "+tok.Scope+" ", " offline.access ") || !strings.Contains(tok.Scope, "tweet.write") {
		t.Fatalf("exchange: %d %s", r.Status, r.Raw)
	}
	// The token endpoint's rate limit is wired (10000 per client, scaled
	// by the stack's AVIARY_RATE_LIMIT_SCALE=100).
	if r.Header.Get("x-rate-limit-limit") != "1000000" || r.Header.Get("x-rate-limit-remaining") != "999999" {
		t.Errorf("rate limit headers %q %q", r.Header.Get("x-rate-limit-limit"), r.Header.Get("x-rate-limit-remaining"))
	}
	me := s.do("GET", "/2/users/me", "Bearer "+tok.AccessToken, nil)
	if me.Status != 200 || !strings.Contains(string(me.Raw), `"id":"`+s.creds.UserID+`"`) {
		t.Fatalf("users/me with the exchanged token: %d %s", me.Status, me.Raw)
	}

	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.client)
	conf := &oauth2.Config{ClientID: s.creds.ClientID, ClientSecret: s.creds.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: s.baseURL + "/2/oauth2/token", AuthStyle: oauth2.AuthStyleInHeader}}
	fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if err != nil || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == "" || fresh.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v %+v", err, fresh)
	}
	if r := s.do("GET", "/2/users/me", "Bearer "+fresh.AccessToken, nil); r.Status != 200 {
		t.Fatalf("users/me with the refreshed token: %d %s", r.Status, r.Raw)
	}
	// The OAuth 1.0a token keeps working (the exchange is not destructive).
	if r := s.signed(userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}, "GET", "/2/users/me", nil); r.Status != 200 {
		t.Errorf("users/me with the OAuth 1.0a token after the exchange: %d %s", r.Status, r.Raw)
	}

	if r := exchange(s.creds.AccessTokenSecret + "x"); r.Status != 400 || !strings.Contains(string(r.Raw), `"invalid_grant"`) {
		t.Errorf("wrong secret: %d %s", r.Status, r.Raw)
	}

	// Signed with the OAuth 1.0a token instead of sending its secret (the
	// client authenticates in the body): a new grant, and the previous
	// exchange's grant is revoked.
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token_type": {"urn:x:params:oauth:token-type:oauth1_token"}, "client_id": {s.creds.ClientID}, "client_secret": {s.creds.ClientSecret}}
	req, _ := http.NewRequest("POST", s.baseURL+"/2/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, s.creds.AccessToken, s.creds.AccessTokenSecret, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	signed := s.send(req)
	var again struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(signed.Raw, &again); signed.Status != 200 || err != nil || again.AccessToken == "" {
		t.Fatalf("signed exchange: %d %s", signed.Status, signed.Raw)
	}
	if r := s.do("GET", "/2/users/me", "Bearer "+again.AccessToken, nil); r.Status != 200 {
		t.Errorf("users/me with the token of the signed exchange: %d %s", r.Status, r.Raw)
	}
	waitUntilStatus(t, func() int { return s.do("GET", "/2/users/me", "Bearer "+fresh.AccessToken, nil).Status }, 401)
}
