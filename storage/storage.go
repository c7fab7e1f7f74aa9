// Package storage defines Aviary's records and the interfaces the API tier
// and the workers use to read and write them. Implementations live in
// subpackages (storage/postgres for records, storage/blob for objects); the
// tiers depend only on these interfaces and sentinel errors.
package storage

import (
	"errors"
	"time"
)

// Sentinel errors every implementation translates its own errors into.
var (
	// ErrNotFound means the record does not exist or is not visible to the caller.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict means the write would violate a uniqueness or state rule.
	ErrConflict = errors.New("storage: conflict")
)

// App is a registered developer application.
type App struct {
	ID             int64
	Name           string
	ConsumerKey    string
	ConsumerSecret string
	CallbackURL    string
	CreatedAt      time.Time
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
}

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

// AdAccount is an advertising account owned by a user.
type AdAccount struct {
	ID             string
	Name           string
	UserID         int64
	Timezone       string
	ApprovalStatus string
	IndustryType   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Deleted        bool
}

// Post is a post ("tweet") with its author.
type Post struct {
	ID              int64
	AuthorID        int64
	AppID           int64
	Text            string
	PaidPartnership bool
	CreatedAt       time.Time
	DeletedAt       *time.Time
}

// Compliance job types and statuses, exactly as the API spells them.
const (
	ComplianceTypeTweets = "tweets"
	ComplianceTypeUsers  = "users"

	JobCreated    = "created"
	JobInProgress = "in_progress"
	JobFailed     = "failed"
	JobComplete   = "complete"
)

// ComplianceJob is a batch compliance job owned by an app.
type ComplianceJob struct {
	ID                int64
	AppID             int64
	Type              string
	Name              string
	Resumable         bool
	Status            string
	UploadKey         string
	ResultKey         string
	UploadExpiresAt   time.Time
	DownloadExpiresAt time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// UploadURL and DownloadURL are the presigned URLs handed out at
	// creation; they stay valid until the matching expiry.
	UploadURL   string
	DownloadURL string

	// Processing bookkeeping (not part of the public object).
	EnqueuedAt     *time.Time
	StartedAt      *time.Time
	HeartbeatAt    *time.Time
	CompletedAt    *time.Time
	Attempts       int
	LinesRead      int64
	MalformedLines int64
	ResultLines    int64
	FailureReason  string
}

// ComplianceFilter selects an app's jobs for listing.
type ComplianceFilter struct {
	AppID  int64
	Type   string
	Status string // optional
	Limit  int
}

// ComplianceProgress is what a worker reports while it processes a job.
type ComplianceProgress struct {
	LinesRead      int64
	MalformedLines int64
	ResultLines    int64
}

// PostStatus is what compliance needs to know about one post id.
type PostStatus struct {
	ID        int64
	CreatedAt time.Time
	DeletedAt *time.Time
	Author    User
}
