package activity

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/events"
)

// TestDeriveSocial: follows go to the follower and the followed (not to a
// protected one), mutes and blocks to the acting user only; every one
// carries the reference's source/target payload and needs both users
// visible.
func TestDeriveSocial(t *testing.T) {
	t.Parallel()
	const a, b = 1, 2
	pair := func(typ events.Type, sourceProtected, targetProtected bool) events.Event {
		return event(t, typ, events.Social{SourceID: a, TargetID: b,
			Source: events.SocialUser{ID: a, Username: "alice", Name: "Alice", Protected: sourceProtected, Following: 1},
			Target: events.SocialUser{ID: b, Username: "bob", Name: "Bob", Protected: targetProtected, Followers: 1}})
	}
	tests := []struct {
		name string
		ev   events.Event
		want []string
	}{
		{"follow", pair(events.FollowFollow, false, false), []string{"follow.follow>1", "follow.follow>2"}},
		{"unfollow", pair(events.FollowUnfollow, false, false), []string{"follow.unfollow>1", "follow.unfollow>2"}},
		{"a protected follower", pair(events.FollowFollow, true, false), []string{"follow.follow>2"}},
		{"a protected followed", pair(events.FollowUnfollow, false, true), []string{"follow.unfollow>1"}},
		{"mute: the actor only", pair(events.MuteMute, false, false), []string{"mute.mute>1"}},
		{"unmute", pair(events.MuteUnmute, false, false), []string{"mute.unmute>1"}},
		{"block: the actor only", pair(events.BlockBlock, false, true), []string{"block.block>1"}},
		{"unblock", pair(events.BlockUnblock, true, false), []string{"block.unblock>1"}},
	}
	for _, tc := range tests {
		got, err := Derive(tc.ev)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := short(got); !slices.Equal(s, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, s, tc.want)
		}
		for _, d := range got {
			if !slices.Equal(d.Visible, []int64{a, b}) || d.Direction != "" || d.Includes != nil {
				t.Errorf("%s: %+v", tc.name, d)
			}
			var body struct {
				Source, Target struct {
					Data map[string]any `json:"data"`
				}
			}
			if err := json.Unmarshal(d.Body, &body); err != nil {
				t.Fatalf("%s: body %s: %v", tc.name, d.Body, err)
			}
			src, tgt := body.Source.Data, body.Target.Data
			if src["id"] != "1" || src["username"] != "alice" || tgt["id"] != "2" || tgt["name"] != "Bob" ||
				src["public_metrics"].(map[string]any)["following_count"] != float64(1) ||
				tgt["public_metrics"].(map[string]any)["followers_count"] != float64(1) {
				t.Errorf("%s: body %s", tc.name, d.Body)
			}
		}
	}
	if _, err := Derive(events.Event{Seq: 1, Type: events.FollowFollow, Payload: []byte(`{"source_id":"x"}`)}); err == nil {
		t.Error("a broken payload derived without an error")
	}
}
