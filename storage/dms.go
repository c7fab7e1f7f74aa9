package storage

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// DM event types (GET /2/dm_events event_types).
const (
	DMMessageCreate     = "MessageCreate"
	DMParticipantsJoin  = "ParticipantsJoin"
	DMParticipantsLeave = "ParticipantsLeave"
)

var (
	// ErrDMRecipient: the recipient is unknown, not active, or the sender.
	ErrDMRecipient = errors.New("storage: direct message recipient not found")
	// ErrDMMedia: an attached media id is not the sender's finished upload.
	ErrDMMedia = errors.New("storage: direct message media not found")
	// ErrDMNotSender: only a message's sender may delete it.
	ErrDMNotSender = errors.New("storage: only the sender may delete a direct message")
)

// DMEvent is one event of a conversation.
type DMEvent struct {
	ID             int64
	ConversationID string
	Type           string
	SenderID       int64
	Text           string
	MediaIDs       []int64
	MediaKeys      []string
	ParticipantIDs []int64
	CreatedAt      time.Time
}

// DMSend is a message to send: to ConversationID, or, when it is "", to
// the one-to-one conversation with ParticipantID.
type DMSend struct {
	SenderID       int64
	AppID          int64
	ConversationID string
	ParticipantID  int64
	Text           string
	MediaIDs       []int64
}

// DMListing selects a user's events: ConversationID "" for all their
// conversations; Types nil for every type; BeforeID 0 for the newest.
type DMListing struct {
	ConversationID string
	Types          []string
	BeforeID       int64
	Limit          int
}

// ChatMessage is an XChat message as stored.
type ChatMessage struct {
	ID             string
	ConversationID string
	SenderID       int64
	RecipientID    int64
	Text           string
	CreatedAt      time.Time
}

// OneToOneConversationID is the platform's id of the one-to-one
// conversation of users a and b: "<smaller id>-<larger id>".
func OneToOneConversationID(a, b int64) string {
	if a > b {
		a, b = b, a
	}
	return strconv.FormatInt(a, 10) + "-" + strconv.FormatInt(b, 10)
}

// IsOneToOneConversationID reports whether conv has the shape of a
// one-to-one conversation's id ("<id>-<id>"; a group's is digits only).
func IsOneToOneConversationID(conv string) bool {
	return strings.Contains(conv, "-")
}

// ChatConversationID is the id of the XChat conversation of users a and
// b: "<larger id>:<smaller id>", as the reference's examples show it.
func ChatConversationID(a, b int64) string {
	if a < b {
		a, b = b, a
	}
	return strconv.FormatInt(a, 10) + ":" + strconv.FormatInt(b, 10)
}
