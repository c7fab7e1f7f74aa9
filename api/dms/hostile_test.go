package dms_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
)

// TestHostileDMBlocked: a user blocked by the recipient (or who blocks
// the recipient) can not send them a direct message, neither through the
// "with" endpoint nor into their existing one-to-one conversation.
func TestHostileDMBlocked(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	ctx := t.Context()
	author := fmt.Sprint(b.Author.ID)
	conv := storage.OneToOneConversationID(b.User.ID, b.Author.ID)
	if r := send(t, b, "oauth:reader", "/2/dm_conversations/with/"+author+"/messages", map[string]any{"text": "before"}); r.Status != 201 {
		t.Fatalf("send before the block = %d %s", r.Status, r.Raw)
	}
	if _, err := b.DB.Block(ctx, 0, b.Author.ID, b.User.ID); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/2/dm_conversations/with/" + author + "/messages", "/2/dm_conversations/" + conv + "/messages"} {
		r := send(t, b, "oauth:reader", path, map[string]any{"text": "after the block"})
		if r.Status != 403 || r.Body["type"] != "https://api.x.com/2/problems/not-authorized-for-resource" {
			t.Errorf("blocked sender: POST %s = %d %s", path, r.Status, r.Raw)
		}
		validate(t, "POST", path, r)
		// The blocker can not write to the user they block either.
		r = send(t, b, "oauth:author", strings.Replace(path, "with/"+author, "with/"+fmt.Sprint(b.User.ID), 1), map[string]any{"text": "from the blocker"})
		if r.Status != 403 {
			t.Errorf("blocker: POST %s = %d %s", path, r.Status, r.Raw)
		}
	}
	if r := get(t, b, "/2/dm_conversations/"+conv+"/dm_events", "oauth:author"); apitest.Obj(r.Body, "meta", "result_count") != float64(1) {
		t.Errorf("after refused sends the conversation holds = %s", r.Raw)
	}
	// A group with a user who blocks the creator is refused as well.
	carol := b.AddUser(t, "carol", "read-write")
	r := send(t, b, "oauth:reader", "/2/dm_conversations", map[string]any{"conversation_type": "Group",
		"participant_ids": []string{author, fmt.Sprint(carol.ID)}, "message": map[string]any{"text": "group"}})
	if r.Status != 403 {
		t.Errorf("group with a blocker = %d %s", r.Status, r.Raw)
	}
	if _, err := b.DB.Unblock(ctx, 0, b.Author.ID, b.User.ID); err != nil {
		t.Fatal(err)
	}
	if r := send(t, b, "oauth:reader", "/2/dm_conversations/"+conv+"/messages", map[string]any{"text": "unblocked"}); r.Status != 201 {
		t.Errorf("send after the unblock = %d %s", r.Status, r.Raw)
	}
}

// TestHostileDMOddBodies: odd bodies and path values are 400
// invalid-request (never a 500): a NUL in the text, wrong types, null,
// ids beyond int64 or with signs, unknown and repeated keys.
func TestHostileDMOddBodies(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	author := fmt.Sprint(b.Author.ID)
	with := "/2/dm_conversations/with/" + author + "/messages"
	cases := []struct {
		name, path, body string
		want             int
	}{
		{"nul in text", with, `{"text":"a\u0000b"}`, 400},
		{"text a number", with, `{"text":5}`, 400},
		{"text null, nothing else", with, `{"text":null}`, 400},
		{"attachments null", with, `{"text":"x","attachments":null}`, 201},
		{"attachments empty", with, `{"attachments":[]}`, 400},
		{"media id beyond int64", with, `{"attachments":[{"media_id":"99999999999999999999"}]}`, 400},
		{"media id negative", with, `{"attachments":[{"media_id":"-1"}]}`, 400},
		{"unknown key", with, `{"text":"x","evil":1}`, 400},
		{"array body", with, `[{"text":"x"}]`, 400},
		{"participant beyond int64", "/2/dm_conversations/with/99999999999999999999/messages", `{"text":"x"}`, 400},
		{"participant zero", "/2/dm_conversations/with/0/messages", `{"text":"x"}`, 400},
		{"conversation beyond int64", "/2/dm_conversations/99999999999999999999-1/messages", `{"text":"x"}`, 400},
		{"group ids null", "/2/dm_conversations", `{"conversation_type":"Group","participant_ids":null,"message":{"text":"x"}}`, 400},
		{"group ids numbers", "/2/dm_conversations", `{"conversation_type":"Group","participant_ids":[1,2],"message":{"text":"x"}}`, 400},
		{"group message null", "/2/dm_conversations", `{"conversation_type":"Group","participant_ids":["` + author + `","12"],"message":null}`, 400},
		{"text too long", with, `{"text":"` + strings.Repeat("x", 10001) + `"}`, 400},
		{"10000 astral characters", with, `{"text":"` + strings.Repeat("😀", 10000) + `"}`, 201},
		{"lone surrogate", with, `{"text":"\ud800"}`, 400},
		{"repeated key", with, `{"text":"a","text":"b"}`, 400},
		{"body over the limit", with, `{"text":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
		{"group leading zeros twice", "/2/dm_conversations", `{"conversation_type":"Group","participant_ids":["` + author + `","0` + author + `"],"message":{"text":"x"}}`, 400},
	}
	for _, c := range cases {
		r := b.Call(t, "POST", c.path, "oauth:reader", "application/json", []byte(c.body))
		if r.Status != c.want {
			t.Errorf("%s: POST %s %s = %d %s", c.name, c.path, c.body, r.Status, r.Raw)
			continue
		}
		if c.want == 400 && r.Body["type"] != "https://api.x.com/2/problems/invalid-request" {
			t.Errorf("%s: not invalid-request: %s", c.name, r.Raw)
		}
	}
}

// TestHostileDMConcurrentFirstMessages: many concurrent first messages
// between two users (both directions) make one conversation holding
// every message.
func TestHostileDMConcurrentFirstMessages(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1000)
	reader, author := fmt.Sprint(b.User.ID), fmt.Sprint(b.Author.ID)
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	convs := make([]any, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			authz, to := "oauth:reader", author
			if i%2 == 1 {
				authz, to = "oauth:author", reader
			}
			r := send(t, b, authz, "/2/dm_conversations/with/"+to+"/messages", map[string]any{"text": fmt.Sprint("m", i)})
			statuses[i], convs[i] = r.Status, apitest.Obj(r.Body, "data", "dm_conversation_id")
		}()
	}
	wg.Wait()
	conv := storage.OneToOneConversationID(b.User.ID, b.Author.ID)
	for i := range n {
		if statuses[i] != 201 || convs[i] != conv {
			t.Errorf("send %d = %d, conversation %v", i, statuses[i], convs[i])
		}
	}
	var convCount, msgCount int
	b.Query(t, `SELECT count(*) FROM dm_conversations WHERE id = '`+conv+`'`, &convCount)
	b.Query(t, `SELECT count(*) FROM dm_events WHERE conversation_id = '`+conv+`'`, &msgCount)
	if convCount != 1 || msgCount != n {
		t.Errorf("conversations %d, messages %d; want 1, %d", convCount, msgCount, n)
	}
}

// TestHostileDMInactiveRecipient: a one-to-one conversation whose other
// participant was suspended (or deactivated) takes no more messages,
// through its id as through the "with" endpoint; never a 500.
func TestHostileDMInactiveRecipient(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	author := fmt.Sprint(b.Author.ID)
	conv := storage.OneToOneConversationID(b.User.ID, b.Author.ID)
	if r := send(t, b, "oauth:reader", "/2/dm_conversations/with/"+author+"/messages", map[string]any{"text": "before"}); r.Status != 201 {
		t.Fatalf("send = %d %s", r.Status, r.Raw)
	}
	if _, err := b.DB.SetUserState(t.Context(), b.Author.ID, "suspended", time.Now()); err != nil {
		t.Fatal(err)
	}
	r := send(t, b, "oauth:reader", "/2/dm_conversations/with/"+author+"/messages", map[string]any{"text": "x"})
	if r.Status != 400 || apitest.Obj(r.Body, "errors") == nil {
		t.Errorf("with a suspended user = %d %s", r.Status, r.Raw)
	}
	r = send(t, b, "oauth:reader", "/2/dm_conversations/"+conv+"/messages", map[string]any{"text": "x"})
	if r.Status != 400 || r.Body["type"] != "https://api.x.com/2/problems/invalid-request" || !strings.Contains(r.Raw, `"dm_conversation_id"`) {
		t.Errorf("into the conversation with a suspended user = %d %s", r.Status, r.Raw)
	}
}

// TestHostileDMScopes: sending needs dm.write, reading dm.read, deleting
// both; a read-only OAuth 1.0a token sends nothing.
func TestHostileDMScopes(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	author := fmt.Sprint(b.Author.ID)
	readOnly := userToken(t, b, b.User, "dm.read", "tweet.read", "users.read")
	writeOnly := userToken(t, b, b.User, "dm.write", "tweet.read", "users.read")
	r := send(t, b, writeOnly, "/2/dm_conversations/with/"+author+"/messages", map[string]any{"text": "hi"})
	if r.Status != 201 {
		t.Fatalf("send with dm.write = %d %s", r.Status, r.Raw)
	}
	event := apitest.Obj(r.Body, "data", "dm_event_id").(string)
	checks := []struct{ name, method, path, authz string }{
		{"send without dm.write", "POST", "/2/dm_conversations/with/" + author + "/messages", readOnly},
		{"group without dm.write", "POST", "/2/dm_conversations", readOnly},
		{"list without dm.read", "GET", "/2/dm_events", writeOnly},
		{"lookup without dm.read", "GET", "/2/dm_events/" + event, writeOnly},
		{"delete without dm.read", "DELETE", "/2/dm_events/" + event, writeOnly},
		{"delete without dm.write", "DELETE", "/2/dm_events/" + event, readOnly},
		{"app-only list", "GET", "/2/dm_events", b.Bearer},
	}
	for _, c := range checks {
		var body []byte
		if c.method == "POST" {
			body = apitest.JSONBody(map[string]any{"text": "x"})
		}
		if r := b.Call(t, c.method, c.path, c.authz, "application/json", body); r.Status != 403 {
			t.Errorf("%s = %d %s", c.name, r.Status, r.Raw)
		}
	}
	if r := get(t, b, "/2/dm_events/"+event, readOnly); apitest.Obj(r.Body, "data", "id") != event {
		t.Errorf("lookup with dm.read = %d %s", r.Status, r.Raw)
	}
}

// TestHostileDMOddQueries: odd query values of the DM lists are 400
// invalid-request naming the parameter (never a 500), and a token forged
// for another conversation's events shows nothing of it.
func TestHostileDMOddQueries(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 1000)
	b.AddUser(t, "carol", "read-write")
	author := fmt.Sprint(b.Author.ID)
	r := send(t, b, "oauth:reader", "/2/dm_conversations/with/"+author+"/messages", map[string]any{"text": "private"})
	if r.Status != 201 {
		t.Fatalf("send = %d %s", r.Status, r.Raw)
	}
	for _, q := range []string{"event_types=", "event_types=Nope", "max_results=-1", "max_results=101",
		"max_results=99999999999999999999", "pagination_token=123", "pagination_token=AAAAAAAAAAAAAAAA",
		"pagination_token=%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00", "dm_event.fields=password", "expansions=sender_id,nope",
		"max_results=1&max_results=2"} {
		r := get(t, b, "/2/dm_events?"+q, "oauth:reader")
		if r.Status != 400 || r.Body["type"] != "https://api.x.com/2/problems/invalid-request" {
			t.Errorf("?%s = %d %s", q, r.Status, r.Raw)
		}
	}
	// The largest token there is: carol sees none of the others' events.
	r = get(t, b, "/2/dm_events?pagination_token=FVVVVVVVVVVVU===", "oauth:carol")
	if r.Status != 200 || apitest.Obj(r.Body, "meta", "result_count") != float64(0) || strings.Contains(r.Raw, "private") {
		t.Errorf("carol with a forged token = %d %s", r.Status, r.Raw)
	}
	r = get(t, b, "/2/dm_conversations/with/"+author+"/dm_events", "oauth:carol")
	if r.Status != 200 || strings.Contains(r.Raw, "private") {
		t.Errorf("carol's conversation with the author = %d %s", r.Status, r.Raw)
	}
}

// TestHostileDMEventsInspection: a message sent with an app's token is
// that app's event in GET /_aviary/events, never another app's.
func TestHostileDMEventsInspection(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	r := send(t, b, "oauth:reader", "/2/dm_conversations/with/"+fmt.Sprint(b.Author.ID)+"/messages", map[string]any{"text": "for our eyes"})
	if r.Status != 201 {
		t.Fatalf("send = %d %s", r.Status, r.Raw)
	}
	own := b.Get(t, "/_aviary/events?type=dm.", b.Bearer)
	if apitest.Obj(own.Body, "meta", "result_count") != float64(1) || !strings.Contains(own.Raw, "for our eyes") {
		t.Errorf("the app's own events = %s", own.Raw)
	}
	if other := b.Get(t, "/_aviary/events", b.OtherBearer); other.Status != 200 || strings.Contains(other.Raw, "for our eyes") ||
		apitest.Obj(other.Body, "meta", "result_count") != float64(0) {
		t.Errorf("another app sees = %d %s", other.Status, other.Raw)
	}
}
