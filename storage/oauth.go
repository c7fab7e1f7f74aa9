package storage

import (
	"errors"
	"time"
)

// OAuth 2.0 client types (docs/oauth.md): a confidential client holds a
// secret and authenticates with it; a public client (browser, mobile) has
// none and is identified by its client_id alone (PKCE protects its codes).
const (
	ClientConfidential = "confidential"
	ClientPublic       = "public"
)

// OAuth2Client is an app's OAuth 2.0 client registration. The secret is
// never stored: only its hash, compared by the store.
type OAuth2Client struct {
	AppID    int64
	ClientID string
	Type     string // ClientConfidential or ClientPublic
	// SecretHash is the SHA-256 of a confidential client's secret (nil for
	// a public client); the secret itself is shown once and never stored.
	SecretHash []byte
	CreatedAt  time.Time
}

// OAuth2Code is an issued authorization code (stored hashed).
type OAuth2Code struct {
	AppID       int64
	UserID      int64
	RedirectURI string
	Scopes      []string
	Challenge   string
	Method      string // "S256" or "plain"
	ExpiresAt   time.Time
	UsedAt      *time.Time
	CreatedAt   time.Time
}

// OAuth 2.0 token kinds.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// OAuth2Token is an OAuth 2.0 user token (access or refresh), stored hashed,
// as authentication and the token endpoint read it with its family.
type OAuth2Token struct {
	Kind      string // TokenAccess or TokenRefresh
	FamilyID  int64
	AppID     int64
	UserID    int64
	Scopes    []string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is set on a refresh token once it has been rotated.
	UsedAt *time.Time
	// Revoked: the token or its family was revoked.
	Revoked bool
}

// Live reports whether t may be used at now: not revoked, not expired, and
// (refresh tokens) not rotated yet.
func (t OAuth2Token) Live(now time.Time) bool {
	return !t.Revoked && t.UsedAt == nil && now.Before(t.ExpiresAt)
}

// ErrTokenReused means a rotated refresh token or a used authorization code
// was presented again; the store has revoked the grant family it belongs to.
var ErrTokenReused = errors.New("storage: oauth2 credential reused; its grant is revoked")

// OAuth2Issued are the raw tokens a grant hands out (Refresh "" for none),
// their scopes and expiry times; the store keeps their hashes.
type OAuth2Issued struct {
	Access, Refresh               string
	AccessExpires, RefreshExpires time.Time
	Scopes                        []string
}
