package activity

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
)

func dmEvent(t *testing.T, typ events.Type, payload any) events.Event {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return events.Event{Seq: 7, Type: typ, Payload: body}
}

// TestDeriveDM: each message, read, typing, chat and join event yields
// the activity events of docs/direct-messages.md, for the right users,
// directions and payload keys.
func TestDeriveDM(t *testing.T) {
	at := time.UnixMilli(1784927750704).UTC()
	users := []events.DMUser{{ID: 1, Username: "ann"}, {ID: 2, Username: "bob"}, {ID: 3, Username: "cy"}}
	type want struct {
		typ, dir string
		user     int64
		key      string // a top-level key of the payload
	}
	cases := []struct {
		name string
		ev   events.Event
		want []want
	}{
		{"one-to-one message", dmEvent(t, events.DMMessageCreate, events.DMMessage{EventID: 9, ConversationID: "1-2", SenderID: 1,
			RecipientIDs: []int64{2}, Text: "hi #go", CreatedAt: at, Users: users[:2]}),
			[]want{{"dm.sent", "outbound", 1, "direct_message_events"}, {"dm.received", "inbound", 2, "direct_message_events"}}},
		{"group message", dmEvent(t, events.DMMessageCreate, events.DMMessage{EventID: 9, ConversationID: "5", SenderID: 1,
			RecipientIDs: []int64{2, 3}, Text: "all", CreatedAt: at, Users: users}),
			[]want{{"dm.sent", "outbound", 1, "users"}, {"dm.received", "inbound", 2, "users"}, {"dm.received", "inbound", 3, "users"}}},
		{"read", dmEvent(t, events.DMRead, events.DMMark{ConversationID: "1-2", UserID: 2, RecipientIDs: []int64{1}, LastReadEventID: 9, At: at, Users: users[:2]}),
			[]want{{"dm.read", "", 1, "direct_message_mark_read_events"}}},
		{"typing", dmEvent(t, events.DMTyping, events.DMMark{ConversationID: "1-2", UserID: 2, RecipientIDs: []int64{1}, At: at, Users: users[:2]}),
			[]want{{"dm.indicate_typing", "", 1, "direct_message_indicate_typing_events"}}},
		{"chat", dmEvent(t, events.ChatMessageCreate, events.ChatMessage{ID: "u", ConversationID: "2:1", SenderID: 1, RecipientID: 2, Text: "s", KeyVersion: 5, CreatedAt: at}),
			[]want{{"chat.sent", "outbound", 1, "encoded_event"}, {"chat.received", "inbound", 2, "encoded_event"}}},
		{"join", dmEvent(t, events.ChatJoin, events.ChatJoined{ConversationID: "2:1", UserID: 2, PeerID: 1, KeyVersion: 5, JoinedAt: at}),
			[]want{{"chat.conversation.join", "", 2, "conversation_key_version"}, {"chat.conversation.join", "", 1, "conversation_key_version"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Derive(c.ev)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d events, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				d := got[i]
				var body map[string]json.RawMessage
				if err := json.Unmarshal(d.Body, &body); err != nil {
					t.Fatal(err)
				}
				if d.Type != w.typ || d.Direction != w.dir || d.UserID != w.user || body[w.key] == nil || len(d.Visible) == 0 {
					t.Errorf("event %d = %s %s user %d, keys %v; want %+v", i, d.Type, d.Direction, d.UserID, keysOf(body), w)
				}
			}
		})
	}
}

// TestDMPayloadShape: dm.received's payload is the reference's legacy
// message_create with the recipient as target, entities and both users.
func TestDMPayloadShape(t *testing.T) {
	m := events.DMMessage{EventID: 9, ConversationID: "1-2", SenderID: 1, RecipientIDs: []int64{2}, Text: "see #go",
		CreatedAt: time.UnixMilli(1784927750704), Users: []events.DMUser{{ID: 1, Username: "ann"}, {ID: 2, Username: "bob"}}}
	got, err := Derive(dmEvent(t, events.DMMessageCreate, m))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Events []struct {
			Type, ID         string
			CreatedTimestamp string `json:"created_timestamp"`
			MessageCreate    struct {
				Target struct {
					RecipientID string `json:"recipient_id"`
				}
				SenderID    string `json:"sender_id"`
				MessageData struct {
					Text     string
					Entities struct{ Hashtags []struct{ Text string } }
				} `json:"message_data"`
			} `json:"message_create"`
		} `json:"direct_message_events"`
		Users map[string]struct{ Data struct{ Username string } }
	}
	if err := json.Unmarshal(got[1].Body, &p); err != nil {
		t.Fatal(err)
	}
	e := p.Events[0]
	if e.Type != "message_create" || e.ID != "9" || e.CreatedTimestamp != "1784927750704" || e.MessageCreate.Target.RecipientID != "2" ||
		e.MessageCreate.SenderID != "1" || e.MessageCreate.MessageData.Text != "see #go" ||
		len(e.MessageCreate.MessageData.Entities.Hashtags) != 1 || e.MessageCreate.MessageData.Entities.Hashtags[0].Text != "go" {
		t.Errorf("payload event = %+v", e)
	}
	if p.Users["1"].Data.Username != "ann" || p.Users["2"].Data.Username != "bob" {
		t.Errorf("users = %+v", p.Users)
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
