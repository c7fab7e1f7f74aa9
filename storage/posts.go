package storage

import (
	"time"

	"github.com/aviary-dev/aviary/domain/searchquery"
)

// Post is a post ("tweet") with its author, references, entities and
// counters (docs/posts.md).
type Post struct {
	ID              int64
	AuthorID        int64
	AppID           int64
	Text            string
	PaidPartnership bool
	MediaIDs        []int64 // attached media, in order
	// Lang is the detected BCP 47 language tag, "und" when unknown.
	Lang string
	// Source is the name of the app the post was made with.
	Source string
	// ConversationID is the first post of the conversation: the post itself
	// unless it replies to another.
	ConversationID int64
	// References; 0 means none.
	InReplyToPostID int64
	InReplyToUserID int64
	QuoteOfID       int64
	RepostOfID      int64
	// EditRootID is the first version of an edited post (the post itself
	// for an original). SupersededAt is set once a newer version replaced
	// this one.
	EditRootID   int64
	SupersededAt *time.Time
	// EditHistory lists every version's id, oldest first (the post itself
	// when never edited); filled by PostsByIDs.
	EditHistory []int64
	PlaceID     string
	// CardURI is the ads card the post shows (card://<id>; "" for none),
	// set by ads posts (docs/ads-posts.md).
	CardURI           string
	PossiblySensitive bool
	Entities          Entities
	Metrics           PostMetrics
	CreatedAt         time.Time
	DeletedAt         *time.Time
	// Terms are the normalized entity values the search operators match;
	// CreatePost and EditPost derive them from Entities when the caller
	// leaves them all empty. A repost has none. They are written only:
	// every post a read or write returns has none (they serve the search
	// indexes, not the answers).
	Terms PostTerms
}

// PostTerms are a post's lower-cased entity values as the search operators
// (@, #, $, url:) match them: mention usernames, hashtags and cashtags
// without their sign, and url: terms (posttext.URLTerms).
type PostTerms struct {
	Mentions []string
	Hashtags []string
	Cashtags []string
	URLTerms []string
}

// Empty reports whether there is no term at all.
func (t PostTerms) Empty() bool {
	return len(t.Mentions)+len(t.Hashtags)+len(t.Cashtags)+len(t.URLTerms) == 0
}

// IsRepost reports whether the post is a repost of another.
func (p Post) IsRepost() bool { return p.RepostOfID != 0 }

// PostMetrics are a post's public counters.
type PostMetrics struct {
	Likes   int64
	Reposts int64
	Replies int64
	Quotes  int64
}

// Entities are what a post's text mentions, with code point offsets into
// the text (start inclusive, end exclusive), as the platform reports them.
type Entities struct {
	URLs     []URLEntity     `json:"urls,omitempty"`
	Mentions []MentionEntity `json:"mentions,omitempty"`
	Hashtags []TagEntity     `json:"hashtags,omitempty"`
	Cashtags []TagEntity     `json:"cashtags,omitempty"`
}

// Empty reports whether the text has no entity.
func (e Entities) Empty() bool {
	return len(e.URLs)+len(e.Mentions)+len(e.Hashtags)+len(e.Cashtags) == 0
}

// URLEntity is a link in a post's text.
type URLEntity struct {
	Start       int    `json:"start"`
	End         int    `json:"end"`
	URL         string `json:"url"`
	ExpandedURL string `json:"expanded_url"`
	DisplayURL  string `json:"display_url"`
}

// MentionEntity is an @username in a post's text; UserID is the mentioned
// user's id when such a user exists (0 otherwise).
type MentionEntity struct {
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Username string `json:"username"`
	UserID   int64  `json:"id,omitempty"`
}

// TagEntity is a #hashtag or $cashtag (Tag without its sign).
type TagEntity struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	Tag   string `json:"tag"`
}

// PostStatus is what compliance needs to know about one post id.
type PostStatus struct {
	ID        int64
	CreatedAt time.Time
	DeletedAt *time.Time
	Author    User
}

// Edit rules (spec "Limits: Post edit"): a premium author may edit their own
// post within EditWindow of the first version's creation, at most MaxEdits
// times.
const (
	EditWindow = time.Hour
	MaxEdits   = 5
)

// EditRefusal is why EditPost refused an edit; it wraps ErrConflict, so
// errors.Is(err, ErrConflict) holds and errors.As gives the reason.
type EditRefusal string

// Edit refusals.
const (
	EditRefusedDeleted   EditRefusal = "the post is deleted"
	EditRefusedNotLatest EditRefusal = "not the latest version of the post"
	EditRefusedAuthor    EditRefusal = "the post is another user's"
	EditRefusedWindow    EditRefusal = "the edit window closed"
	EditRefusedLimit     EditRefusal = "the post was edited the most times allowed"
	EditRefusedRepost    EditRefusal = "a repost can not be edited"
)

func (r EditRefusal) Error() string { return "edit refused: " + string(r) }

// Unwrap makes an EditRefusal an ErrConflict.
func (r EditRefusal) Unwrap() error { return ErrConflict }

// Search sort orders.
const (
	SortRecency   = "recency"
	SortRelevancy = "relevancy"
)

// PostSearch is a search of live, latest-version posts (docs/search.md).
type PostSearch struct {
	Query *searchquery.Query
	// Start and End bound created_at: Start <= created_at < End; zero
	// values leave that side open.
	Start, End time.Time
	// SinceID and UntilID bound ids: SinceID < id < UntilID; 0 leaves that
	// side open.
	SinceID, UntilID int64
	// Limit is the page size.
	Limit int
	// SortOrder is SortRecency (newest first) or SortRelevancy.
	SortOrder string
	// After continues after the last post of the previous page.
	After *PostCursor
	// ViewerID is the user-context caller (0 for app-only): posts of
	// protected authors are shown only to the author.
	ViewerID int64
}

// PostCursor is where a page of search results ended: the last post's id
// and, for SortRelevancy, its score.
type PostCursor struct {
	Score int64
	ID    int64
}

// PostPage is one page of search results; Next is nil on the last page.
type PostPage struct {
	Posts []Post
	Next  *PostCursor
}

// Count granularities.
const (
	GranularityMinute = "minute"
	GranularityHour   = "hour"
	GranularityDay    = "day"
)

// PostCount counts the posts a search would find, per time bucket.
type PostCount struct {
	Query            *searchquery.Query
	Start, End       time.Time // both set; buckets cover [Start, End)
	SinceID, UntilID int64
	Granularity      string
	ViewerID         int64
}

// CountBucket is the number of matching posts created in [Start, End).
type CountBucket struct {
	Start, End time.Time
	Count      int64
}
