package oauth

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// maxParamsBody bounds a token endpoint's request body.
const maxParamsBody = 64 << 10

// oauthError is an RFC 6749 section 5.2 error: the shape the platform's
// /2/oauth2 endpoints answer with.
type oauthError struct {
	status      int
	Code        string `json:"error"`
	Description string `json:"error_description"`
	limited     *limited
}

// rateLimited is the 429 of a spent token endpoint limit, in the platform's
// words (its token exchange guide: 429 rate_limited).
func rateLimited(l *limited, what string) *oauthError {
	return &oauthError{status: http.StatusTooManyRequests, Code: "rate_limited", limited: l,
		Description: "Too many requests " + what + "; retry after the Retry-After seconds."}
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func invalidRequest(description string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, Code: "invalid_request", Description: description}
}

func invalidGrant(description string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, Code: "invalid_grant", Description: description}
}

var errInvalidClient = &oauthError{status: http.StatusUnauthorized, Code: "invalid_client", Description: "Client authentication failed: unknown client_id or wrong client_secret."}

// params reads a token endpoint's parameters from the query string and the
// body, form-encoded or JSON (widely used clients send each); a body value
// wins over the query's. A parameter given twice is refused.
func params(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	out, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, invalidRequest("The query string could not be read.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxParamsBody))
	if err != nil {
		return nil, invalidRequest("The request body is too large or could not be read.")
	}
	// Put the body back: a signed token exchange verifies its signature
	// over the form parameters afterwards.
	r.Body = io.NopCloser(bytes.NewReader(body))
	if len(strings.TrimSpace(string(body))) > 0 {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		var fromBody url.Values
		if mt == "application/json" {
			fromBody, err = jsonParams(body)
		} else {
			fromBody, err = url.ParseQuery(string(body))
		}
		if err != nil {
			return nil, invalidRequest("The request body could not be read as form parameters or a JSON object.")
		}
		for k, v := range fromBody {
			out[k] = v
		}
	}
	for k, v := range out {
		if len(v) > 1 {
			return nil, invalidRequest("The parameter " + k + " is repeated.")
		}
	}
	if !storableValues(out) {
		return nil, invalidRequest("A parameter is not valid UTF-8 text.")
	}
	return out, nil
}

// jsonParams reads a JSON object of string (or number, boolean) values.
func jsonParams(body []byte) (url.Values, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	out := url.Values{}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out.Set(k, v)
		case float64, bool:
			out.Set(k, fmt.Sprint(v))
		case nil:
		default:
			return nil, fmt.Errorf("parameter %s is not a string", k)
		}
	}
	return out, nil
}

// basicAuth returns the credentials of an Authorization: Basic header, each
// form-decoded (RFC 6749 section 2.3.1; a client that did not encode them
// is read as sent).
func basicAuth(r *http.Request) (id, secret string, ok bool) {
	id, secret, ok = r.BasicAuth()
	if !ok {
		return "", "", false
	}
	if v, err := url.QueryUnescape(id); err == nil {
		id = v
	}
	if v, err := url.QueryUnescape(secret); err == nil {
		secret = v
	}
	if !storable(id) {
		id = "" // no client has it: refused as missing credentials
	}
	return id, secret, true
}

// clientRequest reads a token endpoint's parameters and authenticates
// its client (both refusals are OAuth 2.0 errors).
// Both are rate limited (limits.go): an address that failed client
// authentication too often is refused before anything is read, and each
// authenticated client's requests are counted.
func (s *Server) clientRequest(w http.ResponseWriter, r *http.Request) (url.Values, storage.App, error) {
	release, l := s.reserveAddress(r)
	if l != nil {
		return nil, storage.App{}, rateLimited(l, "with failed client authentication from this address")
	}
	p, err := params(w, r)
	if err != nil {
		release()
		return nil, storage.App{}, err
	}
	c, app, err := s.client(r, p)
	if oe := (*oauthError)(nil); !errors.As(err, &oe) || oe.Code != "invalid_client" {
		release() // only failed client authentications stay counted
	}
	if err != nil {
		return p, app, err
	}
	if l := s.clientLimited(w, r, "oauth2:"+c.ClientID); l != nil {
		return p, app, rateLimited(l, "for this client")
	}
	return p, app, nil
}

// client authenticates the OAuth 2.0 client of a token request: Basic
// header or client_id (+ client_secret) in the parameters. A confidential
// client needs its secret; a public one is identified by client_id alone.
func (s *Server) client(r *http.Request, p url.Values) (storage.OAuth2Client, storage.App, error) {
	id, secret, basic := basicAuth(r)
	if !basic {
		id, secret = p.Get("client_id"), p.Get("client_secret")
	} else if cid := p.Get("client_id"); cid != "" && cid != id {
		return storage.OAuth2Client{}, storage.App{}, invalidRequest("client_id differs from the client of the Authorization header.")
	}
	if id == "" {
		return storage.OAuth2Client{}, storage.App{}, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client",
			Description: "Missing client credentials: send client_id (and client_secret for a confidential client) or an Authorization: Basic header."}
	}
	c, app, err := s.store.OAuth2ClientByID(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		return c, app, errInvalidClient
	}
	if err != nil {
		return c, app, err
	}
	if c.Type == storage.ClientConfidential {
		if secret == "" || subtle.ConstantTimeCompare(oauth2.HashSecret(secret), c.SecretHash) != 1 {
			return c, app, errInvalidClient
		}
	}
	return c, app, nil
}

// tokenResponse is the token endpoint's answer.
type tokenResponse struct {
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	AccessToken  string `json:"access_token"`
	Scope        string `json:"scope"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// token serves POST /2/oauth2/token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	p, app, err := s.clientRequest(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var issued storage.OAuth2Issued
	switch p.Get("grant_type") {
	case "authorization_code":
		issued, err = s.exchangeCode(r, app, p)
	case "refresh_token":
		issued, err = s.refresh(r, app, p)
	case oauth2.GrantTokenExchange:
		issued, err = s.exchangeOAuth1(r, app, p)
	case "":
		err = invalidRequest("grant_type is missing.")
	default:
		err = &oauthError{status: http.StatusBadRequest, Code: "unsupported_grant_type",
			Description: "grant_type must be authorization_code, refresh_token or " + oauth2.GrantTokenExchange + "."}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tokenResponse{TokenType: "bearer", ExpiresIn: int(oauth2.AccessTTL.Seconds()),
		AccessToken: issued.Access, Scope: oauth2.Join(issued.Scopes), RefreshToken: issued.Refresh})
}

// issue makes fresh tokens for scopes: an access token, and a refresh
// token when offline.access is among them.
func (s *Server) issue(scopes []string) (storage.OAuth2Issued, error) {
	now := s.now()
	access, err := ids.Token(64)
	if err != nil {
		return storage.OAuth2Issued{}, err
	}
	out := storage.OAuth2Issued{Access: access, AccessExpires: now.Add(oauth2.AccessTTL), Scopes: scopes}
	if oauth2.Subset([]string{oauth2.OfflineAccess}, scopes) {
		if out.Refresh, err = ids.Token(64); err != nil {
			return storage.OAuth2Issued{}, err
		}
		out.RefreshExpires = now.Add(oauth2.RefreshTTL)
	}
	return out, nil
}

// exchangeCode redeems an authorization code: the client's own, with the
// same redirect_uri and a code_verifier that answers its challenge.
func (s *Server) exchangeCode(r *http.Request, app storage.App, p url.Values) (storage.OAuth2Issued, error) {
	code, verifier := p.Get("code"), p.Get("code_verifier")
	switch {
	case code == "":
		return storage.OAuth2Issued{}, invalidRequest("code is missing.")
	case verifier == "":
		return storage.OAuth2Issued{}, invalidRequest("code_verifier is missing.")
	}
	var issued storage.OAuth2Issued
	_, err := s.store.ExchangeOAuth2Code(r.Context(), code, s.now(), func(c storage.OAuth2Code) (storage.OAuth2Issued, error) {
		switch {
		case c.AppID != app.ID:
			return issued, invalidGrant("Value passed for the authorization code was invalid.")
		case p.Get("redirect_uri") != c.RedirectURI:
			return issued, invalidGrant("redirect_uri does not match the one of the authorization request.")
		case !oauth2.VerifyPKCE(c.Method, c.Challenge, verifier):
			return issued, invalidGrant("code_verifier does not match the code_challenge of the authorization request.")
		}
		var err error
		issued, err = s.issue(c.Scopes)
		return issued, err
	})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return issued, invalidGrant("Value passed for the authorization code was invalid (unknown or expired).")
	case errors.Is(err, storage.ErrTokenReused):
		s.announceOAuth2(r)
		return issued, invalidGrant("The authorization code was already used; the tokens issued for it are revoked.")
	}
	return issued, err
}

// refresh rotates a refresh token: the new tokens carry the requested
// scopes (by default the old ones; never more).
func (s *Server) refresh(r *http.Request, app storage.App, p url.Values) (storage.OAuth2Issued, error) {
	refresh := p.Get("refresh_token")
	if refresh == "" {
		return storage.OAuth2Issued{}, invalidRequest("refresh_token is missing.")
	}
	var want []string
	if sc := p.Get("scope"); sc != "" {
		var err error
		if want, err = oauth2.ParseScope(sc); err != nil {
			return storage.OAuth2Issued{}, &oauthError{status: http.StatusBadRequest, Code: "invalid_scope", Description: err.Error() + "."}
		}
	}
	var issued storage.OAuth2Issued
	_, err := s.store.RefreshOAuth2(r.Context(), refresh, app.ID, s.now(), func(t storage.OAuth2Token) (storage.OAuth2Issued, error) {
		scopes := t.Scopes
		if want != nil {
			if missing := oauth2.Missing(want, t.Scopes); len(missing) > 0 {
				return issued, &oauthError{status: http.StatusBadRequest, Code: "invalid_scope",
					Description: "The refresh token was not granted " + strings.Join(missing, ", ") + "; a refresh cannot widen a grant."}
			}
			scopes = want
		}
		var err error
		issued, err = s.issue(scopes)
		return issued, err
	})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return issued, invalidRequest("Value passed for the token was invalid.")
	case errors.Is(err, storage.ErrTokenReused):
		s.announceOAuth2(r)
		return issued, invalidRequest("The refresh token was already used; every token of its grant is revoked.")
	}
	return issued, err
}

// revoke serves POST /2/oauth2/revoke (RFC 7009): an unknown token is no
// error, so a client cannot probe tokens.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	p, app, err := s.clientRequest(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	token := p.Get("token")
	if token == "" {
		s.writeError(w, r, invalidRequest("token is missing."))
		return
	}
	if _, err := s.store.RevokeOAuth2Token(r.Context(), token, app.ID, s.now()); err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.writeError(w, r, err)
		return
	}
	s.announceOAuth2(r)
	writeJSON(w, http.StatusOK, map[string]bool{"revoked": true})
}

// announceOAuth2 tells the API replicas to drop cached OAuth 2.0 tokens.
func (s *Server) announceOAuth2(r *http.Request) {
	if s.revoked.OAuth2 == nil {
		return
	}
	if err := s.revoked.OAuth2(r.Context()); err != nil {
		s.log.WarnContext(r.Context(), "announce OAuth 2.0 revocation", "error", err)
	}
}

// writeError answers err: an *oauthError in its shape, anything else 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var oe *oauthError
	if errors.As(err, &oe) {
		if oe.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="aviary"`)
		}
		if oe.limited != nil {
			oe.limited.setRetryAfter(w)
		}
		writeJSON(w, oe.status, oe)
		return
	}
	s.log.ErrorContext(r.Context(), "oauth token endpoint failed", "path", r.URL.Path, "error", err)
	writeJSON(w, http.StatusInternalServerError, &oauthError{Code: "server_error", Description: "The server failed; try again."})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
