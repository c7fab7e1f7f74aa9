package storage

import "time"

// ConsoleApp is an app as the developer console lists it: the app, its
// owner (0: none, an app made by `aviary admin`) and the owner's username.
type ConsoleApp struct {
	App
	OwnerID       int64
	OwnerUsername string
}

// TokenRef names a stored bearer or OAuth 1.0a access token without
// showing it: the first 16 hex digits of its SHA-256. The console's revoke
// forms carry it, never the token.
type TokenRef = string

// ConsoleToken is a bearer token or an OAuth 1.0a access token as the
// console lists it: a reference, a masked form and who it is for.
type ConsoleToken struct {
	Ref         TokenRef
	Masked      string // the first and last characters only
	UserID      int64  // access tokens: the user
	Username    string // access tokens: the user's username
	AccessLevel string // access tokens
	CreatedAt   time.Time
}

// ConsoleGrant is a live OAuth 2.0 grant (a token family) of an app.
type ConsoleGrant struct {
	ID        int64
	UserID    int64
	Username  string
	Scopes    []string
	CreatedAt time.Time
}
