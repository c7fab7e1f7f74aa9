package storage

import "time"

// DoNotReachListName is the name every do-not-reach list has (the
// platform's lists are not named by their clients).
const DoNotReachListName = "Do Not Reach List"

// DoNotReachList is an account's do-not-reach list: hashed identifiers
// its campaigns never reach.
type DoNotReachList struct {
	ID          string
	AccountID   string
	Name        string
	Description *string
	// ListSize is the number of entries that have not expired.
	ListSize int64
	// InFlight reports batches recorded but not applied yet.
	InFlight  bool
	CreatedAt time.Time
	UpdatedAt time.Time
	Deleted   bool
}

// Do-not-reach batch operation types (operation_type).
const (
	DoNotReachUpdate = "Update"
	DoNotReachDelete = "Delete"
)

// DoNotReachOperationTypes are the operation_type values a batch takes.
var DoNotReachOperationTypes = []string{DoNotReachUpdate, DoNotReachDelete}

// DoNotReachOperation is one validated operation of a users batch.
type DoNotReachOperation struct {
	Type string `json:"type"`
	// ExpiresAt is when the entries of an Update expire (the default
	// resolved when the request was accepted).
	ExpiresAt time.Time `json:"expires_at"`
	// Keys are the member keys ("e:" or "p:" and the lowercase SHA-256
	// hex of an email or phone number) the operation adds or removes.
	Keys []string `json:"keys"`
	// Count is the number of users (or emails) the operation carried: its
	// success_count and total_count.
	Count int `json:"count"`
}

// NewDoNotReachBatch is a users batch to record.
type NewDoNotReachBatch struct {
	AccountID string
	ListID    string
	// RequestKey identifies retries of the request (Idempotency-Key, else
	// the body's digest); BodySHA256 is the body's digest.
	RequestKey string
	BodySHA256 string
	Operations []DoNotReachOperation
	// RetryWindow is how long a request with the same RequestKey is taken
	// as a retry of this one.
	RetryWindow time.Duration
}

// DoNotReachBatch is a recorded users batch.
type DoNotReachBatch struct {
	ID         string
	ListID     string
	Operations []DoNotReachOperation
	CreatedAt  time.Time
	State      BatchState
	// Replayed reports a retry: the batch was recorded by an earlier
	// request and this one recorded nothing.
	Replayed bool
}

// DoNotReachApplied is what applying a batch did.
type DoNotReachApplied struct {
	// Batches is how many batches of the list were applied (the batch and
	// the unapplied ones recorded before it); 0 when it already was.
	Batches int
	// Added and Removed are entries inserted and deleted.
	Added, Removed int64
}
