// Package render renders the core API's objects (posts, users, media)
// with the platform's fields and expansions, for both tiers: every API
// endpoint that answers with posts or users (lookup, search, streams)
// hydrates its records with a Hydrator, and the workers render the posts
// webhook stream links deliver with the same code, so every surface shows
// the same object the same way (docs/posts-fields.md). It knows no HTTP
// request and no API error: api/objects reads a request's parameters into
// Options and words the API's errors; ParseTweetQuery reads a stored
// query string (docs/architecture.md).
package render

import (
	"maps"
	"slices"
)

// Parameter names. PostFieldsParam is the description's (2.167) name of
// TweetFieldsParam on every REST endpoint answering with posts (the
// official SDK sends only it); both are accepted (docs/posts-fields.md).
const (
	TweetFieldsParam = "tweet.fields"
	PostFieldsParam  = "post.fields"
	UserFieldsParam  = "user.fields"
	MediaFieldsParam = "media.fields"
	PollFieldsParam  = "poll.fields"
	PlaceFieldsParam = "place.fields"
	ExpansionsParam  = "expansions"
)

// TweetFields are a post's fields: the platform's defaults (id, text,
// edit_history_tweet_ids) and every name clients send, in the classic
// ("tweet") spelling and the description's ("post") one.
var TweetFields = ObjectFields{
	Default: []string{"id", "text", "edit_history_tweet_ids"},
	Allowed: []string{"article", "article_title", "attachments", "author_id", "card_uri", "community_id",
		"context_annotations", "conversation_id", "created_at", "display_text_range", "edit_controls",
		"edit_history_tweet_ids", "entities", "geo", "id", "in_reply_to_user_id", "lang", "matched_media_notes",
		"media_metadata", "non_public_metrics", "note_post", "note_request_suggestions", "note_tweet",
		"organic_metrics", "paid_partnership", "possibly_sensitive", "promoted_metrics", "public_metrics",
		"referenced_tweets", "reply_settings", "scopes", "source", "suggested_source_links",
		"suggested_source_links_with_counts", "text", "withheld"},
}

// UserFields are a user's fields (defaults id, name, username).
var UserFields = ObjectFields{
	Default: []string{"id", "name", "username"},
	Allowed: []string{"affiliation", "confirmed_email", "connection_status", "created_at", "description", "entities",
		"id", "is_identity_verified", "location", "most_recent_tweet_id", "name", "parody", "pinned_tweet_id",
		"profile_banner_url", "profile_image_url", "protected", "public_metrics", "receives_your_dm",
		"subscribes_to_you", "subscription", "subscription_type", "url", "username", "verified",
		"verified_followers_count", "verified_type", "withheld"},
}

// MediaFields are a media object's fields (defaults media_key, type).
var MediaFields = ObjectFields{
	Default: []string{"media_key", "type"},
	Allowed: []string{"alt_text", "duration_ms", "height", "media_key", "non_public_metrics", "organic_metrics",
		"preview_image_url", "promoted_metrics", "public_metrics", "type", "url", "variants", "width"},
}

// PollFields and PlaceFields are accepted for clients' sake; Aviary has
// no polls or places to show yet, so they add nothing.
var (
	PollFields  = ObjectFields{Default: []string{"id", "options"}, Allowed: []string{"duration_minutes", "end_datetime", "id", "options", "voting_status"}}
	PlaceFields = ObjectFields{Default: []string{"full_name", "id"}, Allowed: []string{"contained_within", "country", "country_code", "full_name", "geo", "id", "name", "place_type"}}
)

// Post expansions. Aliases in the description's spelling map to these.
const (
	ExpandAuthor          = "author_id"
	ExpandReferenced      = "referenced_tweets.id"
	ExpandReferencedUsers = "referenced_tweets.id.author_id"
	ExpandReplyUser       = "in_reply_to_user_id"
	ExpandMedia           = "attachments.media_keys"
	ExpandPoll            = "attachments.poll_ids"
	ExpandPlace           = "geo.place_id"
	ExpandMentions        = "entities.mentions.username"
	ExpandEditHistory     = "edit_history_tweet_ids"
	ExpandPinned          = "pinned_tweet_id"
)

// tweetExpansions are the expansions of endpoints answering with posts:
// each accepted name and the expansion it means ("" accepted, nothing to
// expand: articles and communities are not modelled; polls and places
// have no objects to include, but their links are shown).
var tweetExpansions = map[string]string{
	ExpandAuthor: ExpandAuthor, ExpandReferenced: ExpandReferenced, ExpandReferencedUsers: ExpandReferencedUsers,
	ExpandReplyUser: ExpandReplyUser, ExpandMedia: ExpandMedia, ExpandMentions: ExpandMentions,
	ExpandEditHistory: ExpandEditHistory, "edit_history_post_ids": ExpandEditHistory, "referenced_posts": ExpandReferenced,
	ExpandPoll: ExpandPoll, ExpandPlace: ExpandPlace, "article.cover_media": "", "article.media_entities": "",
	"attachments.media_source_tweet": "", "username": "",
}

// linkMentions is the pseudo field showing only a post's mention entities:
// the link of entities.mentions.username when entities was not asked for.
const linkMentions = "entities.mentions"

// expansionLinks are the fields each expansion brings into every post (in
// data and includes.tweets) or user it shows, so a client can join the
// object to what the expansion put in includes (the author_id beside
// includes.users, as on the platform). referenced_tweets.id.author_id
// links twice: the referenced posts, then their authors. Aviary has no
// polls, so attachments.poll_ids has nothing to link.
var expansionLinks = map[string][]string{
	ExpandAuthor:          {"author_id"},
	ExpandReferenced:      {"referenced_tweets"},
	ExpandReferencedUsers: {"referenced_tweets", "author_id"},
	ExpandReplyUser:       {"in_reply_to_user_id"},
	ExpandMedia:           {"attachments"},
	ExpandPlace:           {"geo"},
	ExpandMentions:        {linkMentions},
	ExpandEditHistory:     {"edit_history_tweet_ids"},
	ExpandPinned:          {"pinned_tweet_id"},
}

// userExpansions are the expansions of endpoints answering with users.
var userExpansions = map[string]string{
	ExpandPinned: ExpandPinned, "pinned_post_id": ExpandPinned,
	"most_recent_tweet_id": "", "most_recent_post_id": "", "affiliation": "",
}

// The names each expansions parameter takes, sorted for error messages.
var (
	tweetExpansionNames = keys(tweetExpansions)
	userExpansionNames  = keys(userExpansions)
)

// TweetParams are the query parameters of endpoints answering with posts.
var TweetParams = []string{TweetFieldsParam, PostFieldsParam, UserFieldsParam, MediaFieldsParam, PollFieldsParam, PlaceFieldsParam, ExpansionsParam}

// UserParams are the query parameters of endpoints answering with users.
var UserParams = []string{UserFieldsParam, TweetFieldsParam, PostFieldsParam, ExpansionsParam}

// Options are what a request asked to see.
type Options struct {
	Tweet, User, Media FieldSet
	// Expand holds the expansions asked for (canonical names).
	Expand map[string]bool
}

// Expands reports whether expansion name was asked for.
func (o Options) Expands(name string) bool { return o.Expand[name] }

// ListReader reads one comma-separated fields or expansions parameter:
// the names it lists that allowed holds, each once, in the order sent (nil
// when the parameter is absent). A reader that validates records what is
// wrong with the parameter on its own (api/httpx.Query.List).
type ListReader func(param string, allowed []string) []string

// TweetOptions are the options of an endpoint answering with posts, its
// parameters read with list in a fixed order (so a validating reader
// reports their problems in that order).
func TweetOptions(list ListReader) Options {
	return readOptions(list, tweetExpansions, tweetExpansionNames)
}

// UserOptions are the options of an endpoint answering with users.
func UserOptions(list ListReader) Options {
	return readOptions(list, userExpansions, userExpansionNames)
}

func readOptions(list ListReader, expansions map[string]string, names []string) Options {
	// Each name is read on its own, so an error names the parameter the
	// client sent; given both, the post shows their union.
	tweet := append(list(TweetFieldsParam, TweetFields.Allowed), list(PostFieldsParam, TweetFields.Allowed)...)
	user := list(UserFieldsParam, UserFields.Allowed)
	o := Options{Media: MediaFields.With(list(MediaFieldsParam, MediaFields.Allowed)...)}
	list(PollFieldsParam, PollFields.Allowed)
	list(PlaceFieldsParam, PlaceFields.Allowed)
	o.Expand = map[string]bool{}
	for _, item := range list(ExpansionsParam, names) {
		if canonical := expansions[item]; canonical != "" {
			o.Expand[canonical] = true
		}
	}
	links := o.links()
	o.Tweet = TweetFields.With(append(tweet, links...)...)
	o.User = UserFields.With(append(user, links...)...)
	return o
}

// links are the fields o's expansions bring into the objects shown (post
// and user links never share a name, so one list serves both).
func (o Options) links() []string {
	var out []string
	for name := range o.Expand {
		out = append(out, expansionLinks[name]...)
	}
	return out
}

func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
