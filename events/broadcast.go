package events

import (
	"encoding/json"
	"time"
)

// Event types of Spaces, broadcasts, news and OAuth grants (docs/activity.md,
// "Where events come from"; docs/spaces-broadcasts.md).
const (
	// SpacesStart: a user started a Space (`aviary admin space start`).
	// Payload: Space.
	SpacesStart Type = "spaces.start"
	// SpacesEnd: the host ended a Space. Payload: Space.
	SpacesEnd Type = "spaces.end"
	// BroadcastStart: a user started a live broadcast. Payload: Broadcast.
	BroadcastStart Type = "broadcast.start"
	// BroadcastEnd: the owner ended a broadcast. Payload: Broadcast.
	BroadcastEnd Type = "broadcast.end"
	// BroadcastChat: a chat message was sent in a broadcast. Payload:
	// BroadcastChatSent.
	BroadcastChat Type = "broadcast.chat"
	// BroadcastChatRemove: the owner or a moderator removed a chat
	// message. Payload: BroadcastChatRemoved.
	BroadcastChatRemove Type = "broadcast.chat.remove"
	// NewsNew: the news worker created a story. Payload: NewsStory.
	NewsNew Type = "news.new"
	// OAuthRevoke: a user's last live grant to an app ended. Payload:
	// OAuthRevoked.
	OAuthRevoke Type = "oauth.revoke"
)

// UserCard is a user as the event saw them (spaces and broadcast payloads
// show the host or the chat author as they were when the event happened).
type UserCard struct {
	ID              int64     `json:"id"`
	Username        string    `json:"username"`
	Name            string    `json:"name"`
	Description     string    `json:"description"`
	URL             string    `json:"url"`
	Location        string    `json:"location"`
	ProfileImageURL string    `json:"profile_image_url"`
	BannerURL       string    `json:"profile_banner_url"`
	Protected       bool      `json:"protected"`
	Verified        bool      `json:"verified"`
	CreatedAt       time.Time `json:"created_at"`
	Posts           int64     `json:"posts"`
	Likes           int64     `json:"likes"`
}

// Space is the payload of SpacesStart and SpacesEnd.
type Space struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Host  UserCard `json:"host"`
}

// Broadcast is the payload of BroadcastStart and BroadcastEnd; EndedAt is
// zero while it runs.
type Broadcast struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Language  string    `json:"language"`
	Owner     UserCard  `json:"owner"`
	CreatedAt time.Time `json:"created_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// BroadcastChatSent is the payload of BroadcastChat: Author sent message
// MessageID in broadcast BroadcastID of OwnerID.
type BroadcastChatSent struct {
	BroadcastID string   `json:"broadcast_id"`
	OwnerID     int64    `json:"owner_id"`
	MessageID   int64    `json:"message_id"`
	Text        string   `json:"text"`
	Author      UserCard `json:"author"`
}

// BroadcastChatRemoved is the payload of BroadcastChatRemove: RemovedBy
// (the owner or a moderator) removed message MessageID of AuthorID.
type BroadcastChatRemoved struct {
	BroadcastID string `json:"broadcast_id"`
	OwnerID     int64  `json:"owner_id"`
	MessageID   int64  `json:"message_id"`
	AuthorID    int64  `json:"author_id"`
	RemovedBy   int64  `json:"removed_by"`
}

// NewsStory is the payload of NewsNew: the story as created.
type NewsStory struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	Summary   string          `json:"summary"`
	Hook      string          `json:"hook"`
	Category  string          `json:"category"`
	Contexts  json.RawMessage `json:"contexts"`
	PostIDs   []int64         `json:"post_ids"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// OAuthRevoked is the payload of OAuthRevoke: UserID's last live grant to
// AppID ended at At.
type OAuthRevoked struct {
	UserID int64     `json:"user_id"`
	AppID  int64     `json:"app_id"`
	At     time.Time `json:"at"`
}
