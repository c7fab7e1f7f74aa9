package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web/oauth"
)

// exchangeParams are a token exchange request's parameters for an OAuth
// 1.0a token and secret.
func exchangeParams(token, secret string) url.Values {
	return url.Values{"grant_type": {oauth2.GrantTokenExchange}, "subject_token": {token},
		"subject_token_type": {oauth2.TokenTypeOAuth1}, "oauth_token_secret": {secret}}
}

func (f *fixture) oauth1Token(t *testing.T, appID int64, level string) storage.AccessToken {
	t.Helper()
	tok, err := f.db.EnsureAccessToken(context.Background(), appID, f.user.ID, level)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTokenExchange: an OAuth 1.0a token and secret become an OAuth 2.0
// grant of the token's user with the scopes of its access level and a
// refresh token; the refresh rotates; exchanging again revokes the
// previous exchange's grant.
func TestTokenExchange(t *testing.T) {
	f := setup(t)
	tok := f.oauth1Token(t, f.app.ID, storage.AccessReadWrite)
	r := f.post(t, "/2/oauth2/token", exchangeParams(tok.Token, tok.Secret), f.basic(), false)
	if r.status != 200 || r.body["token_type"] != "bearer" || r.body["expires_in"] != float64(7200) {
		t.Fatalf("exchange: %d %v", r.status, r.body)
	}
	if r.body["scope"] != oauth2.Join(oauth2.ExchangeScopes(true)) {
		t.Errorf("scope %v, want %s", r.body["scope"], oauth2.Join(oauth2.ExchangeScopes(true)))
	}
	access, refresh := r.body["access_token"].(string), r.body["refresh_token"].(string)
	if refresh == "" {
		t.Fatal("no refresh token")
	}
	got, err := f.db.OAuth2Token(context.Background(), access)
	if err != nil || got.UserID != f.user.ID || got.AppID != f.app.ID || !got.Live(got.CreatedAt) {
		t.Fatalf("stored token %+v %v", got, err)
	}
	// The refresh token rotates like any other.
	rr := f.post(t, "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, f.basic(), false)
	if rr.status != 200 || rr.body["refresh_token"] == refresh {
		t.Fatalf("refresh: %d %v", rr.status, rr.body)
	}
	// Exchanging again (JSON this time) issues a new pair and revokes the
	// previous one, rotated tokens included; the OAuth 1.0a token stays.
	before := f.revocations.Load()
	again := f.post(t, "/2/oauth2/token", exchangeParams(tok.Token, tok.Secret), f.basic(), true)
	if again.status != 200 || again.body["access_token"] == access {
		t.Fatalf("second exchange: %d %v", again.status, again.body)
	}
	if f.live(t, access) || f.live(t, rr.body["access_token"].(string)) || !f.live(t, again.body["access_token"].(string)) {
		t.Error("the previous exchange's grant is still live, or the new one is not")
	}
	if f.revocations.Load() == before {
		t.Error("the revocation of the previous grant was not announced")
	}
	if _, err := f.db.AccessToken(context.Background(), tok.Token); err != nil {
		t.Errorf("the OAuth 1.0a token was revoked: %v", err)
	}
}

// TestTokenExchangeScopes: a read token gets no write scope; a requested
// subset is granted with offline.access; a wider request is invalid_scope.
func TestTokenExchangeScopes(t *testing.T) {
	f := setup(t)
	read := f.oauth1Token(t, f.public.ID, storage.AccessRead)
	p := exchangeParams(read.Token, read.Secret)
	p.Set("client_id", f.publicClient.ClientID)
	r := f.post(t, "/2/oauth2/token", p, nil, false)
	if sc, _ := r.body["scope"].(string); r.status != 200 || strings.Contains(sc, ".write") || !strings.Contains(sc, "offline.access") {
		t.Fatalf("read token exchange: %d %v", r.status, r.body)
	}
	p.Set("scope", "tweet.read users.read")
	if r := f.post(t, "/2/oauth2/token", p, nil, false); r.status != 200 || r.body["scope"] != "tweet.read users.read offline.access" {
		t.Errorf("subset: %d %v", r.status, r.body)
	}
	p.Set("scope", "tweet.read tweet.write")
	wantError(t, f.post(t, "/2/oauth2/token", p, nil, false), 400, "invalid_scope")
}

// TestTokenExchangeRefusals: a wrong secret, another app's token, a
// revoked or unknown token are one generic invalid_grant; missing or
// wrong parameters are invalid_request; the client must authenticate.
func TestTokenExchangeRefusals(t *testing.T) {
	f := setup(t)
	tok := f.oauth1Token(t, f.app.ID, storage.AccessReadWrite)
	other := f.oauth1Token(t, f.public.ID, storage.AccessReadWrite)
	// A second user's token of the app, revoked.
	u2, err := f.db.CreateUser(context.Background(), "bob", "Bob")
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := f.db.EnsureAccessToken(context.Background(), f.app.ID, u2.ID, storage.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.RevokeAccessToken(context.Background(), revoked.Token); err != nil {
		t.Fatal(err)
	}
	without := func(name string) url.Values {
		p := exchangeParams(tok.Token, tok.Secret)
		p.Del(name)
		return p
	}
	wrongType := exchangeParams(tok.Token, tok.Secret)
	wrongType.Set("subject_token_type", "urn:ietf:params:oauth:token-type:access_token")
	tests := []struct {
		name   string
		params url.Values
		basic  []string
		status int
		code   string
	}{
		{"wrong secret", exchangeParams(tok.Token, tok.Secret+"x"), f.basic(), 400, "invalid_grant"},
		{"another app's token", exchangeParams(other.Token, other.Secret), f.basic(), 400, "invalid_grant"},
		{"revoked token", exchangeParams(revoked.Token, revoked.Secret), f.basic(), 400, "invalid_grant"},
		{"unknown token", exchangeParams("1-nope", tok.Secret), f.basic(), 400, "invalid_grant"},
		{"no subject_token", without("subject_token"), f.basic(), 400, "invalid_request"},
		{"no subject_token_type", without("subject_token_type"), f.basic(), 400, "invalid_request"},
		{"wrong subject_token_type", wrongType, f.basic(), 400, "invalid_request"},
		{"no secret", without("oauth_token_secret"), f.basic(), 400, "invalid_request"},
		{"no client", exchangeParams(tok.Token, tok.Secret), nil, 401, "invalid_client"},
		{"wrong client secret", exchangeParams(tok.Token, tok.Secret), []string{f.client.ClientID, "nope"}, 401, "invalid_client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, f.post(t, "/2/oauth2/token", tt.params, tt.basic, false), tt.status, tt.code)
		})
	}
}

// TestSignedTokenExchange: with an OAuth 1.0a verifier, a request signed
// with the token needs no oauth_token_secret; a refused signature is
// invalid_grant, a subject_token other than the signing token
// invalid_request, and without a verifier a signed request is refused.
func TestSignedTokenExchange(t *testing.T) {
	f := setup(t)
	tok := f.oauth1Token(t, f.app.ID, storage.AccessReadWrite)
	verifier := func(r *http.Request) (storage.AccessToken, error) {
		// The body must still be readable after the endpoint read it.
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != oauth2.GrantTokenExchange {
			return storage.AccessToken{}, fmt.Errorf("%w: body not readable (%v)", oauth.ErrSignatureRefused, err)
		}
		if r.Header.Get("Authorization") != `OAuth oauth_token="`+tok.Token+`", oauth_signature="good"` {
			return storage.AccessToken{}, fmt.Errorf("%w: bad signature", oauth.ErrSignatureRefused)
		}
		return tok, nil
	}
	form := url.Values{"grant_type": {oauth2.GrantTokenExchange}, "subject_token_type": {oauth2.TokenTypeOAuth1},
		"client_id": {f.client.ClientID}, "client_secret": {f.secret}}
	send := func(form url.Values, authz string) limitedReply {
		t.Helper()
		req, _ := http.NewRequest("POST", f.srv.URL+"/2/oauth2/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", authz)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := limitedReply{status: resp.StatusCode}
		_ = json.NewDecoder(resp.Body).Decode(&r.body)
		return r
	}
	good := `OAuth oauth_token="` + tok.Token + `", oauth_signature="good"`
	if r := send(form, good); r.status != 400 || r.body["error"] != "invalid_request" {
		t.Errorf("signed without a verifier: %d %v", r.status, r.body)
	}
	f.server.WithSignedExchange(verifier)
	if r := send(form, good); r.status != 200 || r.body["refresh_token"] == nil {
		t.Fatalf("signed exchange: %d %v", r.status, r.body)
	}
	if r := send(form, `OAuth oauth_token="`+tok.Token+`", oauth_signature="bad"`); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("bad signature: %d %v", r.status, r.body)
	}
	other := url.Values{}
	for k, v := range form {
		other[k] = v
	}
	other.Set("subject_token", "1-another-token")
	if r := send(other, good); r.status != 400 || r.body["error"] != "invalid_request" {
		t.Errorf("subject_token of another token: %d %v", r.status, r.body)
	}
}
