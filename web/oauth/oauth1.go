package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
)

// RequestTokenTTL is how long a request token may be authorized and
// exchanged (docs/oauth.md).
const RequestTokenTTL = 15 * time.Minute

// OAuth1Request is a verified OAuth 1.0a request of the token endpoints.
type OAuth1Request struct {
	App    storage.App
	Token  string     // oauth_token ("" when none was sent)
	Params url.Values // header oauth_* values, then query and form
}

// SignatureError is a refused OAuth 1.0a signature (an
// OAuth1Verifier's failure): Status is 401, or 503 when replay protection
// could not answer.
type SignatureError struct {
	Status int
	Detail string
}

func (e *SignatureError) Error() string { return e.Detail }

// OAuth1Verifier verifies OAuth 1.0a signatures with the API's rules
// (cmd/aviary adapts api/auth.Authenticator.VerifyConsumer): consumer
// credentials and, when the request names oauth_token, the secret
// tokenSecret supplies (nil: no token allowed). Refusals are
// *SignatureError.
type OAuth1Verifier interface {
	VerifyOAuth1(r *http.Request, tokenSecret func(ctx context.Context, app storage.App, token string) (string, error)) (OAuth1Request, error)
}

// OAuth1Store is what the OAuth 1.0a flow reads and writes
// (storage/postgres.DB).
type OAuth1Store interface {
	AppByID(ctx context.Context, id int64) (storage.App, error)
	HasCallbackURL(ctx context.Context, appID int64, url string) (bool, error)
	CreateRequestToken(ctx context.Context, t storage.OAuth1RequestToken) error
	RequestToken(ctx context.Context, token string) (storage.OAuth1RequestToken, error)
	AuthorizeRequestToken(ctx context.Context, token string, userID int64, verifierHash []byte, now time.Time) error
	DenyRequestToken(ctx context.Context, token string, now time.Time) error
	ExchangeRequestToken(ctx context.Context, token string, appID int64, verifierHash []byte, now time.Time) (storage.OAuth1RequestToken, error)
	GrantAccessToken(ctx context.Context, appID, userID int64, level string) (storage.AccessToken, bool, error)
	ApprovedAccess(ctx context.Context, appID, userID int64) (string, error)
	AccessToken(ctx context.Context, token string) (storage.AccessToken, error)
	RevokeAccessToken(ctx context.Context, token string) error
}

// OAuth1Config turns on the OAuth 1.0a three-legged flow (WithOAuth1).
type OAuth1Config struct {
	Store    OAuth1Store
	Verifier OAuth1Verifier
	// PublicURL is AVIARY_PUBLIC_URL: its scheme decides whether a call
	// came over HTTPS (empty: the request's TLS or X-Forwarded-Proto).
	PublicURL string
	// AllowHTTP accepts plain-HTTP calls (development mode).
	AllowHTTP bool
	// AppLimit bounds the token endpoints' calls per app, PageLimit the
	// pages' requests per client address (nil: unlimited).
	AppLimit, PageLimit *web.RateLimit
	// AccessTokenChanged tells the API's credential caches to forget an
	// access token (revoked, or its level changed).
	AccessTokenChanged func(ctx context.Context, token string) error
}

// OAuth1Paths are the paths of the OAuth 1.0a flow (served once WithOAuth1
// is set). The platform documents invalidate_token under /1.1 (with .json).
var OAuth1Paths = []string{"/oauth/request_token", "/oauth/authorize", "/oauth/authenticate", "/oauth/access_token",
	"/oauth/invalidate_token", "/1.1/oauth/invalidate_token", "/1.1/oauth/invalidate_token.json"}

// WithOAuth1 serves the OAuth 1.0a flow with cfg; it returns s.
func (s *Server) WithOAuth1(cfg OAuth1Config) *Server {
	s.oauth1 = &cfg
	return s
}

func (s *Server) oauth1Routes(mux *http.ServeMux) {
	if s.oauth1 == nil {
		return
	}
	mux.HandleFunc("POST /oauth/request_token", s.machine(s.requestToken))
	mux.HandleFunc("POST /oauth/access_token", s.machine(s.accessToken))
	for _, p := range []string{"/oauth/invalidate_token", "/1.1/oauth/invalidate_token", "/1.1/oauth/invalidate_token.json"} {
		mux.HandleFunc("POST "+p, s.machine(s.invalidateToken))
	}
	for _, p := range []string{"/oauth/authorize", "/oauth/authenticate"} {
		mux.HandleFunc("GET "+p, s.page(s.oauth1Page))
		mux.HandleFunc("POST "+p, s.page(s.oauth1PagePost))
	}
}

// secure reports whether r came over HTTPS: by AVIARY_PUBLIC_URL's scheme
// when it is set, else by the connection or a proxy's X-Forwarded-Proto.
func (c *OAuth1Config) secure(r *http.Request) bool {
	if c.PublicURL != "" {
		return strings.HasPrefix(strings.ToLower(c.PublicURL), "https://")
	}
	if r.TLS != nil {
		return true
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// errHTTPS refuses a plain-HTTP call when AVIARY_OAUTH_INSECURE_HTTP is off.
var errHTTPS = &v1Error{status: http.StatusForbidden, code: 92,
	message: "SSL is required: OAuth 1.0a calls must use HTTPS (set AVIARY_OAUTH_INSECURE_HTTP=1 for plain HTTP in development)."}

// machine wraps a token endpoint: HTTPS rule, then the handler; the
// handler applies the per-app limit once it knows the app.
func (s *Server) machine(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if !s.oauth1.AllowHTTP && !s.oauth1.secure(r) {
			s.writeOAuth1Error(w, r, errHTTPS)
			return
		}
		if err := h(w, r); err != nil {
			s.writeOAuth1Error(w, r, err)
		}
	}
}

// page wraps the pages: HTTPS rule and the per-address limit.
func (s *Server) page(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.oauth1.AllowHTTP && !s.oauth1.secure(r) {
			s.kit.Error(w, r, http.StatusForbidden, "HTTPS is required", "Sign-in pages are only served over HTTPS.")
			return
		}
		if l := s.oauth1.PageLimit; l != nil {
			ok, retry, err := l.Allow(r.Context(), "addr:"+web.ClientAddress(r))
			if err != nil {
				s.kit.Fail(w, r, err)
				return
			}
			if !ok {
				w.Header().Set("Retry-After", fmt.Sprint(int(retry.Seconds()+0.5)))
				s.kit.Error(w, r, http.StatusTooManyRequests, "Too many requests", "Wait a few minutes and try again.")
				return
			}
		}
		h(w, r)
	}
}

var errRateLimited = &v1Error{status: http.StatusTooManyRequests, code: 88, message: "Rate limit exceeded"}

// limitApp counts one call of app against the per-app limit.
func (s *Server) limitApp(w http.ResponseWriter, r *http.Request, app storage.App) error {
	l := s.oauth1.AppLimit
	if l == nil {
		return nil
	}
	ok, retry, err := l.Allow(r.Context(), fmt.Sprintf("app:%d", app.ID))
	if err != nil {
		return err
	}
	if !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(retry.Seconds()+0.5)))
		return errRateLimited
	}
	return nil
}

// writeOAuth1Error answers a token endpoint's failure in the platform's
// v1.1 shape: signature refusals are code 32 "Could not authenticate you."
// with the reason appended; replay protection being down is 503 code 130
// (the platform's "Over capacity").
func (s *Server) writeOAuth1Error(w http.ResponseWriter, r *http.Request, err error) {
	var se *SignatureError
	var ve *v1Error
	switch {
	case errors.As(err, &se) && se.Status == http.StatusServiceUnavailable:
		writeJSON(w, se.Status, (&v1Error{code: 130, message: se.Detail}).body())
	case errors.As(err, &se):
		writeJSON(w, se.Status, (&v1Error{code: 32, message: "Could not authenticate you. " + se.Detail}).body())
	case errors.As(err, &ve):
		writeJSON(w, ve.status, ve.body())
	default:
		s.log.ErrorContext(r.Context(), "oauth1 endpoint failed", "path", r.URL.Path, "error", err)
		writeJSON(w, http.StatusInternalServerError, (&v1Error{code: 131, message: "Internal error"}).body())
	}
}

// writeForm answers v form-encoded. The answers carry token secrets, so,
// like the OAuth 2.0 token responses (writeJSON), they add Pragma:
// no-cache to the web tier's Cache-Control: no-store for HTTP/1.0 caches.
func writeForm(w http.ResponseWriter, v url.Values) {
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(v.Encode()))
}
