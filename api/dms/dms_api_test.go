package dms_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// userToken issues an OAuth 2.0 user access token of the bundle's app for
// user with scopes, through the store's code exchange.
func userToken(t *testing.T, b *apitest.Bundle, user storage.User, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	code, _ := ids.Token(40)
	access, _ := ids.Token(60)
	now := time.Now()
	if err := b.DB.CreateOAuth2Code(ctx, code, storage.OAuth2Code{AppID: b.App.ID, UserID: user.ID, RedirectURI: "http://cb.example/",
		Scopes: scopes, Challenge: "challenge", Method: "plain", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.ExchangeOAuth2Code(ctx, code, now, func(storage.OAuth2Code) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{Access: access, AccessExpires: now.Add(2 * time.Hour), Scopes: scopes}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return "Bearer " + access
}

func send(t *testing.T, b *apitest.Bundle, authz, path string, body any) apitest.Reply {
	t.Helper()
	return b.Call(t, "POST", path, authz, "application/json", apitest.JSONBody(body))
}

func get(t *testing.T, b *apitest.Bundle, path, authz string) apitest.Reply {
	t.Helper()
	return b.Call(t, "GET", path, authz, "", nil)
}

// validate checks r against the OpenAPI description's operation.
func validate(t *testing.T, method, path string, r apitest.Reply) {
	t.Helper()
	if err := apitest.ValidateResponse(t.Context(), apitest.OptionalOpenAPI(t), method, path, r); err != nil {
		t.Errorf("%s %s against the OpenAPI: %v\n%s", method, path, err, r.Raw)
	}
}

// TestDMSendListDelete: a one-to-one message opens the conversation
// "<smaller>-<larger>"; both participants list it (newest first, paged,
// with fields and expansions); a third user sees nothing of it; only the
// sender deletes a message; a group starts with its join event.
func TestDMSendListDelete(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	carol := b.AddUser(t, "carol", "read-write")
	reader, author := fmt.Sprint(b.User.ID), fmt.Sprint(b.Author.ID)
	conv := storage.OneToOneConversationID(b.User.ID, b.Author.ID)

	path := "/2/dm_conversations/with/" + author + "/messages"
	r := send(t, b, "oauth:reader", path, map[string]any{"text": "hi #aviary"})
	if r.Status != 201 || apitest.Obj(r.Body, "data", "dm_conversation_id") != conv {
		t.Fatalf("send = %d %s", r.Status, r.Raw)
	}
	validate(t, "POST", path, r)
	first := apitest.Obj(r.Body, "data", "dm_event_id").(string)
	path = "/2/dm_conversations/" + conv + "/messages"
	r = send(t, b, "oauth:author", path, map[string]any{"text": "hello back"})
	if r.Status != 201 || apitest.Obj(r.Body, "data", "dm_conversation_id") != conv {
		t.Fatalf("reply = %d %s", r.Status, r.Raw)
	}
	validate(t, "POST", path, r)
	second := apitest.Obj(r.Body, "data", "dm_event_id").(string)

	path = "/2/dm_events?dm_event.fields=sender_id,dm_conversation_id,created_at,entities&expansions=sender_id&user.fields=username"
	r = get(t, b, path, "oauth:author")
	if r.Status != 200 || apitest.Obj(r.Body, "meta", "result_count") != float64(2) || apitest.Obj(r.Body, "data", "0", "id") != second ||
		apitest.Obj(r.Body, "data", "1", "text") != "hi #aviary" || apitest.Obj(r.Body, "data", "1", "sender_id") != reader ||
		apitest.Obj(r.Body, "data", "1", "dm_conversation_id") != conv || apitest.Obj(r.Body, "data", "1", "event_type") != "MessageCreate" ||
		apitest.Obj(r.Body, "data", "1", "entities", "hashtags", "0", "tag") != "aviary" || apitest.Obj(r.Body, "includes", "users", "0", "username") == nil {
		t.Fatalf("dm_events = %d %s", r.Status, r.Raw)
	}
	validate(t, "GET", path, r)
	// Defaults: id, event_type, text only.
	r = get(t, b, "/2/dm_conversations/with/"+author+"/dm_events", "oauth:reader")
	if apitest.Obj(r.Body, "meta", "result_count") != float64(2) || apitest.Obj(r.Body, "data", "0", "sender_id") != nil ||
		apitest.Obj(r.Body, "data", "0", "text") != "hello back" {
		t.Errorf("with participant = %s", r.Raw)
	}
	// Pages of one.
	r = get(t, b, "/2/dm_conversations/"+conv+"/dm_events?max_results=1", "oauth:reader")
	next, _ := apitest.Obj(r.Body, "meta", "next_token").(string)
	if apitest.Obj(r.Body, "data", "0", "id") != second || next == "" {
		t.Fatalf("first page = %s", r.Raw)
	}
	r = get(t, b, "/2/dm_conversations/"+conv+"/dm_events?max_results=1&pagination_token="+next, "oauth:reader")
	if apitest.Obj(r.Body, "data", "0", "id") != first || apitest.Obj(r.Body, "meta", "next_token") != nil {
		t.Errorf("second page = %s", r.Raw)
	}
	if r := get(t, b, "/2/dm_events?event_types=ParticipantsJoin", "oauth:reader"); apitest.Obj(r.Body, "meta", "result_count") != float64(0) {
		t.Errorf("joins of a one-to-one conversation = %s", r.Raw)
	}
	r = get(t, b, "/2/dm_events/"+first+"?dm_event.fields=sender_id", "oauth:author")
	if r.Status != 200 || apitest.Obj(r.Body, "data", "sender_id") != reader {
		t.Errorf("lookup = %d %s", r.Status, r.Raw)
	}

	// Tenancy: carol sees, sends and deletes nothing of it.
	if r := get(t, b, "/2/dm_conversations/"+conv+"/dm_events", "oauth:carol"); r.Status != 404 {
		t.Errorf("carol lists the conversation = %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/dm_events/"+first, "oauth:carol"); r.Status != 200 || r.Body["data"] != nil ||
		apitest.Obj(r.Body, "errors", "0", "resource_type") != "dm_event" {
		t.Errorf("carol looks the message up = %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/dm_events", "oauth:carol"); apitest.Obj(r.Body, "meta", "result_count") != float64(0) {
		t.Errorf("carol's events = %s", r.Raw)
	}
	if r := send(t, b, "oauth:carol", "/2/dm_conversations/"+conv+"/messages", map[string]any{"text": "x"}); r.Status != 404 {
		t.Errorf("carol sends into the conversation = %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "DELETE", "/2/dm_events/"+first, "oauth:carol", "", nil); r.Status != 404 {
		t.Errorf("carol deletes = %d %s", r.Status, r.Raw)
	}

	// Only the sender deletes.
	if r := b.Call(t, "DELETE", "/2/dm_events/"+first, "oauth:author", "", nil); r.Status != 403 {
		t.Errorf("author deletes reader's message = %d %s", r.Status, r.Raw)
	}
	r = b.Call(t, "DELETE", "/2/dm_events/"+first, "oauth:reader", "", nil)
	if r.Status != 200 || apitest.Obj(r.Body, "data", "deleted") != true {
		t.Fatalf("delete = %d %s", r.Status, r.Raw)
	}
	validate(t, "DELETE", "/2/dm_events/"+first, r)
	if r := get(t, b, "/2/dm_events", "oauth:author"); apitest.Obj(r.Body, "meta", "result_count") != float64(1) {
		t.Errorf("after delete = %s", r.Raw)
	}

	// A group.
	path = "/2/dm_conversations"
	r = send(t, b, "oauth:reader", path, map[string]any{"conversation_type": "Group", "participant_ids": []string{author, fmt.Sprint(carol.ID)},
		"message": map[string]any{"text": "all of us"}})
	if r.Status != 201 {
		t.Fatalf("group = %d %s", r.Status, r.Raw)
	}
	validate(t, "POST", path, r)
	group := apitest.Obj(r.Body, "data", "dm_conversation_id").(string)
	r = get(t, b, "/2/dm_conversations/"+group+"/dm_events?expansions=participant_ids", "oauth:carol")
	if apitest.Obj(r.Body, "meta", "result_count") != float64(2) || apitest.Obj(r.Body, "data", "0", "text") != "all of us" ||
		apitest.Obj(r.Body, "data", "1", "event_type") != "ParticipantsJoin" || len(apitest.Obj(r.Body, "includes", "users").([]any)) != 3 {
		t.Errorf("group events = %s", r.Raw)
	}
}

// TestDMAttachments: a message may carry one of the sender's finished
// uploads, shown by the attachments.media_keys expansion; another's media
// is refused.
func TestDMAttachments(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	photo := apitest.SucceededMedia(t, b.DB, b.User, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"})
	author := fmt.Sprint(b.Author.ID)
	path := "/2/dm_conversations/with/" + author + "/messages"
	att := []map[string]string{{"media_id": fmt.Sprint(photo.ID)}}
	if r := send(t, b, "oauth:author", "/2/dm_conversations/with/"+fmt.Sprint(b.User.ID)+"/messages", map[string]any{"attachments": att}); r.Status != 400 {
		t.Errorf("another's media = %d %s", r.Status, r.Raw)
	}
	r := send(t, b, "oauth:reader", path, map[string]any{"attachments": att})
	if r.Status != 201 {
		t.Fatalf("send = %d %s", r.Status, r.Raw)
	}
	r = get(t, b, "/2/dm_events?expansions=attachments.media_keys&media.fields=width", "oauth:author")
	if apitest.Obj(r.Body, "data", "0", "attachments", "media_keys", "0") != photo.Key ||
		apitest.Obj(r.Body, "includes", "media", "0", "width") != float64(64) {
		t.Errorf("attachments = %s", r.Raw)
	}
}

// TestDMRefusals: bad input, credentials and scopes.
func TestDMRefusals(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	b.AddUser(t, "viewer", "read")
	author, me := fmt.Sprint(b.Author.ID), fmt.Sprint(b.User.ID)
	with := "/2/dm_conversations/with/" + author + "/messages"
	bad := []struct {
		name, path string
		body       any
	}{
		{"empty body", with, map[string]any{}},
		{"empty text", with, map[string]any{"text": ""}},
		{"unknown key", with, map[string]any{"text": "x", "extra": 1}},
		{"malformed media id", with, map[string]any{"attachments": []map[string]string{{"media_id": "abc"}}}},
		{"two attachments", with, map[string]any{"attachments": []map[string]string{{"media_id": "1"}, {"media_id": "2"}}}},
		{"unknown media", with, map[string]any{"attachments": []map[string]string{{"media_id": "42"}}}},
		{"to oneself", "/2/dm_conversations/with/" + me + "/messages", map[string]any{"text": "x"}},
		{"to nobody", "/2/dm_conversations/with/42/messages", map[string]any{"text": "x"}},
		{"malformed participant", "/2/dm_conversations/with/abc/messages", map[string]any{"text": "x"}},
		{"malformed conversation", "/2/dm_conversations/abc/messages", map[string]any{"text": "x"}},
		{"group type", "/2/dm_conversations", map[string]any{"conversation_type": "OneToOne", "participant_ids": []string{author, "42"}, "message": map[string]any{"text": "x"}}},
		{"group of one", "/2/dm_conversations", map[string]any{"conversation_type": "Group", "participant_ids": []string{author}, "message": map[string]any{"text": "x"}}},
		{"group without message", "/2/dm_conversations", map[string]any{"conversation_type": "Group", "participant_ids": []string{author, "42"}}},
		{"group of unknown users", "/2/dm_conversations", map[string]any{"conversation_type": "Group", "participant_ids": []string{author, "42"}, "message": map[string]any{"text": "x"}}},
	}
	for _, c := range bad {
		if r := send(t, b, "oauth:reader", c.path, c.body); r.Status != 400 || r.Body["type"] != apitest.Problems+"invalid-request" {
			t.Errorf("%s = %d %s", c.name, r.Status, r.Raw)
		}
	}
	for _, q := range []string{"max_results=0", "max_results=101", "event_types=Nope", "dm_event.fields=nope", "expansions=author_id", "pagination_token=zz", "since_id=1"} {
		if r := get(t, b, "/2/dm_events?"+q, "oauth:reader"); r.Status != 400 {
			t.Errorf("GET /2/dm_events?%s = %d %s", q, r.Status, r.Raw)
		}
	}
	if r := get(t, b, "/2/dm_conversations/abc/dm_events", "oauth:reader"); r.Status != 400 {
		t.Errorf("malformed conversation id = %d", r.Status)
	}

	// Credentials: user context only; writes need a read-write token and
	// dm.write, reads dm.read.
	if r := get(t, b, "/2/dm_events", b.Bearer); r.Status != 403 {
		t.Errorf("app-only list = %d", r.Status)
	}
	if r := send(t, b, "oauth:viewer", with, map[string]any{"text": "x"}); r.Status != 403 {
		t.Errorf("read-only token sends = %d %s", r.Status, r.Raw)
	}
	readOnly := userToken(t, b, b.User, "dm.read", "tweet.read", "users.read")
	if r := get(t, b, "/2/dm_events", readOnly); r.Status != 200 {
		t.Errorf("dm.read token lists = %d %s", r.Status, r.Raw)
	}
	if r := send(t, b, readOnly, with, map[string]any{"text": "x"}); r.Status != 403 || r.Body["type"] != apitest.Problems+"unsupported-authentication" {
		t.Errorf("send without dm.write = %d %s", r.Status, r.Raw)
	}
	writeOnly := userToken(t, b, b.User, "dm.write", "tweet.read", "users.read")
	if r := send(t, b, writeOnly, with, map[string]any{"text": "x"}); r.Status != 201 {
		t.Errorf("send with dm.write = %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/dm_events", writeOnly); r.Status != 403 {
		t.Errorf("list without dm.read = %d %s", r.Status, r.Raw)
	}
}
