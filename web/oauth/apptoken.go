package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/aviary-dev/aviary/storage"
)

// v1Error is the error shape of the platform's /oauth2 (v1.1-era)
// endpoints: {"errors":[{"code":..,"message":..,"label":..}]}.
type v1Error struct {
	limited *limited
	status  int
	code    int
	label   string
	message string
}

func (e *v1Error) Error() string { return e.message }

func (e *v1Error) body() map[string]any {
	item := map[string]any{"code": e.code, "message": e.message}
	if e.label != "" {
		item["label"] = e.label
	}
	return map[string]any{"errors": []any{item}}
}

var (
	errAppCredentials = &v1Error{status: http.StatusForbidden, code: 99, label: "authenticity_token_error", message: "Unable to verify your credentials"}
	errGrantType      = &v1Error{status: http.StatusForbidden, code: 170, label: "forbidden_missing_parameter", message: "Missing required parameter: grant_type"}
	errAccessToken    = &v1Error{status: http.StatusForbidden, code: 170, label: "forbidden_missing_parameter", message: "Missing required parameter: access_token"}
)

// app authenticates an app by its consumer key and secret in an
// Authorization: Basic header (each form-encoded, as the platform asks).
func (s *Server) app(r *http.Request) (storage.App, error) {
	key, secret, ok := basicAuth(r)
	if !ok || key == "" {
		return storage.App{}, errAppCredentials
	}
	app, err := s.store.AppByConsumerKey(r.Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return app, errAppCredentials
	}
	if err != nil {
		return app, err
	}
	if subtle.ConstantTimeCompare([]byte(secret), []byte(app.ConsumerSecret)) != 1 {
		return app, errAppCredentials
	}
	return app, nil
}

// limitedApp is app under the token endpoints' rate limits (limits.go): an
// address with too many failed authentications is refused, a failure is
// counted for the address, and each authenticated app's requests are
// counted. A spent limit is 429 with the platform's code 88.
func (s *Server) limitedApp(w http.ResponseWriter, r *http.Request) (storage.App, error) {
	release, l := s.reserveAddress(r)
	if l != nil {
		return storage.App{}, v1RateLimited(l)
	}
	app, err := s.app(r)
	if !errors.Is(err, errAppCredentials) {
		release() // only failed authentications stay counted
	}
	if err != nil {
		return app, err
	}
	if l := s.clientLimited(w, r, "app:"+app.ConsumerKey); l != nil {
		return app, v1RateLimited(l)
	}
	return app, nil
}

func v1RateLimited(l *limited) *v1Error {
	return &v1Error{limited: l, status: http.StatusTooManyRequests, code: 88, message: "Rate limit exceeded"}
}

// appToken serves POST /oauth2/token (grant_type=client_credentials): the
// app's bearer token, the same one on every call until it is invalidated.
func (s *Server) appToken(w http.ResponseWriter, r *http.Request) {
	p, err := params(w, r)
	if err != nil {
		s.writeV1(w, r, errGrantType)
		return
	}
	app, err := s.limitedApp(w, r)
	if err != nil {
		s.writeV1(w, r, err)
		return
	}
	if p.Get("grant_type") != "client_credentials" {
		s.writeV1(w, r, errGrantType)
		return
	}
	t, err := s.store.FirstBearerToken(r.Context(), app.ID)
	if errors.Is(err, storage.ErrNotFound) {
		t, err = s.store.CreateBearerToken(r.Context(), app.ID)
	}
	if err != nil {
		s.writeV1(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token_type": "bearer", "access_token": t.Token})
}

// invalidateAppToken serves POST /oauth2/invalidate_token: the app revokes
// one of its bearer tokens; the next /oauth2/token call issues a new one.
func (s *Server) invalidateAppToken(w http.ResponseWriter, r *http.Request) {
	p, err := params(w, r)
	if err != nil {
		s.writeV1(w, r, errAccessToken)
		return
	}
	app, err := s.limitedApp(w, r)
	if err != nil {
		s.writeV1(w, r, err)
		return
	}
	token := p.Get("access_token")
	if token == "" {
		s.writeV1(w, r, errAccessToken)
		return
	}
	owner, err := s.store.AppByBearerToken(r.Context(), token)
	if err == nil && owner.ID == app.ID {
		err = s.store.RevokeBearerToken(r.Context(), token)
	} else if err == nil || errors.Is(err, storage.ErrNotFound) {
		err = errAppCredentials // not a live token of this app
	}
	if err != nil {
		s.writeV1(w, r, err)
		return
	}
	if s.revoked.Bearer != nil {
		if err := s.revoked.Bearer(r.Context(), token); err != nil {
			s.log.WarnContext(r.Context(), "announce bearer revocation", "error", err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"access_token": token})
}

func (s *Server) writeV1(w http.ResponseWriter, r *http.Request, err error) {
	var ve *v1Error
	if errors.As(err, &ve) {
		if ve.limited != nil {
			ve.limited.setRetryAfter(w)
		}
		writeJSON(w, ve.status, ve.body())
		return
	}
	s.log.ErrorContext(r.Context(), "oauth2 app token endpoint failed", "error", err)
	writeJSON(w, http.StatusInternalServerError, (&v1Error{code: 131, message: "Internal error"}).body())
}
