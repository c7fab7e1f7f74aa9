package activity_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestDMSink runs DM and chat log events through the stream sink: each
// subscription receives its (type, user, direction), the envelope (without
// the payload, which the description does not describe for these types)
// matches ActivityStreamResponse with filter.direction on the message
// types, and a message from a suspended sender is not delivered.
func TestDMSink(t *testing.T) {
	t.Parallel()
	schemas := openapiSchemas(t)
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice, bob, mallory := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	for _, s := range []struct {
		typ, direction string
		user           storage.User
	}{
		{"dm.sent", "", alice}, {"dm.received", "inbound", bob}, {"dm.received", "outbound", bob},
		{"dm.read", "", alice}, {"dm.indicate_typing", "", alice},
		{"chat.sent", "", alice}, {"chat.received", "inbound", bob}, {"chat.conversation.join", "", alice},
	} {
		factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: s.typ,
			FilterUserID: s.user.ID, Direction: s.direction})
	}
	msg, err := db.SendDM(ctx, storage.DMSend{SenderID: alice.ID, ParticipantID: bob.ID, Text: "hi bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkDMRead(ctx, bob.ID, msg.ConversationID, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.IndicateDMTyping(ctx, bob.ID, msg.ConversationID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SendChat(ctx, alice.ID, bob.ID, "psst"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.JoinChat(ctx, bob.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SendDM(ctx, storage.DMSend{SenderID: mallory.ID, ParticipantID: bob.ID, Text: "spam"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetUserState(ctx, mallory.ID, "suspended", time.Now()); err != nil {
		t.Fatal(err)
	}

	published := streamLog(ctx, t, db)

	envelopeSchema := withoutPayload(t, schemas["ActivityStreamResponse"].Value)
	var got []string
	for _, a := range published {
		var env struct {
			Data struct {
				EventType string            `json:"event_type"`
				Filter    map[string]string `json:"filter"`
				Payload   json.RawMessage   `json:"payload"`
			} `json:"data"`
		}
		if err := json.Unmarshal(a.Body, &env); err != nil {
			t.Fatal(err)
		}
		got = append(got, env.Data.EventType+">"+env.Data.Filter["user_id"]+">"+env.Data.Filter["direction"])
		var generic map[string]any
		if err := json.Unmarshal(a.Body, &generic); err != nil {
			t.Fatal(err)
		}
		delete(generic["data"].(map[string]any), "payload")
		if err := envelopeSchema.VisitJSON(generic, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s envelope does not match ActivityStreamResponse: %v\nbody: %s", env.Data.EventType, err, a.Body)
		}
		if len(env.Data.Payload) < 2 {
			t.Errorf("%s: no payload", env.Data.EventType)
		}
	}
	a, b := ids.Format(alice.ID), ids.Format(bob.ID)
	want := []string{"dm.sent>" + a + ">outbound", "dm.received>" + b + ">inbound", "dm.read>" + a + ">", "dm.indicate_typing>" + a + ">",
		"chat.sent>" + a + ">outbound", "chat.received>" + b + ">inbound", "chat.conversation.join>" + a + ">"}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %v\nwant %v (none of the suspended sender's)", got, want)
	}
}
