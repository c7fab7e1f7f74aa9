package render

import (
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// TimeFormat is how the platform renders timestamps: UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Tweet is a post as the API shows it; only the fields asked for are set.
type Tweet struct {
	ID                  string         `json:"id"`
	Text                string         `json:"text"`
	EditHistoryTweetIDs []string       `json:"edit_history_tweet_ids,omitempty"`
	AuthorID            string         `json:"author_id,omitempty"`
	CreatedAt           string         `json:"created_at,omitempty"`
	ConversationID      string         `json:"conversation_id,omitempty"`
	InReplyToUserID     string         `json:"in_reply_to_user_id,omitempty"`
	ReferencedTweets    []Reference    `json:"referenced_tweets,omitempty"`
	Attachments         *Attachments   `json:"attachments,omitempty"`
	CardURI             string         `json:"card_uri,omitempty"`
	Entities            *Entities      `json:"entities,omitempty"`
	PublicMetrics       *TweetMetrics  `json:"public_metrics,omitempty"`
	EditControls        *EditControls  `json:"edit_controls,omitempty"`
	Lang                string         `json:"lang,omitempty"`
	Source              string         `json:"source,omitempty"`
	PossiblySensitive   *bool          `json:"possibly_sensitive,omitempty"`
	PaidPartnership     *bool          `json:"paid_partnership,omitempty"`
	ReplySettings       string         `json:"reply_settings,omitempty"`
	DisplayTextRange    []int          `json:"display_text_range,omitempty"`
	Geo                 *Geo           `json:"geo,omitempty"`
	ContextAnnotations  []struct{}     `json:"context_annotations,omitempty"`
	Withheld            map[string]any `json:"withheld,omitempty"`
}

// Reference is one referenced_tweets entry.
type Reference struct {
	Type string `json:"type"` // replied_to, quoted, retweeted
	ID   string `json:"id"`
}

// Reference types.
const (
	RefRepliedTo = "replied_to"
	RefQuoted    = "quoted"
	RefRetweeted = "retweeted"
)

// Attachments lists a post's media.
type Attachments struct {
	MediaKeys []string `json:"media_keys,omitempty"`
}

// Entities are the post's entities as the platform shows them.
type Entities struct {
	URLs     []URL     `json:"urls,omitempty"`
	Mentions []Mention `json:"mentions,omitempty"`
	Hashtags []Tag     `json:"hashtags,omitempty"`
	Cashtags []Tag     `json:"cashtags,omitempty"`
}

// URL is a link entity.
type URL struct {
	Start       int    `json:"start"`
	End         int    `json:"end"`
	URL         string `json:"url"`
	ExpandedURL string `json:"expanded_url"`
	DisplayURL  string `json:"display_url"`
}

// Mention is a mention entity; ID is set when the user exists.
type Mention struct {
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Username string `json:"username"`
	ID       string `json:"id,omitempty"`
}

// Tag is a hashtag or cashtag entity.
type Tag struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	Tag   string `json:"tag"`
}

// TweetMetrics are a post's public counters, under both the classic names
// clients read (retweet_count) and the description's (repost_count).
type TweetMetrics struct {
	RetweetCount    int64 `json:"retweet_count"`
	RepostCount     int64 `json:"repost_count"`
	ReplyCount      int64 `json:"reply_count"`
	LikeCount       int64 `json:"like_count"`
	QuoteCount      int64 `json:"quote_count"`
	BookmarkCount   int64 `json:"bookmark_count"`
	ImpressionCount int64 `json:"impression_count"`
}

// EditControls say how much longer a post can be edited.
type EditControls struct {
	EditsRemaining int64  `json:"edits_remaining"`
	IsEditEligible bool   `json:"is_edit_eligible"`
	EditableUntil  string `json:"editable_until"`
}

// Geo is a post's place.
type Geo struct {
	PlaceID string `json:"place_id"`
}

// User is a user as the API shows it.
type User struct {
	ID              string       `json:"id"`
	Name            string       `json:"name"`
	Username        string       `json:"username"`
	CreatedAt       string       `json:"created_at,omitempty"`
	Description     *string      `json:"description,omitempty"`
	Location        string       `json:"location,omitempty"`
	URL             *string      `json:"url,omitempty"`
	ProfileImageURL string       `json:"profile_image_url,omitempty"`
	Protected       *bool        `json:"protected,omitempty"`
	Verified        *bool        `json:"verified,omitempty"`
	VerifiedType    string       `json:"verified_type,omitempty"`
	PinnedTweetID   string       `json:"pinned_tweet_id,omitempty"`
	PublicMetrics   *UserMetrics `json:"public_metrics,omitempty"`
}

// UserMetrics are a user's public counters, under both the classic name
// tweet_count and the description's post_count.
type UserMetrics struct {
	FollowersCount int64 `json:"followers_count"`
	FollowingCount int64 `json:"following_count"`
	TweetCount     int64 `json:"tweet_count"`
	PostCount      int64 `json:"post_count"`
	ListedCount    int64 `json:"listed_count"`
	LikeCount      int64 `json:"like_count"`
}

// Media is a media object as the API shows it.
type Media struct {
	MediaKey      string        `json:"media_key"`
	Type          string        `json:"type"`
	Width         int           `json:"width,omitempty"`
	Height        int           `json:"height,omitempty"`
	DurationMS    int64         `json:"duration_ms,omitempty"`
	AltText       string        `json:"alt_text,omitempty"`
	PublicMetrics *MediaMetrics `json:"public_metrics,omitempty"`
	// URL is a photo's image; PreviewImageURL a video's or animated
	// GIF's poster frame (MediaURLs).
	URL             string `json:"url,omitempty"`
	PreviewImageURL string `json:"preview_image_url,omitempty"`
}

// MediaMetrics are a video's public counters.
type MediaMetrics struct {
	ViewCount int64 `json:"view_count"`
}

// Includes are the objects expansions add.
type Includes struct {
	Users  []User  `json:"users,omitempty"`
	Tweets []Tweet `json:"tweets,omitempty"`
	Media  []Media `json:"media,omitempty"`
}

// Empty reports whether nothing was added.
func (i *Includes) Empty() bool {
	return i == nil || len(i.Users)+len(i.Tweets)+len(i.Media) == 0
}

// tweetContext is what rendering a post needs beyond the post.
type tweetContext struct {
	fields FieldSet
	media  map[int64]storage.Media
	now    time.Time
}

// renderTweet shows p with the fields c asks for.
func renderTweet(p storage.Post, c tweetContext) Tweet {
	f := c.fields
	t := Tweet{ID: ids.Format(p.ID), Text: p.Text}
	if f.Has("edit_history_tweet_ids") {
		t.EditHistoryTweetIDs = formatIDs(editHistory(p))
	}
	if f.Has("author_id") {
		t.AuthorID = ids.Format(p.AuthorID)
	}
	if f.Has("created_at") {
		t.CreatedAt = FormatTime(p.CreatedAt)
	}
	if f.Has("conversation_id") {
		t.ConversationID = ids.Format(p.ConversationID)
	}
	if f.Has("in_reply_to_user_id") && p.InReplyToUserID != 0 {
		t.InReplyToUserID = ids.Format(p.InReplyToUserID)
	}
	if f.Has("referenced_tweets") {
		t.ReferencedTweets = references(p)
	}
	if f.Has("attachments") {
		t.Attachments = attachments(p, c.media)
	}
	if f.Has("card_uri") {
		t.CardURI = p.CardURI
	}
	if f.Has("entities") && !p.Entities.Empty() {
		t.Entities = renderEntities(p.Entities)
	} else if f.Has(linkMentions) && len(p.Entities.Mentions) > 0 {
		t.Entities = &Entities{Mentions: renderEntities(storage.Entities{Mentions: p.Entities.Mentions}).Mentions}
	}
	if f.Has("public_metrics") {
		m := p.Metrics
		t.PublicMetrics = &TweetMetrics{RetweetCount: m.Reposts, RepostCount: m.Reposts, ReplyCount: m.Replies, LikeCount: m.Likes, QuoteCount: m.Quotes}
	}
	if f.Has("edit_controls") {
		t.EditControls = editControls(p, c.now)
	}
	if f.Has("lang") {
		t.Lang = p.Lang
	}
	if f.Has("source") {
		t.Source = p.Source
	}
	if f.Has("possibly_sensitive") {
		t.PossiblySensitive = &p.PossiblySensitive
	}
	if f.Has("paid_partnership") {
		t.PaidPartnership = &p.PaidPartnership
	}
	if f.Has("reply_settings") {
		t.ReplySettings = "everyone"
	}
	if f.Has("display_text_range") {
		t.DisplayTextRange = []int{0, utf8.RuneCountInString(p.Text)}
	}
	if f.Has("geo") && p.PlaceID != "" {
		t.Geo = &Geo{PlaceID: p.PlaceID}
	}
	return t
}

// editHistory is the post's versions, oldest first (itself when unknown).
func editHistory(p storage.Post) []int64 {
	if len(p.EditHistory) == 0 {
		return []int64{p.ID}
	}
	return p.EditHistory
}

func formatIDs(list []int64) []string {
	out := make([]string, len(list))
	for i, id := range list {
		out[i] = ids.Format(id)
	}
	return out
}

func references(p storage.Post) []Reference {
	var refs []Reference
	add := func(kind string, id int64) {
		if id != 0 {
			refs = append(refs, Reference{Type: kind, ID: ids.Format(id)})
		}
	}
	add(RefRetweeted, p.RepostOfID)
	add(RefQuoted, p.QuoteOfID)
	add(RefRepliedTo, p.InReplyToPostID)
	return refs
}

func attachments(p storage.Post, media map[int64]storage.Media) *Attachments {
	var keys []string
	for _, id := range p.MediaIDs {
		if m, ok := media[id]; ok {
			keys = append(keys, m.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &Attachments{MediaKeys: keys}
}

func renderEntities(e storage.Entities) *Entities {
	out := &Entities{}
	for _, u := range e.URLs {
		out.URLs = append(out.URLs, URL(u))
	}
	for _, m := range e.Mentions {
		r := Mention{Start: m.Start, End: m.End, Username: m.Username}
		if m.UserID != 0 {
			r.ID = ids.Format(m.UserID)
		}
		out.Mentions = append(out.Mentions, r)
	}
	for _, h := range e.Hashtags {
		out.Hashtags = append(out.Hashtags, Tag(h))
	}
	for _, c := range e.Cashtags {
		out.Cashtags = append(out.Cashtags, Tag(c))
	}
	return out
}

// editControls: a post may be edited storage.MaxEdits times within
// storage.EditWindow of its first version; reposts never.
func editControls(p storage.Post, now time.Time) *EditControls {
	history := editHistory(p)
	until := EditableUntil(p)
	remaining := int64(storage.MaxEdits - (len(history) - 1))
	eligible := !p.IsRepost() && remaining > 0 && now.Before(until) && p.SupersededAt == nil
	if !eligible {
		remaining = max(remaining, 0)
	}
	return &EditControls{EditsRemaining: remaining, IsEditEligible: eligible, EditableUntil: FormatTime(until)}
}

// EditableUntil is when p's edit window closes: storage.EditWindow after
// its first version was created (ids are time-ordered, so the first
// version's id tells when).
func EditableUntil(p storage.Post) time.Time {
	history := editHistory(p)
	if history[0] == p.ID {
		return p.CreatedAt.Add(storage.EditWindow)
	}
	return ids.Time(history[0]).Add(storage.EditWindow)
}

// renderUser shows u with the fields f asks for; metrics are needed only
// for public_metrics.
func renderUser(u storage.User, metrics storage.UserMetrics, f FieldSet) User {
	out := User{ID: ids.Format(u.ID), Name: u.Name, Username: u.Username}
	if f.Has("created_at") {
		out.CreatedAt = FormatTime(u.CreatedAt)
	}
	if f.Has("description") {
		out.Description = &u.Description
	}
	if f.Has("location") {
		out.Location = u.Location
	}
	if f.Has("url") {
		out.URL = &u.URL
	}
	if f.Has("profile_image_url") {
		out.ProfileImageURL = u.ProfileImageURL
	}
	if f.Has("protected") {
		protected := u.ProtectedAt != nil
		out.Protected = &protected
	}
	if f.Has("verified") {
		out.Verified = &u.Verified
	}
	if f.Has("verified_type") {
		out.VerifiedType = "none"
		if u.Verified {
			out.VerifiedType = "blue"
		}
	}
	if f.Has("pinned_tweet_id") && u.PinnedPostID != 0 {
		out.PinnedTweetID = ids.Format(u.PinnedPostID)
	}
	if f.Has("public_metrics") {
		out.PublicMetrics = &UserMetrics{FollowersCount: metrics.Followers, FollowingCount: metrics.Following,
			TweetCount: metrics.Posts, PostCount: metrics.Posts, ListedCount: metrics.Listed, LikeCount: metrics.Likes}
	}
	return out
}

// renderMedia shows m with the fields f asks for (Aviary's media kinds are
// the platform's media types); urls builds url and preview_image_url (nil:
// neither is shown).
func renderMedia(m storage.Media, f FieldSet, urls *MediaURLs) Media {
	out := Media{MediaKey: m.Key, Type: m.Kind}
	if f.Has("width") {
		out.Width = m.Width
	}
	if f.Has("height") {
		out.Height = m.Height
	}
	if f.Has("duration_ms") && m.Kind != storage.MediaPhoto {
		out.DurationMS = m.DurationMS
	}
	if f.Has("alt_text") {
		out.AltText = m.AltText
	}
	if f.Has("public_metrics") && m.Kind == storage.MediaVideo {
		out.PublicMetrics = &MediaMetrics{ViewCount: m.ViewCount}
	}
	if f.Has("url") && m.Kind == storage.MediaPhoto {
		out.URL = urls.Output(m)
	}
	if f.Has("preview_image_url") && m.Kind != storage.MediaPhoto {
		out.PreviewImageURL = urls.Preview(m)
	}
	return out
}
