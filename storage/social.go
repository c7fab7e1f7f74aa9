package storage

import "errors"

// ErrBlocked means a follow was refused because one of the two users
// blocks the other (docs/social-graph.md).
var ErrBlocked = errors.New("storage: blocked")

// Relation names one of a user's social graph lists.
type Relation string

// The lists: whom the user follows, who follows them, whom they mute,
// whom they block.
const (
	RelFollowing Relation = "following"
	RelFollowers Relation = "followers"
	RelMuting    Relation = "muting"
	RelBlocking  Relation = "blocking"
)

// SocialPage asks for one page of a user's list, newest first: Limit
// entries older than BeforeSeq (0: from the newest).
type SocialPage struct {
	UserID    int64
	Relation  Relation
	BeforeSeq int64
	Limit     int
}

// SocialEntry is one user of a list and its place in it (the page cursor).
type SocialEntry struct {
	User User
	Seq  int64
}

// FollowState is a follow's outcome: a follow, or a pending request to
// follow a protected account.
type FollowState struct {
	Following bool
	Pending   bool
}
