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
	// MethodOAuth2 is OAuth 2.0 user-context authentication (a user access
	// token sent as a bearer token).
	MethodOAuth2 = "oauth2"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// App is the calling developer app.
	App storage.App
	// User is the user the app acts for; nil for app-only authentication.
	User *storage.User
	// Token is the OAuth 1.0a access token used; nil for bearer tokens.
	Token *storage.AccessToken
	// Method is MethodBearer, MethodOAuth1 or MethodOAuth2.
	Method string
	// Scopes are the OAuth 2.0 scopes of a user-context caller: those its
	// OAuth 2.0 token was granted, or every scope of an OAuth 1.0a token's
	// access level (docs/oauth.md). Nil for app-only callers.
	Scopes []string
}

// Kind is the credential kind the caller authenticated with.
func (p Principal) Kind() Credential {
	switch p.Method {
	case MethodOAuth1:
		return OAuth1User
	case MethodOAuth2:
		return OAuth2User
	}
	return AppOnly
}

// CanWrite reports whether the caller may use endpoints that write: app-only
// callers always, OAuth 1.0a callers when their token is read-write, OAuth
// 2.0 callers by their scopes (Requirement.Scopes).
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
