package activity

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	domain "github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// The activity events of Spaces, broadcasts, news and OAuth grants
// (docs/activity.md, "Where events come from"): ready-made payloads
// (Derived.Body) in the shapes of the reference's event-payloads page.

// liveTypes are the log types deriveLive handles.
var liveTypes = map[events.Type]bool{
	events.SpacesStart: true, events.SpacesEnd: true, events.BroadcastStart: true, events.BroadcastEnd: true,
	events.BroadcastChat: true, events.BroadcastChatRemove: true, events.NewsNew: true, events.OAuthRevoke: true,
}

// newsDisclaimer is every story's disclaimer, as GET /2/news shows it
// (api/news.Disclaimer; workers do not import api).
const newsDisclaimer = "This story is a summary of posts on Aviary and may evolve over time. " +
	"It is assembled automatically from what is being posted and can be wrong; check the posts."

// deriveLive derives e, one of liveTypes:
//   - spaces.start/.end, broadcast.start/.end: the same type for the host;
//   - broadcast.chat, broadcast.chat.remove: the same type for the
//     broadcast's owner (the chat author or remover may be anyone);
//   - news.new: for keyword subscriptions (UserID 0), matched against the
//     story's headline and summary;
//   - oauth.revoke: for the user, to the revoked app's subscriptions only.
func deriveLive(e events.Event) ([]Derived, error) {
	var d Derived
	var err error
	switch e.Type {
	case events.SpacesStart, events.SpacesEnd:
		d, err = deriveSpace(e)
	case events.BroadcastStart, events.BroadcastEnd:
		d, err = deriveBroadcast(e)
	case events.BroadcastChat:
		d, err = deriveChat(e)
	case events.BroadcastChatRemove:
		d, err = deriveChatRemove(e)
	case events.NewsNew:
		d, err = deriveNews(e)
	case events.OAuthRevoke:
		d, err = deriveRevoke(e)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d.Type = string(e.Type)
	return []Derived{d}, nil
}

func body(e events.Event, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the %s payload of event %d: %w", e.Type, e.Seq, err)
	}
	return b, nil
}

func deriveSpace(e events.Event) (Derived, error) {
	s, err := decode[events.Space](e)
	if err != nil {
		return Derived{}, err
	}
	inner := "spaces_start"
	if e.Type == events.SpacesEnd {
		inner = "spaces_end"
	}
	b, err := body(e, map[string]any{"user": userData(s.Host), "broadcast_id": s.ID, "event_type": inner})
	return Derived{UserID: s.Host.ID, Body: b, Visible: []int64{s.Host.ID}}, err
}

func deriveBroadcast(e events.Event) (Derived, error) {
	b, err := decode[events.Broadcast](e)
	if err != nil {
		return Derived{}, err
	}
	p := map[string]any{"user": userData(b.Owner), "broadcast_id": b.ID, "title": b.Title, "language": b.Language,
		"broadcast_state": "Running", "available_for_replay": false}
	setMillis(p, "event_timestamp_ms", e.CreatedAt)
	setMillis(p, "created_timestamp_ms", b.CreatedAt)
	setMillis(p, "updated_timestamp_ms", e.CreatedAt)
	if e.Type == events.BroadcastEnd {
		p["broadcast_state"] = "Ended"
		if !b.EndedAt.IsZero() {
			setMillis(p, "updated_timestamp_ms", b.EndedAt)
			d := b.EndedAt.Sub(b.CreatedAt).Milliseconds()
			p["duration_ms"], p["duration_ms_str"] = d, strconv.FormatInt(d, 10)
		}
	}
	out, err := body(e, p)
	return Derived{UserID: b.Owner.ID, Body: out, Visible: []int64{b.Owner.ID}}, err
}

// millis sets name (a number) and name_str (its decimal string) to t in
// Unix milliseconds, as the broadcast payloads carry their times.
func setMillis(p map[string]any, name string, t time.Time) {
	p[name], p[name+"_str"] = t.UnixMilli(), millis(t)
}

func deriveChat(e events.Event) (Derived, error) {
	c, err := decode[events.BroadcastChatSent](e)
	if err != nil {
		return Derived{}, err
	}
	b, err := body(e, map[string]any{"broadcast_id": c.BroadcastID, "message_id": ids.Format(c.MessageID),
		"message": c.Text, "author": userData(c.Author)})
	return Derived{UserID: c.OwnerID, Body: b, Visible: []int64{c.OwnerID, c.Author.ID}}, err
}

func deriveChatRemove(e events.Event) (Derived, error) {
	c, err := decode[events.BroadcastChatRemoved](e)
	if err != nil {
		return Derived{}, err
	}
	b, err := body(e, map[string]string{"broadcast_id": c.BroadcastID, "message_id": ids.Format(c.MessageID)})
	return Derived{UserID: c.OwnerID, Body: b, Visible: []int64{c.OwnerID}}, err
}

func deriveNews(e events.Event) (Derived, error) {
	s, err := decode[events.NewsStory](e)
	if err != nil {
		return Derived{}, err
	}
	posts := make([]map[string]string, len(s.PostIDs))
	for i, id := range s.PostIDs {
		posts[i] = map[string]string{"post_id": ids.Format(id)}
	}
	contexts := s.Contexts
	if len(contexts) == 0 || string(contexts) == "null" {
		contexts = json.RawMessage(`{}`)
	}
	// The page's fields, and headline (= name), the OpenAPI description's
	// NewsActivityResponsePayload name for it (docs/activity.md, "News").
	b, err := body(e, map[string]any{"id": ids.Format(s.ID), "name": s.Name, "headline": s.Name, "category": s.Category, "hook": s.Hook,
		"summary": s.Summary, "contexts": contexts, "cluster_posts_results": posts,
		"updated_at": render.FormatTime(s.UpdatedAt), "disclaimer": newsDisclaimer})
	return Derived{Body: b, Match: []string{s.Name, s.Summary}}, err
}

func deriveRevoke(e events.Event) (Derived, error) {
	r, err := decode[events.OAuthRevoked](e)
	if err != nil {
		return Derived{}, err
	}
	b, err := body(e, map[string]string{"date_time": r.At.UTC().Format("2006-01-02T15:04:05-07:00"),
		"user_id": ids.Format(r.UserID), "app_id": ids.Format(r.AppID)})
	return Derived{UserID: r.UserID, AppID: r.AppID, Body: b}, err
}

// userData is a user of a spaces or broadcast payload: {"data": user},
// the user's public fields and counters as the event saw them.
func userData(c events.UserCard) map[string]any {
	verifiedType := "none"
	if c.Verified {
		verifiedType = "blue"
	}
	metrics := map[string]any{}
	for _, m := range []struct {
		name string
		n    int64
	}{{"followers_count", 0}, {"following_count", 0}, {"tweet_count", c.Posts}, {"listed_count", 0}, {"like_count", c.Likes}} {
		metrics[m.name], metrics[m.name+"_str"] = m.n, strconv.FormatInt(m.n, 10)
	}
	u := map[string]any{"id": ids.Format(c.ID), "name": c.Name, "username": c.Username, "description": c.Description,
		"url": c.URL, "location": c.Location, "profile_image_url": c.ProfileImageURL, "protected": c.Protected,
		"verified": c.Verified, "verified_type": verifiedType, "created_at": render.FormatTime(c.CreatedAt),
		"public_metrics": metrics}
	if c.BannerURL != "" {
		u["profile_banner_url"] = c.BannerURL
	}
	return map[string]any{"data": u}
}

// accepts reports whether sub, matched by (user, type), receives d: an
// event for one app (oauth.revoke) only that app's subscriptions; a keyword
// event (news.new) only keyword subscriptions whose keyword matches one of
// its texts (domain/activity.KeywordMatches).
func (d Derived) accepts(sub storage.ActivitySubscription) bool {
	if d.AppID != 0 && sub.AppID != d.AppID {
		return false
	}
	if d.Match == nil {
		return true
	}
	for _, text := range d.Match {
		if domain.KeywordMatches(sub.FilterKeyword, text) {
			return true
		}
	}
	return false
}

// keywordTexts are the texts of ds's keyword events (nil: none), for the
// batch's one keyword lookup (ActivityKeywordSubscriptions).
func keywordTexts(ds []derivedEvent) map[string][]string {
	var out map[string][]string
	for _, de := range ds {
		if de.d.Match != nil {
			if out == nil {
				out = map[string][]string{}
			}
			out[de.d.Type] = append(out[de.d.Type], de.d.Match...)
		}
	}
	return out
}
