package events

import "time"

// Social graph types (docs/social-graph.md): written by the follow, mute
// and block endpoints in the transaction of the change; a repeat (a follow
// of someone followed already, an unmute of someone not muted) writes
// nothing. Payload: Social.
const (
	FollowFollow   Type = "follow.follow"
	FollowUnfollow Type = "follow.unfollow"
	MuteMute       Type = "mute.mute"
	MuteUnmute     Type = "mute.unmute"
	BlockBlock     Type = "block.block"
	BlockUnblock   Type = "block.unblock"
)

// Social is the payload of the social graph types: SourceID followed,
// unfollowed, muted, unmuted, blocked or unblocked TargetID at At. Source
// and Target are both users as they were right after the change (their
// counters include it), which the activity events show.
type Social struct {
	SourceID int64      `json:"source_id"`
	TargetID int64      `json:"target_id"`
	At       time.Time  `json:"at"`
	Source   SocialUser `json:"source"`
	Target   SocialUser `json:"target"`
}

// SocialUser is a user's public profile and counters at the time of a
// social graph event.
type SocialUser struct {
	ID              int64     `json:"id"`
	Username        string    `json:"username"`
	Name            string    `json:"name"`
	CreatedAt       time.Time `json:"created_at"`
	Description     string    `json:"description,omitempty"`
	Location        string    `json:"location,omitempty"`
	URL             string    `json:"url,omitempty"`
	ProfileImageURL string    `json:"profile_image_url,omitempty"`
	Protected       bool      `json:"protected,omitempty"`
	Verified        bool      `json:"verified,omitempty"`
	Followers       int64     `json:"followers"`
	Following       int64     `json:"following"`
	Posts           int64     `json:"posts"`
	Likes           int64     `json:"likes"`
	Listed          int64     `json:"listed"`
}
