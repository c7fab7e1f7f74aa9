package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

// sessionKeyName is the web_secrets row holding the generated session key.
const sessionKeyName = "session-key"

// OAuth 1.0a rate limits (docs/oauth.md): token endpoint calls per app and
// page requests per client address, per window.
const (
	oauth1AppLimit  = 300
	oauth1PageLimit = 300
)

// devHTTPNotice is the banner of the pages when OAuth 1.0a runs over HTTP.
const devHTTPNotice = "Development mode, plain HTTP: these pages and the OAuth 1.0a flow are served without HTTPS. Never use this setting in production."

// addWebMounts mounts the web tier's OAuth endpoints and pages (web/oauth)
// and the developer console (web/console, queues its queue depths) on the
// API listener: each of oauth.Paths and oauth.OAuth1Paths. authn
// verifies the OAuth 1.0a token endpoints' signatures and signed token
// exchange requests with the API's rules.
func addWebMounts(cfg *config, b *backends, authn *auth.Authenticator, queues api.QueueInspector, sandbox sandboxDeps, log *slog.Logger, m map[string]http.Handler) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key, err := webSessionKey(ctx, cfg, b)
	if err != nil {
		return err
	}
	sessions, err := web.NewSessions(key, strings.HasPrefix(cfg.PublicURL, "https://"), time.Now)
	if err != nil {
		return fmt.Errorf("AVIARY_WEB_SESSION_KEY: %w", err)
	}
	kit, err := web.NewKit(sessions, web.NewThrottle(b.redis, "aviary:web-login:"), log.With("tier", "web"))
	if err != nil {
		return err
	}
	insecure := cfg.OAuthInsecureHTTP || cfg.dev
	if insecure && !strings.HasPrefix(cfg.PublicURL, "https://") {
		log.Warn("OAuth 1.0a is served over plain HTTP (AVIARY_OAUTH_INSECURE_HTTP or aviary dev): development only; the pages say so")
		kit.SetNotice(devHTTPNotice)
	}
	pub := auth.NewPublisher(b.redis, auth.InvalidationChannel)
	s := oauth.New(b.apiDB, kit, time.Now, oauth.Revocations{Bearer: pub.BearerRevoked, OAuth2: pub.OAuth2Revoked}).
		WithLimits(tokenLimits(cfg, b)).WithSignedExchange(signedExchangeVerifier(authn))
	s.WithOAuth1(oauth.OAuth1Config{
		Store: b.apiDB, Verifier: oauth1Verifier{authn}, PublicURL: cfg.PublicURL, AllowHTTP: insecure,
		AppLimit:           web.NewRateLimit(b.redis, "aviary:oauth1-limit:", scaledLimit(cfg, oauth1AppLimit), cfg.OAuthTokenWindow),
		PageLimit:          web.NewRateLimit(b.redis, "aviary:oauth1-limit:", scaledLimit(cfg, oauth1PageLimit), cfg.OAuthTokenWindow),
		AccessTokenChanged: pub.AccessTokenRevoked,
	})
	h := s.Handler()
	for _, p := range append(append([]string{}, oauth.Paths...), oauth.OAuth1Paths...) {
		m[p] = h
	}
	m[web.StylesheetPath] = web.Stylesheet()
	return addConsoleMounts(cfg, b, kit, pub, queues, sandbox, m)
}

// signedExchangeVerifier checks an OAuth 1.0a signed request with the API's
// authenticator (signature, timestamp, nonce, account) and returns its
// access token; a refusal (a 4xx problem) wraps oauth.ErrSignatureRefused.
func signedExchangeVerifier(authn *auth.Authenticator) oauth.SignedExchangeVerifier {
	return func(r *http.Request) (storage.AccessToken, error) {
		p, err := authn.Authenticate(r)
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status < http.StatusInternalServerError {
			return storage.AccessToken{}, fmt.Errorf("%w: %s", oauth.ErrSignatureRefused, ae.Detail)
		}
		if err != nil {
			return storage.AccessToken{}, err
		}
		if p.Token == nil {
			return storage.AccessToken{}, fmt.Errorf("%w: not an OAuth 1.0a user-context request", oauth.ErrSignatureRefused)
		}
		return *p.Token, nil
	}
}

// tokenLimits are the token endpoints' rate limits: AVIARY_OAUTH_TOKEN_*,
// scaled by AVIARY_RATE_LIMIT_SCALE (a limit scaled below 1 stays 1).
func tokenLimits(cfg *config, b *backends) oauth.Limits {
	return oauth.Limits{Window: web.NewWindow(b.redis, "aviary:oauth-token:", cfg.OAuthTokenWindow),
		PerClient: scaledLimit(cfg, cfg.OAuthTokenLimit), PerAddress: scaledLimit(cfg, cfg.OAuthTokenFailureLimit)}
}

// scaledLimit is n scaled by AVIARY_RATE_LIMIT_SCALE; 0 stays 0 (off), and
// a limit scaled below 1 stays 1.
func scaledLimit(cfg *config, n int) int64 {
	if n == 0 {
		return 0
	}
	return max(int64(float64(n)*cfg.RateLimitScale), 1)
}

// oauth1Verifier adapts auth.Authenticator.VerifyConsumer to web/oauth
// (web/ does not import api/).
type oauth1Verifier struct{ a *auth.Authenticator }

func (v oauth1Verifier) VerifyOAuth1(r *http.Request, secret func(context.Context, storage.App, string) (string, error)) (oauth.OAuth1Request, error) {
	var ts auth.TokenSecret
	if secret != nil {
		ts = secret
	}
	c, err := v.a.VerifyConsumer(r, ts)
	if err != nil {
		var ae *apierr.Error
		switch {
		case errors.As(err, &ae):
			return oauth.OAuth1Request{}, &oauth.SignatureError{Status: ae.Status, Detail: ae.Detail}
		case errors.Is(err, storage.ErrUnavailable):
			return oauth.OAuth1Request{}, &oauth.SignatureError{Status: http.StatusServiceUnavailable, Detail: "Replay protection is unavailable; try again."}
		}
		return oauth.OAuth1Request{}, err
	}
	return oauth.OAuth1Request{App: c.App, Token: c.Token, Params: c.Params}, nil
}

// webSessionKey is AVIARY_WEB_SESSION_KEY, or else a random key generated
// once and kept in PostgreSQL so every replica and restart shares it.
func webSessionKey(ctx context.Context, cfg *config, b *backends) ([]byte, error) {
	if cfg.WebSessionKey != "" {
		if len(cfg.WebSessionKey) < web.MinKeyLength {
			return nil, fmt.Errorf("AVIARY_WEB_SESSION_KEY: want at least %d bytes, got %d", web.MinKeyLength, len(cfg.WebSessionKey))
		}
		return []byte(cfg.WebSessionKey), nil
	}
	key, err := b.apiDB.WebSecret(ctx, sessionKeyName, func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("web session key: %w", err)
	}
	return key, nil
}
