package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

var (
	errCallbackMissing = &v1Error{status: http.StatusBadRequest, code: 417,
		message: "oauth_callback is required on every request_token call: a registered callback URL, or oob for the PIN flow."}
	errCallbackNotApproved = &v1Error{status: http.StatusForbidden, code: 415,
		message: "Callback URL not approved for this client application. Register it with aviary admin callback add (exact match; oob and custom schemes are entries too)."}
	errAccessType = &v1Error{status: http.StatusBadRequest, code: 214, message: "x_auth_access_type must be read or write."}
	errExpired    = &v1Error{status: http.StatusUnauthorized, code: 89, message: "Invalid or expired token."}
	errVerifier   = &v1Error{status: http.StatusUnauthorized, code: 32,
		message: "Could not authenticate you. Invalid or missing oauth_verifier, or the request token was not authorized, was already used or has expired."}
)

// requestToken serves POST /oauth/request_token.
func (s *Server) requestToken(w http.ResponseWriter, r *http.Request) error {
	req, err := s.oauth1.Verifier.VerifyOAuth1(r, nil)
	if err != nil {
		return err
	}
	if err := s.limitApp(w, r, req.App); err != nil {
		return err
	}
	callback := req.Params.Get("oauth_callback")
	if callback == "" {
		return errCallbackMissing
	}
	if CheckCallback(callback) != nil {
		return errCallbackNotApproved // never registered, or stored before the rule
	}
	ok, err := s.oauth1.Store.HasCallbackURL(r.Context(), req.App.ID, callback)
	if err != nil {
		return err
	}
	if !ok {
		return errCallbackNotApproved
	}
	level, ok := accessLevel(req.Params.Get("x_auth_access_type"))
	if !ok {
		return errAccessType
	}
	t := storage.OAuth1RequestToken{AppID: req.App.ID, Callback: callback, AccessLevel: level, ExpiresAt: s.now().Add(RequestTokenTTL)}
	if t.Token, err = ids.Token(32); err != nil {
		return err
	}
	if t.Secret, err = ids.Token(40); err != nil {
		return err
	}
	if err := s.oauth1.Store.CreateRequestToken(r.Context(), t); err != nil {
		return err
	}
	writeForm(w, url.Values{"oauth_token": {t.Token}, "oauth_token_secret": {t.Secret}, "oauth_callback_confirmed": {"true"}})
	return nil
}

// accessLevel maps x_auth_access_type to a level: absent is the app's
// level (read-write), read lowers it.
func accessLevel(v string) (string, bool) {
	switch v {
	case "", "write":
		return storage.AccessReadWrite, true
	case "read":
		return storage.AccessRead, true
	}
	return "", false
}

// requestTokenSecret supplies the secret of app's request token.
func (s *Server) requestTokenSecret(ctx context.Context, app storage.App, token string) (string, error) {
	t, err := s.oauth1.Store.RequestToken(ctx, token)
	if err != nil {
		return "", err
	}
	if t.AppID != app.ID {
		return "", fmt.Errorf("request token of another app: %w", storage.ErrNotFound)
	}
	return t.Secret, nil
}

// accessToken serves POST /oauth/access_token: the request token and its
// verifier for the user's access token.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) error {
	req, err := s.oauth1.Verifier.VerifyOAuth1(r, s.requestTokenSecret)
	if err != nil {
		return err
	}
	if err := s.limitApp(w, r, req.App); err != nil {
		return err
	}
	if req.Token == "" {
		return errExpired
	}
	verifier := req.Params.Get("oauth_verifier")
	if verifier == "" {
		return errVerifier
	}
	rt, err := s.oauth1.Store.ExchangeRequestToken(r.Context(), req.Token, req.App.ID, oauth2.HashSecret(verifier), s.now())
	switch {
	case errors.Is(err, storage.ErrVerifier):
		return errVerifier
	case errors.Is(err, storage.ErrNotFound):
		return errExpired
	case err != nil:
		return err
	}
	user, err := s.store.UserByID(r.Context(), rt.UserID)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if err != nil || !mayLogIn(user) {
		return errExpired
	}
	at, changed, err := s.oauth1.Store.GrantAccessToken(r.Context(), req.App.ID, user.ID, rt.AccessLevel)
	if err != nil {
		return err
	}
	if changed {
		s.announce(r.Context(), at.Token)
	}
	writeForm(w, url.Values{"oauth_token": {at.Token}, "oauth_token_secret": {at.Secret},
		"user_id": {ids.Format(user.ID)}, "screen_name": {user.Username}})
	return nil
}

// announce tells the API's credential caches to forget token.
func (s *Server) announce(ctx context.Context, token string) {
	if s.oauth1.AccessTokenChanged == nil {
		return
	}
	if err := s.oauth1.AccessTokenChanged(ctx, token); err != nil {
		s.log.WarnContext(ctx, "announce access token change", "error", err)
	}
}

// invalidateToken serves POST /oauth/invalidate_token (and the platform's
// /1.1 spelling): the app revokes the access token the call is signed with.
func (s *Server) invalidateToken(w http.ResponseWriter, r *http.Request) error {
	unknown := false
	req, err := s.oauth1.Verifier.VerifyOAuth1(r, func(ctx context.Context, app storage.App, token string) (string, error) {
		t, err := s.oauth1.Store.AccessToken(ctx, token)
		if err == nil && t.AppID != app.ID {
			err = fmt.Errorf("access token of another app: %w", storage.ErrNotFound)
		}
		unknown = errors.Is(err, storage.ErrNotFound)
		return t.Secret, err
	})
	if unknown {
		return errExpired // the platform's answer once a token is invalidated
	}
	if err != nil {
		return err
	}
	if err := s.limitApp(w, r, req.App); err != nil {
		return err
	}
	if req.Token == "" {
		return errExpired
	}
	if err := s.oauth1.Store.RevokeAccessToken(r.Context(), req.Token); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return errExpired
		}
		return err
	}
	s.announce(r.Context(), req.Token)
	writeJSON(w, http.StatusOK, map[string]string{"access_token": req.Token})
	return nil
}

// verifierFor returns a new verifier for a request token: a 7-digit PIN
// for oob (typed by a person), else a long random string.
func verifierFor(callback string) (string, error) {
	if callback == oob {
		n, err := rand.Int(rand.Reader, big.NewInt(10_000_000))
		if err != nil {
			return "", fmt.Errorf("oauth1 PIN: %w", err)
		}
		return fmt.Sprintf("%07d", n.Int64()), nil
	}
	return ids.Token(32)
}

const oob = "oob"
