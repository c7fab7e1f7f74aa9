package activity

import (
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/domain/oauth2"
)

// openAPIEnum is the event_type enum of CreateActivitySubscriptionRequest
// (OpenAPI 2.167): every name must resolve.
var openAPIEnum = []string{
	"profile.update.bio", "profile.update.profile_picture", "profile.update.banner_picture",
	"profile.update.screenname", "profile.update.geo", "profile.update.url", "profile.update.verified_badge",
	"profile.update.affiliate_badge", "profile.update.handle", "news.new", "follow.follow", "follow.unfollow",
	"spaces.start", "spaces.end", "broadcast.start", "broadcast.end", "broadcast.chat", "chat.received",
	"chat.sent", "chat.conversation.join", "chat.conversation_join", "chat.conversation.member_added",
	"chat.conversation.member_removed", "chat.conversation.admin_added", "chat.conversation.admin_removed",
	"chat.update.group_name", "chat.update.restrictions", "dm.sent", "dm.received", "dm.indicate_typing",
	"dm.read", "post.create", "post.delete", "post.mention.create", "post.reply.create", "post.quote.create",
	"post.repost.create", "like.create", "mute.mute", "mute.unmute", "block.block", "block.unblock",
}

func TestOpenAPIEnumResolves(t *testing.T) {
	for _, name := range openAPIEnum {
		if _, ok := Lookup(name); !ok {
			t.Errorf("%s: not in the catalogue", name)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name      string
		ok        bool
		canonical string
		filter    Filter
		direction bool
		private   bool
		scope     string
		actor     bool
	}{
		{"post.create", true, "post.create", ByUser, false, false, oauth2.TweetRead, false},
		{"post.delete", true, "post.delete", ByUser, false, false, oauth2.TweetRead, false},
		// The reference: others' interactions with the user's posts are private (tweet.read).
		{"post.mention.create", true, "post.mention.create", ByUser, false, true, oauth2.TweetRead, false},
		{"post.repost.create", true, "post.repost.create", ByUser, false, true, oauth2.TweetRead, false},
		{"like.create", true, "like.create", ByUser, true, true, oauth2.LikeRead, false},
		{"follow.follow", true, "follow.follow", ByUser, false, false, oauth2.TweetRead, false},
		{"profile.update.bio", true, "profile.update.bio", ByUser, false, false, oauth2.TweetRead, false},
		{"profile.update.verified", true, "profile.update.verified_badge", ByUser, false, false, oauth2.TweetRead, false},
		{"profile.update.affiliate", true, "profile.update.affiliate_badge", ByUser, false, false, oauth2.TweetRead, false},
		{"chat.conversation_join", true, "chat.conversation.join", ByUser, false, true, oauth2.DMRead, false},
		{"chat.sent", true, "chat.sent", ByUser, true, true, oauth2.DMRead, false},
		{"dm.received", true, "dm.received", ByUser, true, true, oauth2.DMRead, false},
		{"dm.read", true, "dm.read", ByUser, false, true, oauth2.DMRead, false},
		{"mute.mute", true, "mute.mute", ByUser, false, true, oauth2.MuteRead, true},
		{"block.unblock", true, "block.unblock", ByUser, false, true, oauth2.BlockRead, true},
		{"broadcast.start", true, "broadcast.start", ByUser, false, false, oauth2.TweetRead, false},
		{"broadcast.chat", true, "broadcast.chat", ByUser, false, true, oauth2.BroadcastRead, false},
		{"broadcast.chat.remove", true, "broadcast.chat.remove", ByUser, false, true, oauth2.BroadcastRead, false},
		{"news.new", true, "news.new", ByKeyword, false, false, oauth2.TweetRead, false},
		{"ProfileBioUpdate", false, "", 0, false, false, "", false},
		{"Post.Create", false, "", 0, false, false, "", false},
		{"post", false, "", 0, false, false, "", false},
		{"", false, "", 0, false, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := Lookup(tt.name)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if s.Name != tt.canonical || s.Filter != tt.filter || s.Direction != tt.direction || s.Private != tt.private ||
				s.RequiredScope() != tt.scope || s.ActorFilter != tt.actor {
				t.Errorf("%+v (scope %s), want %s filter %d direction %v private %v scope %s actor %v",
					s, s.RequiredScope(), tt.canonical, tt.filter, tt.direction, tt.private, tt.scope, tt.actor)
			}
		})
	}
}

func TestRetired(t *testing.T) {
	for old, want := range map[string]string{
		"ProfileBioUpdate": "profile.update.bio", "FollowFollow": "follow.follow", "NewsNew": "news.new",
		"ProfileVerifiedBadgeUpdate": "profile.update.verified_badge",
	} {
		got, ok := Retired(old)
		if !ok || got != want {
			t.Errorf("Retired(%s) = %q %v, want %s", old, got, ok, want)
		}
		if _, ok := Lookup(old); ok {
			t.Errorf("Lookup(%s) accepted a retired name", old)
		}
	}
	// Every retired name points at a type the catalogue has.
	for old, name := range retired {
		if _, ok := byName[name]; !ok {
			t.Errorf("retired %s names %s, which is not in the catalogue", old, name)
		}
	}
	if _, ok := Retired("profile.update.bio"); ok {
		t.Error("a current name is not retired")
	}
}

func TestCatalogueConsistent(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) || len(names) != len(catalogue) {
		t.Fatalf("Names: %d sorted %v, catalogue %d", len(names), slices.IsSorted(names), len(catalogue))
	}
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			t.Errorf("%s listed twice", names[i])
		}
	}
	for _, s := range catalogue {
		if s.Private != (s.Scope != "") {
			t.Errorf("%s: private %v with scope %q", s.Name, s.Private, s.Scope)
		}
		if s.ActorFilter && !s.Private {
			t.Errorf("%s: an actor filter on a public type", s.Name)
		}
		if s.Filter == ByKeyword && (s.Private || s.Direction) {
			t.Errorf("%s: keyword types are public and take no direction", s.Name)
		}
		if !oauth2.Known(s.RequiredScope()) {
			t.Errorf("%s: unknown scope %s", s.Name, s.RequiredScope())
		}
	}
	for alias, name := range aliases {
		if _, ok := byName[name]; !ok || byName[alias].Name != "" {
			t.Errorf("alias %s -> %s: target missing or alias also canonical", alias, name)
		}
	}
}

func TestDirection(t *testing.T) {
	for in, want := range map[string]string{"inbound": Inbound, "outbound": Outbound, "received": Inbound, "sent": Outbound, "both": "", "": "", "INBOUND": ""} {
		got, ok := Direction(in)
		if got != want || ok != (want != "") {
			t.Errorf("Direction(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestCategory(t *testing.T) {
	for in, want := range map[string]string{"post.mention.create": "post", "news.new": "news", "oauth": "oauth"} {
		if got := Category(in); got != want {
			t.Errorf("Category(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestGrantBoundNames: every private type but oauth.revoke, no public one.
func TestGrantBoundNames(t *testing.T) {
	got := GrantBoundNames()
	for _, name := range Names() {
		s, _ := Lookup(name)
		want := s.Private && name != "oauth.revoke"
		if slices.Contains(got, name) != want {
			t.Errorf("%s in GrantBoundNames: %v, want %v", name, !want, want)
		}
	}
	if !slices.Contains(got, "like.create") || slices.Contains(got, "post.create") {
		t.Errorf("GrantBoundNames = %v", got)
	}
}
