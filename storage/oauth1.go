package storage

import (
	"errors"
	"time"
)

// OAuth1RequestToken is an OAuth 1.0a request token (docs/oauth.md): issued
// by POST /oauth/request_token, authorized by a user on the authorize
// page, exchanged once for an access token by POST /oauth/access_token.
type OAuth1RequestToken struct {
	Token  string
	Secret string // readable: the access_token call is signed with it
	AppID  int64
	// Callback is oauth_callback as the app sent it ("oob": the PIN flow).
	Callback    string
	AccessLevel string // AccessRead or AccessReadWrite
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// UserID is the user who authorized the token (0: not yet).
	UserID     int64
	DeniedAt   *time.Time
	UsedAt     *time.Time
	Authorized bool
}

// Pending reports whether t may still be authorized or denied at now.
func (t OAuth1RequestToken) Pending(now time.Time) bool {
	return !t.Authorized && t.DeniedAt == nil && t.UsedAt == nil && now.Before(t.ExpiresAt)
}

// ErrVerifier means an OAuth 1.0a request token was presented with a
// verifier that is not its own, or one that was not authorized, already
// used or expired: the exchange is refused.
var ErrVerifier = errors.New("storage: oauth1 request token not authorized, used, expired or wrong verifier")
