package activity

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	domain "github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage/ids"
)

// Direct message and XChat activity events (docs/direct-messages.md,
// "Activity events"). Their payloads are made here, from the log event
// alone (Derived.Body): the users they show are the snapshot the event
// carries.

// deriveDM returns the activity events of a direct message, a read
// receipt or a typing indicator (nil, false for other types).
func deriveDM(e events.Event) ([]Derived, bool, error) {
	switch e.Type {
	case events.DMMessageCreate:
		m, err := decode[events.DMMessage](e)
		if err != nil {
			return nil, true, err
		}
		out, err := dmMessageEvents(m)
		return out, true, err
	case events.DMRead, events.DMTyping:
		m, err := decode[events.DMMark](e)
		if err != nil {
			return nil, true, err
		}
		out, err := dmMarkEvents(e.Type, m)
		return out, true, err
	case events.ChatMessageCreate:
		m, err := decode[events.ChatMessage](e)
		if err != nil {
			return nil, true, err
		}
		out, err := chatMessageEvents(m)
		return out, true, err
	case events.ChatJoin:
		j, err := decode[events.ChatJoined](e)
		if err != nil {
			return nil, true, err
		}
		out, err := chatJoinEvents(j)
		return out, true, err
	}
	return nil, false, nil
}

// dmMessageEvents: dm.sent (outbound) for the sender, dm.received
// (inbound) for each recipient.
func dmMessageEvents(m events.DMMessage) ([]Derived, error) {
	if len(m.RecipientIDs) == 0 {
		return nil, nil
	}
	sent, err := dmMessageBody(m, m.RecipientIDs[0], m.SenderID, m.RecipientIDs[0])
	if err != nil {
		return nil, err
	}
	out := []Derived{{Type: "dm.sent", UserID: m.SenderID, Direction: domain.Outbound, Body: sent, Visible: []int64{m.SenderID}}}
	for _, r := range m.RecipientIDs {
		body, err := dmMessageBody(m, r, m.SenderID, r)
		if err != nil {
			return nil, err
		}
		out = append(out, Derived{Type: "dm.received", UserID: r, Direction: domain.Inbound, Body: body, Visible: []int64{m.SenderID, r}})
	}
	return out, nil
}

// legacyEntities are a message's entities in the legacy (v1.1) form the
// DM payloads use.
type legacyEntities struct {
	Hashtags []legacyTag     `json:"hashtags"`
	Symbols  []legacyTag     `json:"symbols"`
	Mentions []legacyMention `json:"user_mentions"`
	URLs     []legacyURL     `json:"urls"`
}

type legacyTag struct {
	Text    string `json:"text"`
	Indices [2]int `json:"indices"`
}

type legacyMention struct {
	ScreenName string `json:"screen_name"`
	Indices    [2]int `json:"indices"`
}

type legacyURL struct {
	URL         string `json:"url"`
	ExpandedURL string `json:"expanded_url"`
	DisplayURL  string `json:"display_url"`
	Indices     [2]int `json:"indices"`
}

func dmEntities(text string) legacyEntities {
	x := posttext.Extract(text)
	out := legacyEntities{Hashtags: []legacyTag{}, Symbols: []legacyTag{}, Mentions: []legacyMention{}, URLs: []legacyURL{}}
	for _, h := range x.Hashtags {
		out.Hashtags = append(out.Hashtags, legacyTag{h.Tag, [2]int{h.Start, h.End}})
	}
	for _, c := range x.Cashtags {
		out.Symbols = append(out.Symbols, legacyTag{c.Tag, [2]int{c.Start, c.End}})
	}
	for _, u := range x.Mentions {
		out.Mentions = append(out.Mentions, legacyMention{u.Username, [2]int{u.Start, u.End}})
	}
	for _, u := range x.URLs {
		out.URLs = append(out.URLs, legacyURL{u.URL, u.ExpandedURL, u.DisplayURL, [2]int{u.Start, u.End}})
	}
	return out
}

// dmMessageBody is a message's payload as seen with target recipient,
// showing users shown.
func dmMessageBody(m events.DMMessage, recipient int64, shown ...int64) (json.RawMessage, error) {
	data := map[string]any{"text": m.Text, "entities": dmEntities(m.Text)}
	if len(m.MediaIDs) > 0 {
		media := make([]map[string]string, len(m.MediaIDs))
		for i, id := range m.MediaIDs {
			media[i] = map[string]string{"id": ids.Format(id)}
		}
		data["attachment"] = map[string]any{"type": "media", "media": media[0]}
	}
	event := map[string]any{
		"type": "message_create", "id": ids.Format(m.EventID), "created_timestamp": millis(m.CreatedAt),
		"dm_conversation_id": m.ConversationID,
		"message_create": map[string]any{
			"target": map[string]string{"recipient_id": ids.Format(recipient)}, "sender_id": ids.Format(m.SenderID),
			"message_data": data,
		},
	}
	return json.Marshal(map[string]any{"direct_message_events": []any{event}, "users": dmUserMap(m.Users, shown)})
}

// dmMarkEvents: dm.read or dm.indicate_typing for each other participant
// of the conversation.
func dmMarkEvents(typ events.Type, m events.DMMark) ([]Derived, error) {
	var out []Derived
	for _, r := range m.RecipientIDs {
		mark := map[string]any{"created_timestamp": millis(m.At), "sender_id": ids.Format(m.UserID),
			"target": map[string]string{"recipient_id": ids.Format(r)}, "dm_conversation_id": m.ConversationID}
		key := "direct_message_indicate_typing_events"
		if typ == events.DMRead {
			key = "direct_message_mark_read_events"
			mark["last_read_event_id"] = ids.Format(m.LastReadEventID)
		}
		body, err := json.Marshal(map[string]any{key: []any{mark}, "users": dmUserMap(m.Users, []int64{m.UserID, r})})
		if err != nil {
			return nil, err
		}
		out = append(out, Derived{Type: string(typ), UserID: r, Body: body, Visible: []int64{m.UserID, r}})
	}
	return out, nil
}

// dmUserMap is the payloads' users object: each user of shown that the
// snapshot holds, as {"<id>": {"data": user}}.
func dmUserMap(users []events.DMUser, shown []int64) map[string]any {
	out := map[string]any{}
	for _, u := range users {
		if !slices.Contains(shown, u.ID) {
			continue
		}
		out[ids.Format(u.ID)] = map[string]any{"data": map[string]any{
			"id": ids.Format(u.ID), "username": u.Username, "name": u.Name, "created_at": render.FormatTime(u.CreatedAt),
			"protected": u.Protected, "verified": u.Verified, "description": u.Description, "location": u.Location,
			"url": u.URL, "profile_image_url": u.ProfileImageURL,
		}}
	}
	return out
}

// chatMessageEvents: chat.sent (outbound) for the sender, chat.received
// (inbound) for the recipient.
func chatMessageEvents(m events.ChatMessage) ([]Derived, error) {
	encoded, err := json.Marshal(map[string]string{"id": m.ID, "sender_id": ids.Format(m.SenderID), "text": m.Text,
		"created_at_msec": millis(m.CreatedAt)})
	if err != nil {
		return nil, err
	}
	body := func(viewer int64) (json.RawMessage, error) {
		return json.Marshal(map[string]string{
			"conversation_token": chatToken(m.ConversationID, viewer), "id": m.ID, "created_at_msec": millis(m.CreatedAt),
			"sender_id": ids.Format(m.SenderID), "conversation_id": m.ConversationID,
			"conversation_key_version": strconv.FormatInt(m.KeyVersion, 10),
			"encoded_event":            base64.StdEncoding.EncodeToString(encoded),
		})
	}
	sent, err := body(m.SenderID)
	if err != nil {
		return nil, err
	}
	received, err := body(m.RecipientID)
	if err != nil {
		return nil, err
	}
	visible := []int64{m.SenderID, m.RecipientID}
	return []Derived{
		{Type: "chat.sent", UserID: m.SenderID, Direction: domain.Outbound, Body: sent, Visible: visible},
		{Type: "chat.received", UserID: m.RecipientID, Direction: domain.Inbound, Body: received, Visible: visible},
	}, nil
}

// chatJoinEvents: chat.conversation.join for the joining user and for the
// conversation's other member.
func chatJoinEvents(j events.ChatJoined) ([]Derived, error) {
	encoded, err := json.Marshal(map[string]string{"type": "join", "user_id": ids.Format(j.UserID)})
	if err != nil {
		return nil, err
	}
	var out []Derived
	for _, viewer := range []int64{j.UserID, j.PeerID} {
		body, err := json.Marshal(map[string]string{
			"conversation_token": chatToken(j.ConversationID, viewer), "created_at_msec": millis(j.JoinedAt),
			"sender_id": ids.Format(j.UserID), "conversation_id": j.ConversationID,
			"conversation_key_version": strconv.FormatInt(j.KeyVersion, 10),
			"encoded_event":            base64.StdEncoding.EncodeToString(encoded),
		})
		if err != nil {
			return nil, err
		}
		out = append(out, Derived{Type: "chat.conversation.join", UserID: viewer, Body: body, Visible: []int64{j.UserID, j.PeerID}})
	}
	return out, nil
}

// chatToken is an opaque conversation token for viewer: base64url of the
// conversation and the requesting user (not signed: Aviary's chat is not
// encrypted).
func chatToken(conv string, viewer int64) string {
	raw, _ := json.Marshal(map[string]string{"conversation_id": conv, "requesting_user_id": ids.Format(viewer)})
	return base64.RawURLEncoding.EncodeToString(raw)
}

func millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
