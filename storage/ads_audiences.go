package storage

import (
	"errors"
	"time"
)

// Custom audience errors (docs/ads-audiences.md).
var (
	// ErrAudienceReadOnly means the account was granted the audience
	// READ_ONLY and may not change it or its members.
	ErrAudienceReadOnly = errors.New("storage: the account may only read the custom audience")
	// ErrAudienceNotOwner means only the owning account may do this (PUT,
	// DELETE of the audience itself).
	ErrAudienceNotOwner = errors.New("storage: only the owning account may change the custom audience")
)

// CustomAudienceView is a custom audience as one account sees it: its own
// (IsOwner) or one shared with it through a live permission.
type CustomAudienceView struct {
	CustomAudience
	IsOwner bool
}

// Custom audience list scopes (permission_scope): none means both.
const (
	AudienceScopeOwner  = "OWNER"
	AudienceScopeShared = "SHARED"
)

// AudienceScopes are the values of permission_scope.
var AudienceScopes = []string{AudienceScopeOwner, AudienceScopeShared}

// CustomAudienceFilter selects the audiences an account sees.
type CustomAudienceFilter struct {
	AccountID   string
	AudienceIDs []string
	// NamePrefix matches names case-insensitively.
	NamePrefix string
	// Scope is AudienceScopeOwner, AudienceScopeShared or "" for both.
	Scope string
}

// NewCustomAudience is a custom audience to create.
type NewCustomAudience struct {
	AccountID   string
	Name        string
	Description *string
}

// CustomAudienceChange is a PUT: the attributes sent (nil keeps).
type CustomAudienceChange struct {
	Name        *string
	Description *string
}

// Custom audience batch operation types (operation_type).
const (
	AudienceUpdate = "Update"
	AudienceDelete = "Delete"
)

// AudienceOperationTypes are the values of operation_type.
var AudienceOperationTypes = []string{AudienceUpdate, AudienceDelete}

// Identifier types of a member key (its first byte); the order is stored,
// never renumber.
const (
	IdentEmail byte = 1 + iota
	IdentPhoneNumber
	IdentHandle
	IdentTwitterID
	IdentDeviceID
	IdentPartnerUserID
)

// AudienceIdentifiers maps the identifier names of a user object to
// their key type.
var AudienceIdentifiers = map[string]byte{
	"email":           IdentEmail,
	"phone_number":    IdentPhoneNumber,
	"handle":          IdentHandle,
	"twitter_id":      IdentTwitterID,
	"device_id":       IdentDeviceID,
	"partner_user_id": IdentPartnerUserID,
}

// MemberKey identifies one member of a custom audience: the identifier
// type, then the SHA-256 digest (of partner_user_id, the digest Aviary
// computes of the value sent). A member (one person) holds one or more
// keys: those of a user object, and of every later user object sharing a
// key with it (docs/ads-audiences.md).
type MemberKey [33]byte

// KeyRange is the keys Keys[Start:End] of one user object of an operation.
type KeyRange struct{ Start, End int32 }

// AudienceOperation is one normalized operation of a users batch.
type AudienceOperation struct {
	Type        string
	EffectiveAt time.Time
	ExpiresAt   time.Time
	// Users is the number of user objects (success_count, total_count).
	Users int
	Keys  []MemberKey
	// People are the user objects carrying two or more keys, in order;
	// every key outside them is a user object of its own (so a batch of
	// one identifier per user carries none).
	People []KeyRange
}

// AudienceOperationCount is one item of a users batch answer.
type AudienceOperationCount struct {
	OperationType string `json:"operation_type"`
	SuccessCount  int    `json:"success_count"`
	TotalCount    int    `json:"total_count"`
}

// NewAudienceBatch is a validated users batch to record.
type NewAudienceBatch struct {
	AccountID  string
	AudienceID string
	// IdempotencyKey is the Idempotency-Key header, "" when none was sent.
	// It names one request of the account to the audience: within
	// RetryWindow the same key with the same body is a retry, with another
	// body ErrRequestKeyReused.
	IdempotencyKey string
	// BodySHA256 is the hex SHA-256 of the request body. Without a key, a
	// request is a retry only of the audience's latest batch, when that was
	// recorded by the same account without a key, with the same body,
	// within RetryWindow.
	BodySHA256  string
	RetryWindow time.Duration
	Operations  []AudienceOperation
}

// AudienceBatch is a recorded users batch.
type AudienceBatch struct {
	ID         string
	AudienceID string
	AccountID  string
	State      BatchState
	Counts     []AudienceOperationCount
	// Replayed is set when the request was recorded before (a retry): this
	// is that batch.
	Replayed  bool
	CreatedAt time.Time
}

// AudienceBatchResult is what applying a batch did.
type AudienceBatchResult struct {
	// Skipped: the batch was not pending (applied or failed before).
	Skipped bool
	// Added is the members (people) the batch created, Removed those it
	// deleted, Merged those that became part of another member (a user
	// object sharing keys with several): audience_size moved by
	// Added - Removed - Merged.
	Added    int64
	Removed  int64
	Merged   int64
	SizeNow  int64
	Failed   bool
	Failure  string
	Audience string
}
