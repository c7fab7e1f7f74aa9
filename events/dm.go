package events

import "time"

// Direct message and XChat types (docs/direct-messages.md). Each is
// appended in the transaction of its change; workers/activity derives
// the activity events (dm.sent, dm.received, ...) from them.
const (
	// DMMessageCreate: a direct message was sent (POST
	// /2/dm_conversations/...). Payload: DMMessage.
	DMMessageCreate Type = "dm.message.create"
	// DMRead: a participant marked a conversation read up to a message.
	// Payload: DMMark.
	DMRead Type = "dm.read"
	// DMTyping: a participant is typing in a conversation. Payload: DMMark.
	DMTyping Type = "dm.indicate_typing"
	// ChatMessageCreate: an XChat message was sent. Payload: ChatMessage.
	ChatMessageCreate Type = "chat.message.create"
	// ChatJoin: a user joined an XChat conversation. Payload: ChatJoined.
	ChatJoin Type = "chat.conversation.join"
)

// DMUser is a user as a DM activity payload shows them: a snapshot taken
// when the event was written.
type DMUser struct {
	ID              int64     `json:"id"`
	Username        string    `json:"username"`
	Name            string    `json:"name"`
	CreatedAt       time.Time `json:"created_at"`
	Protected       bool      `json:"protected,omitempty"`
	Verified        bool      `json:"verified,omitempty"`
	Description     string    `json:"description,omitempty"`
	Location        string    `json:"location,omitempty"`
	URL             string    `json:"url,omitempty"`
	ProfileImageURL string    `json:"profile_image_url,omitempty"`
}

// DMMessage is the payload of DMMessageCreate: SenderID sent message
// EventID to RecipientIDs (every other participant of the conversation).
type DMMessage struct {
	EventID        int64     `json:"event_id"`
	ConversationID string    `json:"conversation_id"`
	SenderID       int64     `json:"sender_id"`
	RecipientIDs   []int64   `json:"recipient_ids"`
	Text           string    `json:"text"`
	MediaIDs       []int64   `json:"media_ids,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	Users          []DMUser  `json:"users"`
}

// DMMark is the payload of DMRead and DMTyping: UserID read (up to
// LastReadEventID) or is typing in ConversationID, whose other
// participants are RecipientIDs.
type DMMark struct {
	ConversationID  string    `json:"conversation_id"`
	UserID          int64     `json:"user_id"`
	RecipientIDs    []int64   `json:"recipient_ids"`
	LastReadEventID int64     `json:"last_read_event_id,omitempty"`
	At              time.Time `json:"at"`
	Users           []DMUser  `json:"users"`
}

// ChatMessage is the payload of ChatMessageCreate: SenderID sent message
// ID (a UUID) to RecipientID in ConversationID ("<sender>:<recipient>").
type ChatMessage struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id"`
	SenderID       int64     `json:"sender_id"`
	RecipientID    int64     `json:"recipient_id"`
	Text           string    `json:"text"`
	KeyVersion     int64     `json:"key_version"`
	CreatedAt      time.Time `json:"created_at"`
}

// ChatJoined is the payload of ChatJoin: UserID joined the conversation
// with PeerID.
type ChatJoined struct {
	ConversationID string    `json:"conversation_id"`
	UserID         int64     `json:"user_id"`
	PeerID         int64     `json:"peer_id"`
	KeyVersion     int64     `json:"key_version"`
	JoinedAt       time.Time `json:"joined_at"`
}
