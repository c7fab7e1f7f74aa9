package auth

import (
	"context"
	"errors"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// bearer authenticates a bearer token: an app-only token, or else an OAuth
// 2.0 user access token (docs/oauth.md). Both are opaque, so the app-only
// tokens are looked up first (the common case) and a miss asks for a user
// token.
func (a *Authenticator) bearer(ctx context.Context, token string) (Principal, error) {
	if !isCredential(token) {
		return Principal{}, apierr.Unauthorized("Malformed bearer token.")
	}
	app, err := a.store.AppByBearerToken(ctx, token)
	if err == nil {
		return Principal{App: app, Method: MethodBearer}, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return Principal{}, lookupError(err, "bearer token", invalidBearer)
	}
	return a.oauth2User(ctx, token)
}

const invalidBearer = "Invalid or expired bearer token."

// oauth2User authenticates an OAuth 2.0 user access token: live (not
// revoked, not expired), of an app and a user that may act.
func (a *Authenticator) oauth2User(ctx context.Context, token string) (Principal, error) {
	t, err := a.store.OAuth2Token(ctx, token)
	if err != nil {
		return Principal{}, lookupError(err, "OAuth 2.0 token", invalidBearer)
	}
	if t.Kind != storage.TokenAccess || !t.Live(a.now()) {
		return Principal{}, apierr.Unauthorized(invalidBearer)
	}
	user, err := a.store.UserByID(ctx, t.UserID)
	if err != nil {
		return Principal{}, lookupError(err, "token user", userGoneDetail)
	}
	if err := accountError(user); err != nil {
		return Principal{}, err
	}
	app, err := a.store.AppByID(ctx, t.AppID)
	if err != nil {
		return Principal{}, lookupError(err, "token app", invalidBearer)
	}
	return Principal{App: app, User: &user, Method: MethodOAuth2, Scopes: t.Scopes}, nil
}
