package adsposts

import (
	"fmt"
	"html"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// LegacyTimeFormat is how the ads post object writes times: the platform's
// legacy form, "Sat Nov 28 03:00:00 +0000 2026", in UTC.
const LegacyTimeFormat = "Mon Jan 02 15:04:05 -0700 2006"

func legacyTime(p storage.Post) string { return p.CreatedAt.UTC().Format(LegacyTimeFormat) }

// Tweet types; Aviary has no drafts or scheduled posts (docs/ads-posts.md).
const tweetTypePublished = "PUBLISHED"

// compatLength is how many characters of text a compat-mode answer shows
// before truncating it.
const compatLength = 140

// postJSON is the ads post object (the spec's "Ads post (response)").
type postJSON struct {
	ID                   int64        `json:"id"`
	IDStr                string       `json:"id_str"`
	Text                 *string      `json:"text,omitempty"`
	FullText             *string      `json:"full_text,omitempty"`
	Name                 *string      `json:"name"`
	CreatedAt            string       `json:"created_at"`
	Truncated            bool         `json:"truncated"`
	Entities             entitiesJSON `json:"entities"`
	Source               string       `json:"source"`
	InReplyToStatusID    *int64       `json:"in_reply_to_status_id"`
	InReplyToStatusIDStr *string      `json:"in_reply_to_status_id_str"`
	InReplyToUserID      *int64       `json:"in_reply_to_user_id"`
	InReplyToUserIDStr   *string      `json:"in_reply_to_user_id_str"`
	InReplyToScreenName  *string      `json:"in_reply_to_screen_name"`
	User                 any          `json:"user"`
	Geo                  any          `json:"geo"`
	Coordinates          any          `json:"coordinates"`
	Place                any          `json:"place"`
	Contributors         any          `json:"contributors"`
	RetweetCount         int64        `json:"retweet_count"`
	FavoriteCount        int64        `json:"favorite_count"`
	Favorited            bool         `json:"favorited"`
	Retweeted            bool         `json:"retweeted"`
	Scopes               scopesJSON   `json:"scopes"`
	Lang                 string       `json:"lang"`
	DisplayTextRange     [2]int       `json:"display_text_range"`
	ConversationSettings *string      `json:"conversation_settings,omitempty"`
	Nullcast             bool         `json:"nullcast"`
	ScheduledStatus      *string      `json:"scheduled_status"`
	ScheduledAt          *string      `json:"scheduled_at"`
	TweetType            string       `json:"tweet_type"`
	TweetID              string       `json:"tweet_id"`
}

type scopesJSON struct {
	Followers bool `json:"followers"`
}

type entitiesJSON struct {
	Hashtags     []tagJSON     `json:"hashtags"`
	Symbols      []tagJSON     `json:"symbols"`
	UserMentions []mentionJSON `json:"user_mentions"`
	URLs         []urlJSON     `json:"urls"`
}

type tagJSON struct {
	Text    string `json:"text"`
	Indices [2]int `json:"indices"`
}

type mentionJSON struct {
	ScreenName string  `json:"screen_name"`
	Name       *string `json:"name"`
	ID         *int64  `json:"id"`
	IDStr      *string `json:"id_str"`
	Indices    [2]int  `json:"indices"`
}

type urlJSON struct {
	URL         string `json:"url"`
	ExpandedURL string `json:"expanded_url"`
	DisplayURL  string `json:"display_url"`
	Indices     [2]int `json:"indices"`
}

// trimmedUserJSON is the author when trim_user is set: its id only.
type trimmedUserJSON struct {
	ID    int64  `json:"id"`
	IDStr string `json:"id_str"`
}

// userJSON is the legacy user object of an untrimmed post.
type userJSON struct {
	ID                   int64   `json:"id"`
	IDStr                string  `json:"id_str"`
	Name                 string  `json:"name"`
	ScreenName           string  `json:"screen_name"`
	Location             *string `json:"location"`
	Description          string  `json:"description"`
	URL                  *string `json:"url"`
	Protected            bool    `json:"protected"`
	Verified             bool    `json:"verified"`
	FollowersCount       int64   `json:"followers_count"`
	FriendsCount         int64   `json:"friends_count"`
	ListedCount          int64   `json:"listed_count"`
	FavouritesCount      int64   `json:"favourites_count"`
	StatusesCount        int64   `json:"statuses_count"`
	CreatedAt            string  `json:"created_at"`
	ProfileImageURL      *string `json:"profile_image_url"`
	ProfileImageURLHTTPS *string `json:"profile_image_url_https"`
	DefaultProfileImage  bool    `json:"default_profile_image"`
	Lang                 *string `json:"lang"`
	UTCOffset            *int    `json:"utc_offset"`
	TimeZone             *string `json:"time_zone"`
}

// renderOptions are how one answer renders its posts.
type renderOptions struct {
	// created leaves out conversation_settings (a create answer does not
	// show it, reads do).
	created bool
	// trimUser keeps only the author's id.
	trimUser bool
	// fullText writes the text as full_text (reads, tweet_mode=extended);
	// else as text, truncated past 140 characters in compat mode.
	fullText, compat bool
	// authors are the full user objects, by id, when not trimmed.
	authors map[int64]storage.User
	metrics map[int64]storage.UserMetrics
}

// source is the post's source as the legacy object writes it: a link
// naming the app it was made with.
func source(p storage.Post) string {
	return fmt.Sprintf(`<a href="https://ads-api.x.com" rel="nofollow">%s</a>`, html.EscapeString(p.Source))
}

func render(ap storage.AdsPost, o renderOptions) postJSON {
	p := ap.Post
	id := httpx.FormatID(p.ID)
	n := utf8.RuneCountInString(p.Text)
	out := postJSON{ID: p.ID, IDStr: id, Name: ap.Ads.Name, CreatedAt: legacyTime(p), Entities: legacyEntities(p.Entities),
		Source: source(p), User: author(p.AuthorID, o), RetweetCount: p.Metrics.Reposts, FavoriteCount: p.Metrics.Likes,
		Scopes: scopesJSON{Followers: !ap.Ads.Nullcast}, Lang: p.Lang, DisplayTextRange: [2]int{0, n},
		Nullcast: ap.Ads.Nullcast, TweetType: tweetTypePublished, TweetID: id}
	text := p.Text
	switch {
	case o.fullText:
		out.FullText = &text
	case o.compat && n > compatLength:
		short := string([]rune(text)[:compatLength-1]) + "…"
		out.Text, out.Truncated = &short, true
	default:
		out.Text = &text
	}
	if !o.created {
		cs := ap.Ads.ConversationSettings
		out.ConversationSettings = &cs
	}
	if p.InReplyToPostID != 0 {
		rs, ru := httpx.FormatID(p.InReplyToPostID), httpx.FormatID(p.InReplyToUserID)
		out.InReplyToStatusID, out.InReplyToStatusIDStr = &p.InReplyToPostID, &rs
		out.InReplyToUserID, out.InReplyToUserIDStr = &p.InReplyToUserID, &ru
	}
	return out
}

// author is the post's user: its id when trimmed (or unknown), else the
// legacy user object.
func author(id int64, o renderOptions) any {
	u, ok := o.authors[id]
	if o.trimUser || !ok {
		return trimmedUserJSON{ID: id, IDStr: httpx.FormatID(id)}
	}
	m := o.metrics[id]
	out := userJSON{ID: u.ID, IDStr: httpx.FormatID(u.ID), Name: u.Name, ScreenName: u.Username, Description: u.Description,
		Protected: u.ProtectedAt != nil, Verified: u.Verified, FollowersCount: m.Followers, FriendsCount: m.Following,
		ListedCount: m.Listed, FavouritesCount: m.Likes, StatusesCount: m.Posts, CreatedAt: u.CreatedAt.UTC().Format(LegacyTimeFormat),
		DefaultProfileImage: u.ProfileImageURL == ""}
	if u.Location != "" {
		out.Location = &u.Location
	}
	if u.URL != "" {
		out.URL = &u.URL
	}
	if u.ProfileImageURL != "" {
		out.ProfileImageURL, out.ProfileImageURLHTTPS = &u.ProfileImageURL, &u.ProfileImageURL
	}
	return out
}

// legacyEntities writes entities the legacy way: hashtags, symbols
// (cashtags), user_mentions and urls, each with its [start, end) indices
// in code points; every list present, empty when there is none.
func legacyEntities(e storage.Entities) entitiesJSON {
	out := entitiesJSON{Hashtags: []tagJSON{}, Symbols: []tagJSON{}, UserMentions: []mentionJSON{}, URLs: []urlJSON{}}
	for _, h := range e.Hashtags {
		out.Hashtags = append(out.Hashtags, tagJSON{Text: h.Tag, Indices: [2]int{h.Start, h.End}})
	}
	for _, c := range e.Cashtags {
		out.Symbols = append(out.Symbols, tagJSON{Text: c.Tag, Indices: [2]int{c.Start, c.End}})
	}
	for _, m := range e.Mentions {
		mj := mentionJSON{ScreenName: m.Username, Indices: [2]int{m.Start, m.End}}
		if m.UserID != 0 {
			id, s := m.UserID, httpx.FormatID(m.UserID)
			mj.ID, mj.IDStr = &id, &s
		}
		out.UserMentions = append(out.UserMentions, mj)
	}
	for _, u := range e.URLs {
		out.URLs = append(out.URLs, urlJSON{URL: u.URL, ExpandedURL: u.ExpandedURL, DisplayURL: u.DisplayURL, Indices: [2]int{u.Start, u.End}})
	}
	return out
}
