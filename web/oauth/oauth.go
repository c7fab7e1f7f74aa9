// Package oauth is Aviary's authorization server (docs/oauth.md): the
// OAuth endpoints and the login and consent pages they lead people
// through. It serves the app-only token endpoints (POST /oauth2/token,
// /oauth2/invalidate_token), the authorization code flow with PKCE
// (GET/POST /i/oauth2/authorize, POST /2/oauth2/token with the
// authorization_code and refresh_token grants, POST /2/oauth2/revoke) and,
// once WithOAuth1 is set, the OAuth 1.0a three-legged flow (oauth1*.go:
// /oauth/request_token, /oauth/authorize, /oauth/authenticate,
// /oauth/access_token, /oauth/invalidate_token).
package oauth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
)

// Store is what the authorization server reads and writes
// (storage/postgres.DB).
type Store interface {
	OAuth2ClientByID(ctx context.Context, clientID string) (storage.OAuth2Client, storage.App, error)
	HasCallbackURL(ctx context.Context, appID int64, url string) (bool, error)
	UserPassword(ctx context.Context, username string) (storage.User, string, error)
	UserByID(ctx context.Context, id int64) (storage.User, error)
	CreateOAuth2Code(ctx context.Context, code string, c storage.OAuth2Code) error
	ExchangeOAuth2Code(ctx context.Context, code string, now time.Time, check func(storage.OAuth2Code) (storage.OAuth2Issued, error)) (storage.OAuth2Code, error)
	RefreshOAuth2(ctx context.Context, refresh string, appID int64, now time.Time, check func(storage.OAuth2Token) (storage.OAuth2Issued, error)) (storage.OAuth2Token, error)
	ExchangeOAuth1Token(ctx context.Context, token string, now time.Time, check func(storage.AccessToken) (storage.OAuth2Issued, error)) (storage.AccessToken, error)
	RevokeOAuth2Token(ctx context.Context, token string, appID int64, now time.Time) (storage.OAuth2Token, error)
	AppByConsumerKey(ctx context.Context, key string) (storage.App, error)
	AppByBearerToken(ctx context.Context, token string) (storage.App, error)
	FirstBearerToken(ctx context.Context, appID int64) (storage.BearerToken, error)
	CreateBearerToken(ctx context.Context, appID int64) (storage.BearerToken, error)
	RevokeBearerToken(ctx context.Context, token string) error
}

// Revocations tells the API replicas' credential caches that tokens were
// revoked (cmd/aviary wires auth.Publisher). Either func may be nil.
type Revocations struct {
	Bearer func(ctx context.Context, token string) error
	OAuth2 func(ctx context.Context) error
}

// Server serves the OAuth endpoints.
type Server struct {
	store          Store
	kit            *web.Kit
	now            func() time.Time
	revoked        Revocations
	limits         Limits
	signedExchange SignedExchangeVerifier
	log            *slog.Logger
	oauth1         *OAuth1Config // nil: the OAuth 1.0a flow is not served
}

// New returns the authorization server. now is the clock (nil: time.Now).
func New(store Store, kit *web.Kit, now func() time.Time, revoked Revocations) *Server {
	if now == nil {
		now = time.Now
	}
	return &Server{store: store, kit: kit, now: now, revoked: revoked, log: kit.Log}
}

// storable reports whether s can be looked up as PostgreSQL text: valid
// UTF-8 without NUL. Anything else is the client's error (or simply no
// match), never a database error answered as 500.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// storableValues reports whether every name and value of v is storable.
func storableValues(v url.Values) bool {
	for name, values := range v {
		if !storable(name) {
			return false
		}
		for _, s := range values {
			if !storable(s) {
				return false
			}
		}
	}
	return true
}

// Paths are the paths Handler serves; cmd/aviary mounts each on the API
// listener.
var Paths = []string{"/i/oauth2/authorize", "/oauth2/token", "/oauth2/invalidate_token", "/2/oauth2/token", "/2/oauth2/revoke"}

// Handler serves every path of Paths, behind the web tier's security
// headers.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /i/oauth2/authorize", s.authorize)
	mux.HandleFunc("POST /i/oauth2/authorize", s.authorizePost)
	mux.HandleFunc("POST /oauth2/token", s.appToken)
	mux.HandleFunc("POST /oauth2/invalidate_token", s.invalidateAppToken)
	mux.HandleFunc("POST /2/oauth2/token", s.token)
	mux.HandleFunc("POST /2/oauth2/revoke", s.revoke)
	s.oauth1Routes(mux)
	return web.SecureHeaders(mux)
}
