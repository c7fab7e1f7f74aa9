package auth

import (
	"context"

	"github.com/aviary-dev/aviary/storage"
)

// Store is what authentication reads. Each method returns an error wrapping
// storage.ErrNotFound when the record does not exist; any other error is
// treated as a server failure.
type Store interface {
	// AppByBearerToken returns the app an app-only bearer token belongs to.
	AppByBearerToken(ctx context.Context, token string) (storage.App, error)
	// AppByConsumerKey returns the app identified by an OAuth consumer key.
	AppByConsumerKey(ctx context.Context, key string) (storage.App, error)
	// AppByID returns an app (the app of an OAuth 2.0 user token).
	AppByID(ctx context.Context, id int64) (storage.App, error)
	// AccessToken returns an OAuth 1.0a user access token.
	AccessToken(ctx context.Context, token string) (storage.AccessToken, error)
	// OAuth2Token returns an OAuth 2.0 user token by its raw value,
	// whatever its state (storage.OAuth2Token.Live says whether it may be
	// used).
	OAuth2Token(ctx context.Context, token string) (storage.OAuth2Token, error)
	// UserByID returns a user.
	UserByID(ctx context.Context, id int64) (storage.User, error)
}
