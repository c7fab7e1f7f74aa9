package auth

import (
	"context"

	"github.com/aviary-dev/aviary/api/apierr"
)

// bearer authenticates an app-only bearer token.
func (a *Authenticator) bearer(ctx context.Context, token string) (Principal, error) {
	if !isCredential(token) {
		return Principal{}, apierr.Unauthorized("Malformed bearer token.")
	}
	app, err := a.store.AppByBearerToken(ctx, token)
	if err != nil {
		return Principal{}, lookupError(err, "bearer token", "Invalid or expired bearer token.")
	}
	return Principal{App: app, Method: MethodBearer}, nil
}
