package auth

import (
	"context"

	"github.com/aviary-dev/aviary/storage"
)

// Authentication methods recorded in Principal.Method.
const (
	// MethodBearer is app-only OAuth 2.0 bearer token authentication.
	MethodBearer = "bearer"
	// MethodOAuth1 is OAuth 1.0a user-context authentication.
	MethodOAuth1 = "oauth1"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// App is the calling developer app.
	App storage.App
	// User is the user the app acts for; nil for app-only authentication.
	User *storage.User
	// Token is the OAuth 1.0a access token used; nil for bearer tokens.
	Token *storage.AccessToken
	// Method is MethodBearer or MethodOAuth1.
	Method string
}

// CanWrite reports whether the caller may use endpoints that write: app-only
// callers always, user-context callers when their token is read-write.
func (p Principal) CanWrite() bool { return p.Token == nil || p.Token.CanWrite() }

type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal stored by WithPrincipal, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
