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

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

// sessionKeyName is the web_secrets row holding the generated session key.
const sessionKeyName = "session-key"

// addWebMounts mounts the web tier's OAuth endpoints and pages (web/oauth)
// on the API listener: each of oauth.Paths. authn verifies OAuth 1.0a
// signed token exchange requests.
func addWebMounts(cfg *config, b *backends, authn *auth.Authenticator, log *slog.Logger, m map[string]http.Handler) error {
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
	pub := auth.NewPublisher(b.redis, auth.InvalidationChannel)
	h := oauth.New(b.apiDB, kit, time.Now, oauth.Revocations{Bearer: pub.BearerRevoked, OAuth2: pub.OAuth2Revoked}).
		WithLimits(tokenLimits(cfg, b)).WithOAuth1(oauth1Verifier(authn)).Handler()
	for _, p := range oauth.Paths {
		m[p] = h
	}
	return nil
}

// oauth1Verifier checks an OAuth 1.0a signed request with the API's
// authenticator (signature, timestamp, nonce, account) and returns its
// access token; a refusal (a 4xx problem) wraps oauth.ErrSignatureRefused.
func oauth1Verifier(authn *auth.Authenticator) oauth.OAuth1Verifier {
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
	scale := func(n int) int64 {
		if n == 0 {
			return 0
		}
		return max(int64(float64(n)*cfg.RateLimitScale), 1)
	}
	return oauth.Limits{Window: web.NewWindow(b.redis, "aviary:oauth-token:", cfg.OAuthTokenWindow),
		PerClient: scale(cfg.OAuthTokenLimit), PerAddress: scale(cfg.OAuthTokenFailureLimit)}
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
