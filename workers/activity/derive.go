// Package activity is the activity sink of the "activity" dispatcher
// (docs/activity.md, "Events and delivery"): it derives from each log event
// the activity events it stands for, matches them against the apps'
// subscriptions, renders the envelope once per subscription and records
// webhook deliveries (kind activity) and publishes stream messages.
package activity

import (
	"encoding/json"
	"fmt"
	"strings"

	domain "github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/events"
)

// Derived is one activity event a log event stands for, as the filtered
// user sees it.
type Derived struct {
	// Type is the activity event type (domain/activity's canonical name).
	Type string
	// UserID is the user a subscription filters by (filter.user_id).
	UserID int64
	// Direction is like.create's: inbound (a post of UserID liked) or
	// outbound (UserID liked a post), and the messages' (dm.*, chat.*:
	// inbound received, outbound sent); "" for the other types.
	Direction string
	// PostID is the post shown: the payload of post.* creates, the liked
	// post of like.create (its includes); 0 for the others.
	PostID int64
	// Deleted, Like and Profile are the payloads of post.delete,
	// like.create and profile.update.*.
	Deleted *events.PostDeleted
	Like    *events.Like
	Profile *events.ProfileUpdated
	// AuthorID is the author of the post concerned (a protected author's
	// posts are never delivered); 0 for profile updates.
	AuthorID int64
	// Body is a ready-made payload, for the events whose payload needs no
	// rendering of a post (follows, mutes, blocks, messages, spaces,
	// broadcasts, news, oauth.revoke): delivered as it is, with Includes
	// (nil: none), when every user in Visible is visible to the public.
	Body     json.RawMessage
	Includes json.RawMessage
	Visible  []int64
	// AppID, when set, is the only app whose subscriptions receive the
	// event (oauth.revoke); Match, when set, are the texts a keyword
	// subscription's keyword must match (news.new; UserID is 0).
	// derive_broadcast.go, Derived.accepts.
	AppID int64
	Match []string
}

// decode is e's payload as a T.
func decode[T any](e events.Event) (T, error) {
	var v T
	if err := json.Unmarshal(e.Payload, &v); err != nil {
		return v, fmt.Errorf("decode %s event %d: %w", e.Type, e.Seq, err)
	}
	return v, nil
}

// Derive returns the activity events e stands for (none for types without
// activity events). Rules (docs/activity.md):
//   - post.create: post.create for the author, whatever the post;
//     post.reply.create for the replied-to post's author, post.quote.create
//     for the quoted post's, post.repost.create for the reposted post's,
//     each unless that author is the actor; post.mention.create for each
//     explicitly mentioned user but the author. An edit (the chain's next
//     version) is a post.create of the author only.
//   - post.delete: post.delete for the author.
//   - like.create: outbound for the liker, inbound for the post's author
//     (both for the same user when they like their own post).
//   - profile.update.*: the same type for the user.
//   - follow.*: for the follower and the followed; mute.*, block.*: for
//     the acting user (derive_social.go).
//   - direct messages and XChat: derive_dm.go.
func Derive(e events.Event) ([]Derived, error) {
	if out, ok, err := deriveDM(e); ok {
		return out, err
	}
	switch {
	case e.Type == events.PostCreate:
		p, err := decode[events.Post](e)
		if err != nil {
			return nil, err
		}
		return derivePost(p), nil
	case e.Type == events.PostDelete:
		d, err := decode[events.PostDeleted](e)
		if err != nil {
			return nil, err
		}
		return []Derived{{Type: "post.delete", UserID: d.AuthorID, Deleted: &d, AuthorID: d.AuthorID}}, nil
	case e.Type == events.LikeCreate:
		l, err := decode[events.Like](e)
		if err != nil {
			return nil, err
		}
		base := Derived{Type: "like.create", PostID: l.PostID, Like: &l, AuthorID: l.PostAuthorID}
		out, in := base, base
		out.UserID, out.Direction = l.UserID, domain.Outbound
		in.UserID, in.Direction = l.PostAuthorID, domain.Inbound
		return []Derived{out, in}, nil
	case liveTypes[e.Type]:
		return deriveLive(e) // derive_broadcast.go: spaces, broadcasts, news, oauth.revoke
	case strings.HasPrefix(string(e.Type), events.ProfileUpdatePrefix):
		if _, ok := domain.Lookup(string(e.Type)); !ok {
			return nil, nil
		}
		u, err := decode[events.ProfileUpdated](e)
		if err != nil {
			return nil, err
		}
		return []Derived{{Type: string(e.Type), UserID: u.UserID, Profile: &u}}, nil
	case isSocial(e.Type):
		return deriveSocial(e)
	}
	return nil, nil
}

func derivePost(p events.Post) []Derived {
	post := func(typ string, user int64) Derived {
		return Derived{Type: typ, UserID: user, PostID: p.ID, AuthorID: p.AuthorID}
	}
	out := []Derived{post("post.create", p.AuthorID)}
	if p.EditOfID != 0 {
		return out
	}
	other := func(typ string, user int64) {
		if user != 0 && user != p.AuthorID {
			out = append(out, post(typ, user))
		}
	}
	other("post.reply.create", p.InReplyToUserID)
	other("post.quote.create", p.QuoteOfAuthorID)
	other("post.repost.create", p.RepostOfAuthorID)
	for _, id := range p.MentionIDs {
		other("post.mention.create", id)
	}
	return out
}
