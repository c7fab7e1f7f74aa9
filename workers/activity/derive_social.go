package activity

import (
	"encoding/json"
	"fmt"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage/ids"
)

// isSocial reports whether t is a social graph type (events/social.go).
func isSocial(t events.Type) bool {
	switch t {
	case events.FollowFollow, events.FollowUnfollow, events.MuteMute, events.MuteUnmute, events.BlockBlock, events.BlockUnblock:
		return true
	}
	return false
}

// deriveSocial derives the activity events of a follow, mute or block
// (docs/social-graph.md):
//   - follow.follow and follow.unfollow are public and go to both users,
//     the follower and the followed (the reference: "when the filtered
//     user follows another user, or is followed"), without a direction;
//     never to a user who was protected at the time (a protected account's
//     follows are not public);
//   - mute.* and block.* are private and go to the acting user only,
//     never to the muted or blocked one.
//
// The payload is the reference's {"source": {"data": user}, "target":
// {"data": user}}, both users as they were right after the change; it is
// delivered only while both are visible to the public.
func deriveSocial(e events.Event) ([]Derived, error) {
	s, err := decode[events.Social](e)
	if err != nil {
		return nil, err
	}
	body, err := socialBody(s)
	if err != nil {
		return nil, fmt.Errorf("render %s event %d: %w", e.Type, e.Seq, err)
	}
	one := func(user int64) Derived {
		return Derived{Type: string(e.Type), UserID: user, Body: body, Visible: []int64{s.SourceID, s.TargetID}}
	}
	if e.Type != events.FollowFollow && e.Type != events.FollowUnfollow {
		return []Derived{one(s.SourceID)}, nil
	}
	var out []Derived
	if !s.Source.Protected {
		out = append(out, one(s.SourceID))
	}
	if !s.Target.Protected {
		out = append(out, one(s.TargetID))
	}
	return out, nil
}

// socialUserData is a user of a social payload: {"data": user}.
type socialUserData struct {
	Data render.User `json:"data"`
}

// socialBody is the payload of a social graph event.
func socialBody(s events.Social) (json.RawMessage, error) {
	return json.Marshal(struct {
		Source socialUserData `json:"source"`
		Target socialUserData `json:"target"`
	}{socialUserData{socialRender(s.Source)}, socialUserData{socialRender(s.Target)}})
}

// socialRender shows a user of a social event with the fields of the
// reference's examples that Aviary has (as PostQuery's user.fields).
func socialRender(u events.SocialUser) render.User {
	verifiedType := "none"
	if u.Verified {
		verifiedType = "blue"
	}
	description, url, protected, verified := u.Description, u.URL, u.Protected, u.Verified
	return render.User{
		ID: ids.Format(u.ID), Name: u.Name, Username: u.Username, CreatedAt: render.FormatTime(u.CreatedAt),
		Description: &description, Location: u.Location, URL: &url, ProfileImageURL: u.ProfileImageURL,
		Protected: &protected, Verified: &verified, VerifiedType: verifiedType,
		PublicMetrics: &render.UserMetrics{FollowersCount: u.Followers, FollowingCount: u.Following,
			TweetCount: u.Posts, PostCount: u.Posts, ListedCount: u.Listed, LikeCount: u.Likes},
	}
}
