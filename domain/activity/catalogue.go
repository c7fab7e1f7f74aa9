// Package activity is the X Activity API's event catalogue (docs/activity.md):
// the event types a subscription may name, the filter each takes, which are
// private and the OAuth 2.0 scope a private one needs, the aliases and the
// retired names. Both tiers share it: the API validates subscriptions with
// it, the activity sink (workers) matches events with it. A leaf: the
// standard library and domain/oauth2 only.
package activity

import (
	"sort"
	"strings"

	"github.com/aviary-dev/aviary/domain/oauth2"
)

// Filter is the filter field an event type is subscribed by.
type Filter int

const (
	// ByUser: filter.user_id (required).
	ByUser Filter = iota
	// ByKeyword: filter.keyword (required).
	ByKeyword
)

// Spec describes one event type.
type Spec struct {
	// Name is the canonical dot-separated name (responses use it).
	Name string
	// Filter is the field subscriptions of this type filter by.
	Filter Filter
	// Direction: the type takes the optional direction filter
	// (inbound/outbound); absent means both.
	Direction bool
	// Private types need a user-context OAuth 2.0 token of the filtered
	// user carrying Scope; public ones take app-only or user context.
	Private bool
	Scope   string
	// ActorFilter: user_id names the acting user and must be the
	// authenticated user (mute.*, block.*).
	ActorFilter bool
}

// Directions.
const (
	Inbound  = "inbound"
	Outbound = "outbound"
)

// directions maps every accepted spelling of a direction to its
// canonical value: the reference's inbound/outbound and the spec's
// received/sent (api-spec.md "Events").
var directions = map[string]string{
	Inbound: Inbound, Outbound: Outbound,
	"received": Inbound, "sent": Outbound,
}

// Direction returns the canonical direction of value (inbound or
// outbound); ok is false for anything else.
func Direction(value string) (string, bool) {
	d, ok := directions[value]
	return d, ok
}

// PublicScope is the scope an OAuth 2.0 user token needs to subscribe to
// a public type (the OpenAPI's createActivitySubscription: tweet.read for
// every type without a scope of its own).
const PublicScope = oauth2.TweetRead

// RequiredScope is the OAuth 2.0 scope a user-context token needs to
// subscribe to s.
func (s Spec) RequiredScope() string {
	if s.Scope != "" {
		return s.Scope
	}
	return PublicScope
}

func user(name string) Spec    { return Spec{Name: name, Filter: ByUser} }
func keyword(name string) Spec { return Spec{Name: name, Filter: ByKeyword} }
func private(name, scope string) Spec {
	return Spec{Name: name, Filter: ByUser, Private: true, Scope: scope}
}

// catalogue lists every event type: the spec's table (api-spec.md
// "Events") and the ones the reference adds (the OpenAPI 2.167 enum of
// CreateActivitySubscriptionRequest and the event-payloads page).
var catalogue = []Spec{
	// The reference (introduction, event payloads) makes the interactions
	// of others with the filtered user's posts private, needing tweet.read;
	// the user's own posts are public.
	user("post.create"), user("post.delete"),
	private("post.mention.create", oauth2.TweetRead), private("post.reply.create", oauth2.TweetRead),
	private("post.quote.create", oauth2.TweetRead), private("post.repost.create", oauth2.TweetRead),
	{Name: "like.create", Filter: ByUser, Direction: true, Private: true, Scope: oauth2.LikeRead},
	user("follow.follow"), user("follow.unfollow"),
	user("profile.update.bio"), user("profile.update.profile_picture"), user("profile.update.banner_picture"),
	user("profile.update.screenname"), user("profile.update.handle"), user("profile.update.geo"),
	user("profile.update.url"), user("profile.update.verified_badge"), user("profile.update.affiliate_badge"),
	user("spaces.start"), user("spaces.end"),
	user("broadcast.start"), user("broadcast.end"),
	private("broadcast.chat", oauth2.BroadcastRead),
	private("broadcast.chat.remove", oauth2.BroadcastRead),
	{Name: "dm.sent", Filter: ByUser, Direction: true, Private: true, Scope: oauth2.DMRead},
	{Name: "dm.received", Filter: ByUser, Direction: true, Private: true, Scope: oauth2.DMRead},
	private("dm.read", oauth2.DMRead), private("dm.indicate_typing", oauth2.DMRead),
	{Name: "chat.sent", Filter: ByUser, Direction: true, Private: true, Scope: oauth2.DMRead},
	{Name: "chat.received", Filter: ByUser, Direction: true, Private: true, Scope: oauth2.DMRead},
	private("chat.conversation.join", oauth2.DMRead),
	private("chat.conversation.member_added", oauth2.DMRead), private("chat.conversation.member_removed", oauth2.DMRead),
	private("chat.conversation.admin_added", oauth2.DMRead), private("chat.conversation.admin_removed", oauth2.DMRead),
	private("chat.update.group_name", oauth2.DMRead), private("chat.update.restrictions", oauth2.DMRead),
	{Name: "mute.mute", Filter: ByUser, Private: true, Scope: oauth2.MuteRead, ActorFilter: true},
	{Name: "mute.unmute", Filter: ByUser, Private: true, Scope: oauth2.MuteRead, ActorFilter: true},
	{Name: "block.block", Filter: ByUser, Private: true, Scope: oauth2.BlockRead, ActorFilter: true},
	{Name: "block.unblock", Filter: ByUser, Private: true, Scope: oauth2.BlockRead, ActorFilter: true},
	keyword("news.new"),
	private("oauth.revoke", oauth2.OfflineAccess),
}

// aliases are other names of a type, accepted and answered with the
// canonical name: the spec's short profile names (api-spec.md "Events"
// says profile.update.verified and .affiliate, the reference
// .verified_badge and .affiliate_badge) and the OpenAPI's deprecated
// chat.conversation_join.
var aliases = map[string]string{
	"profile.update.verified":  "profile.update.verified_badge",
	"profile.update.affiliate": "profile.update.affiliate_badge",
	"chat.conversation_join":   "chat.conversation.join",
}

// retired are the PascalCase names of the Account Activity era, refused
// with the new name.
var retired = map[string]string{
	"ProfileBioUpdate":            "profile.update.bio",
	"ProfilePictureUpdate":        "profile.update.profile_picture",
	"ProfileBannerPictureUpdate":  "profile.update.banner_picture",
	"ProfileScreennameUpdate":     "profile.update.screenname",
	"ProfileHandleUpdate":         "profile.update.handle",
	"ProfileGeoUpdate":            "profile.update.geo",
	"ProfileUrlUpdate":            "profile.update.url",
	"ProfileVerifiedBadgeUpdate":  "profile.update.verified_badge",
	"ProfileAffiliateBadgeUpdate": "profile.update.affiliate_badge",
	"NewsNew":                     "news.new",
	"FollowFollow":                "follow.follow",
	"FollowUnfollow":              "follow.unfollow",
	"SpacesStart":                 "spaces.start",
	"SpacesEnd":                   "spaces.end",
}

var byName = func() map[string]Spec {
	m := make(map[string]Spec, len(catalogue))
	for _, s := range catalogue {
		m[s.Name] = s
	}
	return m
}()

// Lookup returns the spec of name, resolving aliases. ok is false for an
// unknown or retired name; Retired tells the two apart.
func Lookup(name string) (Spec, bool) {
	if canonical, ok := aliases[name]; ok {
		name = canonical
	}
	s, ok := byName[name]
	return s, ok
}

// Retired returns the new name of a retired PascalCase name.
func Retired(name string) (string, bool) {
	n, ok := retired[name]
	return n, ok
}

// Names lists the canonical names, sorted (error messages, docs).
func Names() []string {
	out := make([]string, 0, len(catalogue))
	for _, s := range catalogue {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// GrantBoundNames lists, sorted, the private types whose events storage
// delivers only while the subscription's creator still grants the app
// (docs/activity.md, "Private subscriptions and revocation"): every
// private type but oauth.revoke, whose event reports the end of that grant
// and so must outlive it.
func GrantBoundNames() []string {
	var out []string
	for _, s := range catalogue {
		if s.Private && s.Name != "oauth.revoke" {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Category is the part of a name before its first dot ("post",
// "profile", ...).
func Category(name string) string {
	c, _, _ := strings.Cut(name, ".")
	return c
}
