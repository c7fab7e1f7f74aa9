package storage

import (
	"errors"
	"strconv"
	"time"
)

// ErrDuplicateTweet means a post is already promoted (not deleted) on the
// line item.
var ErrDuplicateTweet = errors.New("storage: post already promoted on the line item")

// TweetNotFoundError means a post to promote does not exist, is deleted,
// or was not written by a user of the account.
type TweetNotFoundError struct {
	TweetID int64
}

func (e *TweetNotFoundError) Error() string {
	return "storage: post " + strconv.FormatInt(e.TweetID, 10) + " is not a live post of a user of the account"
}

// PromotedTweet associates a post with a line item.
type PromotedTweet struct {
	ID             string
	AccountID      string
	LineItemID     string
	TweetID        int64
	EntityStatus   string
	ApprovalStatus string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Deleted        bool
}

// Snapshot is the promoted tweet as account history records it.
func (p PromotedTweet) Snapshot() map[string]any {
	return map[string]any{
		"id":              p.ID,
		"line_item_id":    p.LineItemID,
		"tweet_id":        strconv.FormatInt(p.TweetID, 10),
		"entity_status":   p.EntityStatus,
		"approval_status": p.ApprovalStatus,
		"created_at":      snapshotTime(p.CreatedAt),
		"updated_at":      snapshotTime(p.UpdatedAt),
		"deleted":         p.Deleted,
	}
}

// PromotedTweetFilter narrows a promoted tweet list of one account.
// Without ListOptions.WithDeleted, promoted tweets of deleted line items
// are left out too.
type PromotedTweetFilter struct {
	AccountID        string
	LineItemIDs      []string
	PromotedTweetIDs []string
}
