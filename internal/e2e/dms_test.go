package e2e

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// twitterAPIV2DMScript sends a direct message with twitter-api-v2's
// v2.sendDmToParticipant (the demo user's OAuth 1.0a token) and lists the
// user's DM events with v2.listDmEvents, as in twitterAPIV2Script.
const twitterAPIV2DMScript = twitterAPIV2Prelude + `
async function main() {
  const user = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [aviary] });
  const out = {};
  out.sent = (await user.v2.sendDmToParticipant(cfg.to, { text: cfg.text })).data;
  const events = await user.v2.listDmEvents({ 'dm_event.fields': 'sender_id,dm_conversation_id,created_at', expansions: 'sender_id' });
  out.events = events.events;
  out.includes = events.includes ? events.includes.users : [];
  try {
    await user.v2.sendDmToParticipant(cfg.from, { text: 'to myself' });
    out.selfError = 'no error';
  } catch (e) {
    out.selfError = e instanceof ApiResponseError ? e.code : String(e);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

type twitterAPIV2DMResult struct {
	Sent struct {
		ConversationID string `json:"dm_conversation_id"`
		EventID        string `json:"dm_event_id"`
	} `json:"sent"`
	Events    []map[string]any `json:"events"`
	Includes  []map[string]any `json:"includes"`
	SelfError any              `json:"selfError"`
}

// TestDMActivityEndToEnd: each user subscribes the demo app to their own
// private DM and XChat events through POST /2/activity/subscriptions
// (OAuth 1.0a user tokens); the demo user sends bob a message with the npm
// client twitter-api-v2 (v2.sendDmToParticipant) and lists it
// (v2.listDmEvents); bob replies through the API, reads and types through
// the admin commands; a chat message and a join come from the admin
// commands. Every event arrives, in order, over a signed webhook and over
// GET /2/activity/stream: dm.sent, dm.received, dm.read,
// dm.indicate_typing, chat.sent, chat.received, chat.conversation.join.
// The direction filter: bob's dm.sent subscription with direction inbound
// receives nothing of his (outbound) reply.
func TestDMActivityEndToEnd(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles,
		env: append([]string{clientTestTimeout}, webhookEnv...)})
	recv, hookID := newWebhookReceiver(t, s)
	bobTok := s.userToken("bob_dm")
	bob, err := s.db.UserByUsername(t.Context(), "bob_dm")
	if err != nil {
		t.Fatal(err)
	}
	demo, _ := strconv.ParseInt(s.creds.UserID, 10, 64)
	demoTok := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	me, bobID := s.creds.UserID, strconv.FormatInt(bob.ID, 10)
	subscribe := func(tok userToken, typ, user, direction string) {
		t.Helper()
		filter := map[string]any{"user_id": user}
		if direction != "" {
			filter["direction"] = direction
		}
		r := s.signedJSONAt(tok, s.baseURL, http.MethodPost, "/2/activity/subscriptions",
			map[string]any{"event_type": typ, "filter": filter, "webhook_id": hookID})
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("subscribe %s for %s: %d %s", typ, user, r.Status, r.Raw)
		}
	}
	subscribe(demoTok, "dm.sent", me, "")
	subscribe(bobTok, "dm.received", bobID, "inbound")
	subscribe(bobTok, "dm.sent", bobID, "inbound") // dm.sent is outbound: never matches
	subscribe(demoTok, "dm.read", me, "")
	subscribe(demoTok, "dm.indicate_typing", me, "")
	subscribe(demoTok, "chat.sent", me, "outbound")
	subscribe(bobTok, "chat.received", bobID, "")
	subscribe(bobTok, "chat.conversation.join", bobID, "")

	stream := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, nil)
	if stream.Status != http.StatusOK {
		t.Fatalf("GET /2/activity/stream answered %d %s", stream.Status, stream.Raw)
	}
	s.waitConnections(s.baseURL, "active", 1, 10*time.Second)

	conv := storage.OneToOneConversationID(demo, bob.ID)
	var res twitterAPIV2DMResult
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2DMScript, map[string]any{"base": s.baseURL, "to": bobID, "from": me, "text": "hello bob"},
		&res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	if res.Sent.ConversationID != conv || res.Sent.EventID == "" {
		t.Fatalf("sendDmToParticipant = %+v, want conversation %s", res.Sent, conv)
	}
	if len(res.Events) != 1 || res.Events[0]["id"] != res.Sent.EventID || res.Events[0]["text"] != "hello bob" ||
		res.Events[0]["sender_id"] != me || res.Events[0]["dm_conversation_id"] != conv || len(res.Includes) != 1 {
		t.Errorf("listDmEvents = %v (includes %v)", res.Events, res.Includes)
	}
	if res.SelfError != float64(400) {
		t.Errorf("a message to oneself surfaced as %v, want a 400 ApiResponseError", res.SelfError)
	}

	if r := s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/dm_conversations/"+conv+"/messages", map[string]any{"text": "hi demo"}); r.Status != http.StatusCreated {
		t.Fatalf("bob's reply answered %d %s", r.Status, r.Raw)
	}
	s.run("admin", "dm", "read", "--user", "bob_dm", "--conversation", conv)
	s.run("admin", "dm", "typing", "--user", "bob_dm", "--conversation", conv)
	s.run("admin", "chat", "send", "--from", s.creds.Username, "--to", "bob_dm", "--text", "a secret")
	s.run("admin", "chat", "join", "--user", "bob_dm", "--with", s.creds.Username)

	want := []string{"dm.sent>" + me, "dm.received>" + bobID, "dm.read>" + me, "dm.indicate_typing>" + me,
		"chat.sent>" + me, "chat.received>" + bobID, "chat.conversation.join>" + bobID}
	got := recv.waitFor("the seven DM and chat events", 30*time.Second, func(ds []delivery) bool { return len(webhookActivity(ds)) >= len(want) })
	if keys := webhookActivity(got); !slices.Equal(keys, want) {
		t.Errorf("webhook received %v, want %v (bob's outbound reply matches no inbound subscription)", keys, want)
	}
	for _, d := range got {
		checkDMDelivery(t, d.Body, res.Sent.EventID, me, bobID)
	}
	if _, bad := recv.counts(); bad != 0 {
		t.Errorf("%d deliveries carried a wrong signature", bad)
	}

	var lines []string
	for len(lines) < len(want) {
		m, ok := stream.next(20 * time.Second)
		if !ok {
			t.Fatalf("the activity stream ended or went quiet after %v (want %v)", lines, want)
		}
		if k := activityKey(m.Data); k != "" {
			lines = append(lines, k)
			checkDMDelivery(t, map[string]any{"data": m.Data}, res.Sent.EventID, me, bobID)
		}
	}
	if !slices.Equal(lines, want) {
		t.Errorf("activity stream received %v, want %v", lines, want)
	}
	stream.close()
}

// checkDMDelivery checks one envelope's payload and direction by its type.
func checkDMDelivery(t *testing.T, body map[string]any, message, demo, bob string) {
	t.Helper()
	data, _ := body["data"].(map[string]any)
	payload, _ := data["payload"].(map[string]any)
	filter, _ := data["filter"].(map[string]any)
	first := func(key string) map[string]any {
		list, _ := payload[key].([]any)
		if len(list) == 0 {
			return nil
		}
		m, _ := list[0].(map[string]any)
		return m
	}
	dig := func(m map[string]any, keys ...string) any {
		var v any = m
		for _, k := range keys {
			mm, _ := v.(map[string]any)
			v = mm[k]
		}
		return v
	}
	users, _ := payload["users"].(map[string]any)
	switch typ := data["event_type"]; typ {
	case "dm.sent", "dm.received":
		ev := first("direct_message_events")
		dir, recipient := "outbound", bob
		if typ == "dm.received" {
			dir = "inbound"
		}
		if ev["id"] != message || ev["type"] != "message_create" || dig(ev, "message_create", "message_data", "text") != "hello bob" ||
			dig(ev, "message_create", "sender_id") != demo || dig(ev, "message_create", "target", "recipient_id") != recipient ||
			filter["direction"] != dir || users[demo] == nil || users[bob] == nil {
			t.Errorf("%s delivery = %v", typ, data)
		}
	case "dm.read":
		ev := first("direct_message_mark_read_events")
		if ev["sender_id"] != bob || dig(ev, "target", "recipient_id") != demo || ev["last_read_event_id"] == nil || ev["last_read_event_id"] == "" {
			t.Errorf("dm.read delivery = %v", data)
		}
	case "dm.indicate_typing":
		ev := first("direct_message_indicate_typing_events")
		if ev["sender_id"] != bob || dig(ev, "target", "recipient_id") != demo {
			t.Errorf("dm.indicate_typing delivery = %v", data)
		}
	case "chat.sent", "chat.received":
		dir := map[any]string{"chat.sent": "outbound", "chat.received": "inbound"}[typ]
		if payload["sender_id"] != demo || payload["conversation_id"] != storage.ChatConversationID(mustID(t, demo), mustID(t, bob)) ||
			payload["encoded_event"] == nil || payload["id"] == nil || filter["direction"] != dir {
			t.Errorf("%s delivery = %v", typ, data)
		}
	case "chat.conversation.join":
		if payload["sender_id"] != bob || payload["conversation_key_version"] == nil {
			t.Errorf("chat.conversation.join delivery = %v", data)
		}
	}
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
