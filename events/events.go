// Package events is the event log's contract (docs/events.md): the event
// types, their payloads, and how readers walk the log. It is a leaf: the
// standard library only.
//
// Every change an event can report appends one Event in the same
// PostgreSQL transaction as the change itself (storage/postgres), so no
// event is lost and none describes a change that rolled back. Events carry
// a Seq that grows in commit order: a reader that has seen every event up
// to Seq N never finds a later-committed event at or below N. Seq is the
// event's stable id; receivers de-duplicate on it.
package events

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// Type is an event type, dot-named as the platform names them.
type Type string

// Event types the log holds today (spec "Events"). Likes, follows, profile
// changes, mutes, blocks and direct messages join with their features.
const (
	// PostCreate: a post was created (an edit creates the next version,
	// also a PostCreate, with Post.EditOfID set). Payload: Post.
	PostCreate Type = "post.create"
	// PostDelete: a post was deleted (every version of an edited post; a
	// repost undone). Payload: PostDeleted.
	PostDelete Type = "post.delete"
	// LikeCreate: a user liked a post (a new like; a repeat writes
	// nothing). Payload: Like.
	LikeCreate Type = "like.create"
)

// Profile update types: one event per changed field, written by `aviary
// admin user update` (docs/activity.md). Payload: ProfileUpdated.
const (
	ProfileUpdateBio            Type = "profile.update.bio"
	ProfileUpdateScreenname     Type = "profile.update.screenname"
	ProfileUpdateHandle         Type = "profile.update.handle"
	ProfileUpdateURL            Type = "profile.update.url"
	ProfileUpdateGeo            Type = "profile.update.geo"
	ProfileUpdatePicture        Type = "profile.update.profile_picture"
	ProfileUpdateBanner         Type = "profile.update.banner_picture"
	ProfileUpdateVerifiedBadge  Type = "profile.update.verified_badge"
	ProfileUpdateAffiliateBadge Type = "profile.update.affiliate_badge"
)

// ProfileUpdatePrefix starts every profile update type.
const ProfileUpdatePrefix = "profile.update."

// Event is one entry of the log.
type Event struct {
	// Seq is the event's position in the log and its stable id.
	Seq  int64
	Type Type
	// AppID is the app the change was made with, UserID the acting user,
	// SubjectID the changed record (a post id for post events); 0 when
	// none.
	AppID     int64
	UserID    int64
	SubjectID int64
	// Payload is the type's payload as JSON (Post, PostDeleted).
	Payload   []byte
	CreatedAt time.Time
}

// ID is the event's id as receivers see it: Seq in decimal.
func (e Event) ID() string { return strconv.FormatInt(e.Seq, 10) }

// Post is the payload of PostCreate: what a matcher needs to decide on the
// post without reading the store. Entity values are lower-cased as the
// search operators match them.
type Post struct {
	ID                int64    `json:"id"`
	AuthorID          int64    `json:"author_id"`
	AuthorUsername    string   `json:"author_username"`
	AppID             int64    `json:"app_id"`
	Text              string   `json:"text"`
	Lang              string   `json:"lang"`
	ConversationID    int64    `json:"conversation_id"`
	InReplyToPostID   int64    `json:"in_reply_to_post_id,omitempty"`
	InReplyToUserID   int64    `json:"in_reply_to_user_id,omitempty"`
	InReplyToUsername string   `json:"in_reply_to_username,omitempty"`
	QuoteOfID         int64    `json:"quote_of_id,omitempty"`
	RepostOfID        int64    `json:"repost_of_id,omitempty"`
	EditOfID          int64    `json:"edit_of_id,omitempty"`
	MediaCount        int      `json:"media_count,omitempty"`
	Mentions          []string `json:"mentions,omitempty"`
	// MentionIDs are the ids of the users the post mentions explicitly
	// (post.mention.create): its text's resolved mentions, without a
	// reply's leading run of mentions (the implicit reply mentions) and
	// none for a repost.
	MentionIDs []int64 `json:"mention_ids,omitempty"`
	// QuoteOfAuthorID and RepostOfAuthorID are the authors of the quoted
	// and reposted posts (post.quote.create, post.repost.create).
	QuoteOfAuthorID  int64     `json:"quote_of_author_id,omitempty"`
	RepostOfAuthorID int64     `json:"repost_of_author_id,omitempty"`
	Hashtags         []string  `json:"hashtags,omitempty"`
	Cashtags         []string  `json:"cashtags,omitempty"`
	URLTerms         []string  `json:"url_terms,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	// For the filtered stream's operators (docs/streams-rules.md):
	// AuthorVerified is whether the author was verified when the post was
	// made (is:verified); Source the app's name (source:); PlaceID the
	// tagged place (place:, has:geo); MediaKinds the attached media's
	// kinds, photo, video, animated_gif (has:images, has:video_link);
	// RepostOfUsername the reposted post's author (retweets_of:).
	AuthorVerified   bool     `json:"author_verified,omitempty"`
	Source           string   `json:"source,omitempty"`
	PlaceID          string   `json:"place_id,omitempty"`
	MediaKinds       []string `json:"media_kinds,omitempty"`
	RepostOfUsername string   `json:"repost_of_username,omitempty"`
	// Quoted is the content of the post a quote quotes (nil for other
	// posts): the filtered stream matches a quote on its own content and
	// on the quoted post's.
	Quoted *QuotedPost `json:"quoted,omitempty"`
}

// QuotedPost is the matchable content of a quoted post: its text and
// entity terms (normalized as in Post).
type QuotedPost struct {
	Text     string   `json:"text"`
	Mentions []string `json:"mentions,omitempty"`
	Hashtags []string `json:"hashtags,omitempty"`
	Cashtags []string `json:"cashtags,omitempty"`
	URLTerms []string `json:"url_terms,omitempty"`
}

// PostDeleted is the payload of PostDelete.
type PostDeleted struct {
	ID        int64     `json:"id"`
	AuthorID  int64     `json:"author_id"`
	DeletedAt time.Time `json:"deleted_at"`
}

// Like is the payload of LikeCreate: UserID liked post PostID (the
// version of the chain the like names) of PostAuthorID.
type Like struct {
	UserID        int64     `json:"user_id"`
	PostID        int64     `json:"post_id"`
	PostAuthorID  int64     `json:"post_author_id"`
	PostCreatedAt time.Time `json:"post_created_at"`
	LikedAt       time.Time `json:"liked_at"`
}

// ProfileUpdated is the payload of the profile.update.* types: the field's
// value before and after, strings ("true"/"false" for the badges, as the
// platform's schema has them). Older logs may hold booleans; the activity
// sink renders those as the strings too.
type ProfileUpdated struct {
	UserID int64 `json:"user_id"`
	Before any   `json:"before"`
	After  any   `json:"after"`
}

// Log reads the event log (storage/postgres.DB implements it).
type Log interface {
	// EventsAfter returns up to limit committed events with Seq > after,
	// in Seq order.
	EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error)
	// EventsSince returns up to limit committed events with Seq > after
	// created at or after since, in Seq order (backfill).
	EventsSince(ctx context.Context, since time.Time, after int64, limit int) ([]Event, error)
	// EventHead is the Seq of the newest committed event, 0 when none.
	EventHead(ctx context.Context) (int64, error)
}

// RuleHit is one filtered-stream rule of one app that a post matched.
type RuleHit struct {
	AppID  int64  `json:"app_id"`
	RuleID int64  `json:"rule_id"`
	Tag    string `json:"tag,omitempty"`
}

// Match is what the dispatcher publishes for a post that matched at least
// one rule: every API replica holding a stream of an app among Rules
// delivers the post to it with the rules of that app it matched. One Match
// per event (all apps together), so a reader skips what it has seen by
// Seq alone.
type Match struct {
	Seq    int64     `json:"seq"`
	PostID int64     `json:"post_id"`
	Rules  []RuleHit `json:"rules"`
}

// Activity is one activity event rendered for one app's subscription
// (docs/activity.md): the dispatcher's activity sink publishes it after
// recording its webhook deliveries, and every API replica holding an
// activity stream of AppID writes Body (the envelope {data:{event_uuid,
// filter, event_type, tag, payload, includes}}) as one line. Seq is the
// log event it was derived from; one event may yield several Activities
// for one app (several subscriptions), told apart by SubscriptionID.
type Activity struct {
	Seq            int64           `json:"seq"`
	AppID          int64           `json:"app_id"`
	SubscriptionID int64           `json:"subscription_id"`
	Body           json.RawMessage `json:"body"`
}
