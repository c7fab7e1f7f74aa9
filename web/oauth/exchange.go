package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
)

// exchangeRefused is the one answer to every OAuth 1.0a token the exchange
// does not accept (unknown, revoked, another app's, a wrong secret): the
// platform's invalid_grant deliberately does not say why.
var exchangeRefused = invalidGrant("The OAuth 1.0a access token and secret were not accepted.")

// exchangeOAuth1 serves the token exchange grant (docs/oauth.md, "Token
// exchange"): an OAuth 1.0a access token of the client's own app, proven
// by its token secret, becomes an OAuth 2.0 grant with the scopes of its
// access level (or the requested subset of them), offline.access always
// included, without a consent page. The grant an earlier exchange of the
// same user made for the app is revoked.
func (s *Server) exchangeOAuth1(r *http.Request, app storage.App, p url.Values) (storage.OAuth2Issued, error) {
	signed, err := s.signedToken(r, p)
	if err != nil {
		return storage.OAuth2Issued{}, err
	}
	token, secret, want, err := exchangeParams(p, signed)
	if err != nil {
		return storage.OAuth2Issued{}, err
	}
	var issued storage.OAuth2Issued
	_, err = s.store.ExchangeOAuth1Token(r.Context(), token, s.now(), func(t storage.AccessToken) (storage.OAuth2Issued, error) {
		proven := signed != "" || subtle.ConstantTimeCompare([]byte(t.Secret), []byte(secret)) == 1
		if t.AppID != app.ID || !proven {
			return issued, exchangeRefused
		}
		scopes, err := exchangeScopes(t, want)
		if err != nil {
			return issued, err
		}
		issued, err = s.issue(scopes)
		return issued, err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return issued, exchangeRefused
	}
	if err == nil {
		s.announceOAuth2(r) // the previous exchange's grant was revoked
	}
	return issued, err
}

// ErrSignatureRefused wraps an SignedExchangeVerifier's refusal of a request's
// signature (as opposed to a failure to check it).
var ErrSignatureRefused = errors.New("oauth: OAuth 1.0a signature refused")

// SignedExchangeVerifier authenticates an OAuth 1.0a user-context request (its
// signature, timestamp and nonce) and returns the access token it was
// signed with; a refusal wraps ErrSignatureRefused. cmd/aviary wires the
// API's authenticator (web does not import api).
type SignedExchangeVerifier func(r *http.Request) (storage.AccessToken, error)

// WithOAuth1 lets the token exchange prove possession of the OAuth 1.0a
// token by the request's signature instead of oauth_token_secret. It
// returns s.
func (s *Server) WithSignedExchange(v SignedExchangeVerifier) *Server {
	s.signedExchange = v
	return s
}

// signedToken is the access token an exchange request is signed with
// (Authorization: OAuth ...), or "" when it is not signed. A signature
// that does not verify is invalid_grant.
func (s *Server) signedToken(r *http.Request, p url.Values) (string, error) {
	scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "OAuth") {
		return "", nil
	}
	if s.signedExchange == nil {
		return "", invalidRequest("OAuth 1.0a signed exchange requests are not served; send oauth_token_secret.")
	}
	t, err := s.signedExchange(r)
	switch {
	case errors.Is(err, ErrSignatureRefused):
		return "", exchangeRefused
	case err != nil:
		return "", err
	case p.Get("subject_token") != "" && p.Get("subject_token") != t.Token:
		return "", invalidRequest("subject_token differs from the oauth_token the request is signed with.")
	}
	return t.Token, nil
}

// exchangeParams reads the exchange's parameters: subject_token (the
// OAuth 1.0a access token; for a signed request, the signing token by
// default), subject_token_type (the platform's OAuth 1.0a token type),
// oauth_token_secret (unless signed) and an optional scope.
func exchangeParams(p url.Values, signed string) (token, secret string, want []string, err error) {
	token, secret = p.Get("subject_token"), p.Get("oauth_token_secret")
	if signed != "" {
		token = signed
	}
	switch typ := p.Get("subject_token_type"); {
	case token == "":
		return "", "", nil, invalidRequest("subject_token (the OAuth 1.0a access token) is missing.")
	case typ == "":
		return "", "", nil, invalidRequest("subject_token_type is missing; send " + oauth2.TokenTypeOAuth1 + ".")
	case typ != oauth2.TokenTypeOAuth1:
		return "", "", nil, invalidRequest("subject_token_type must be " + oauth2.TokenTypeOAuth1 + ".")
	case secret == "" && signed == "":
		return "", "", nil, invalidRequest("oauth_token_secret (the OAuth 1.0a token secret) is missing; send it, or sign the request with the token (OAuth 1.0a).")
	}
	if sc := p.Get("scope"); sc != "" {
		if want, err = oauth2.ParseScope(sc); err != nil {
			return "", "", nil, &oauthError{status: http.StatusBadRequest, Code: "invalid_scope", Description: err.Error() + "."}
		}
	}
	return token, secret, want, nil
}

// exchangeScopes are the scopes an exchange of t grants: those of its
// access level, or the requested subset (a wider request is invalid_scope),
// with offline.access always.
func exchangeScopes(t storage.AccessToken, want []string) ([]string, error) {
	granted := oauth2.ExchangeScopes(t.CanWrite())
	if want == nil {
		return granted, nil
	}
	if missing := oauth2.Missing(want, granted); len(missing) > 0 {
		return nil, &oauthError{status: http.StatusBadRequest, Code: "invalid_scope",
			Description: "The OAuth 1.0a token's access level does not cover " + strings.Join(missing, ", ") + "."}
	}
	var out []string
	for _, s := range granted {
		if s == oauth2.OfflineAccess || oauth2.Subset([]string{s}, want) {
			out = append(out, s)
		}
	}
	return out, nil
}
