package storage

import "time"

// App is a registered developer application.
type App struct {
	ID             int64
	Name           string
	ConsumerKey    string
	ConsumerSecret string
	CallbackURL    string
	// Tier is TierSelfServe or TierEnterprise.
	Tier      string
	CreatedAt time.Time
	// SignInEnabled: "Sign in with" is on, so GET /oauth/authenticate
	// skips the consent page for users who already approved the app.
	SignInEnabled bool
}

// UserState values used by compliance: a user may be protected and suspended
// at once; each state records when it began.
type User struct {
	ID            int64
	Username      string
	Name          string
	CreatedAt     time.Time
	ProtectedAt   *time.Time
	SuspendedAt   *time.Time
	DeactivatedAt *time.Time
	DeletedAt     *time.Time
	Profile
}

// Profile is what a user shows of themself (GET /2/users).
type Profile struct {
	Description     string
	Location        string
	URL             string
	ProfileImageURL string
	PinnedPostID    int64 // 0: none
	Verified        bool
	Premium         bool
	// CountryCode is the profile country (ISO 3166-1 alpha-2; "" unknown).
	CountryCode string
}

// UserMetrics are a user's public counters.
type UserMetrics struct {
	Posts     int64 // live posts, reposts included
	Likes     int64 // posts the user liked
	Followers int64
	Following int64
	Listed    int64
}

// App tiers: programmatic replies of self-serve apps are allowed only where
// the original author summoned the replier (spec "Limits").
const (
	TierSelfServe  = "self-serve"
	TierEnterprise = "enterprise"
)

// UserStates names the account states an operator can set.
var UserStates = []string{"active", "protected", "unprotected", "suspended", "unsuspended", "deactivated", "reactivated", "deleted"}

// Access levels of an AccessToken.
const (
	AccessRead      = "read"
	AccessReadWrite = "read-write"
)

// AccessToken is an OAuth 1.0a user access token issued to an app.
type AccessToken struct {
	Token       string
	Secret      string
	AppID       int64
	UserID      int64
	AccessLevel string // AccessRead or AccessReadWrite
	CreatedAt   time.Time
}

// CanWrite reports whether the token may call endpoints that write.
func (t AccessToken) CanWrite() bool { return t.AccessLevel == AccessReadWrite }

// BearerToken is an app-only OAuth 2.0 bearer token.
type BearerToken struct {
	Token     string
	AppID     int64
	CreatedAt time.Time
}
