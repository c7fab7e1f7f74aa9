package storage

import "errors"

// Conversation settings of an ads post (who may reply).
const (
	ConversationEveryone       = "EVERYONE"
	ConversationFollowing      = "FOLLOWING"
	ConversationMentionedUsers = "MENTIONED_USERS"
)

// ListingAdsPosts is the list of an account's posts
// (GET /12/accounts/:id/tweets).
const ListingAdsPosts Listing = "ads_posts"

// ErrCardNotFound is CreateAdsPost's refusal of a card_uri that names no
// live card of the account.
var ErrCardNotFound = errors.New("card not found")

// AdsPostFields are what the advertising API records of a post beyond the
// post itself (docs/ads-posts.md).
type AdsPostFields struct {
	AccountID            string
	Name                 *string
	Nullcast             bool
	ConversationSettings string
	VideoCTA             *string
	VideoCTAValue        *string
	VideoTitle           *string
	VideoDescription     *string
}

// AdsPost is a post as the advertising API shows it: the post and its ads
// fields. A post made elsewhere (POST /2/tweets) has no ads row: Ads is
// then zero but for ConversationSettings (EVERYONE) and Nullcast (false).
type AdsPost struct {
	Post Post
	Ads  AdsPostFields
}

// AdsPostFilter narrows an account's posts list.
type AdsPostFilter struct {
	// AuthorID is the user whose posts are listed.
	AuthorID int64
	// PostIDs keeps only these posts (none: every post).
	PostIDs []int64
	// Timeline is ALL, NULLCAST or ORGANIC.
	Timeline string
	// NamePrefix keeps posts whose name starts with it, case-insensitively.
	NamePrefix string
	// WithMentionsAndReplies keeps replies and posts that start with a
	// mention (left out otherwise).
	WithMentionsAndReplies bool
}

// Timeline types of AdsPostFilter.
const (
	TimelineAll      = "ALL"
	TimelineNullcast = "NULLCAST"
	TimelineOrganic  = "ORGANIC"
)
