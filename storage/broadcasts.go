package storage

import (
	"errors"
	"time"
)

// ErrNotModerator: only a broadcast's owner or one of its moderators may
// remove a message of its chat.
var ErrNotModerator = errors.New("storage: not the broadcast's owner or a moderator")

// Space is an audio Space (docs/spaces-broadcasts.md); EndedAt nil while
// it is live.
type Space struct {
	ID        string
	HostID    int64
	Title     string
	CreatedAt time.Time
	EndedAt   *time.Time
}

// Broadcast is a live video broadcast of UserID; EndedAt nil while it
// runs. Moderators may remove chat messages, as the owner may.
type Broadcast struct {
	ID         string
	UserID     int64
	Title      string
	Language   string
	Moderators []int64
	CreatedAt  time.Time
	EndedAt    *time.Time
}

// BroadcastMessage is a message of a broadcast's chat; RemovedAt is set
// once the owner or a moderator (RemovedBy) removed it.
type BroadcastMessage struct {
	ID          int64
	BroadcastID string
	UserID      int64
	Text        string
	CreatedAt   time.Time
	RemovedAt   *time.Time
	RemovedBy   int64
}
