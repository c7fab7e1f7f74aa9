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
	// AccessToken returns an OAuth 1.0a user access token.
	AccessToken(ctx context.Context, token string) (storage.AccessToken, error)
	// UserByID returns a user.
	UserByID(ctx context.Context, id int64) (storage.User, error)
}
