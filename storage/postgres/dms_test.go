package postgres_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestDMConversations: a one-to-one message opens the conversation
// "<smaller>-<larger>" and appends dm.message.create naming the recipient;
// only participants list, load, delete or mark read; groups list their
// join event and message.
func TestDMConversations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob, carol := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	first, err := db.SendDM(ctx, storage.DMSend{SenderID: bob.ID, ParticipantID: alice.ID, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if want := storage.OneToOneConversationID(alice.ID, bob.ID); first.ConversationID != want || first.Type != storage.DMMessageCreate {
		t.Fatalf("message = %+v, want conversation %s", first, want)
	}
	reply, err := db.SendDM(ctx, storage.DMSend{SenderID: alice.ID, ConversationID: first.ConversationID, Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := eventsOf(t, db, 0, func(typ events.Type) bool { return typ == events.DMMessageCreate })
	if len(msgs) != 2 {
		t.Fatalf("%d dm.message.create events, want 2", len(msgs))
	}
	var m events.DMMessage
	if err := json.Unmarshal(msgs[0].Payload, &m); err != nil {
		t.Fatal(err)
	}
	if m.SenderID != bob.ID || !slices.Equal(m.RecipientIDs, []int64{alice.ID}) || m.EventID != first.ID || m.Text != "hi" || len(m.Users) != 2 {
		t.Errorf("payload = %+v", m)
	}

	list, err := db.DMEvents(ctx, alice.ID, storage.DMListing{Limit: 10})
	if err != nil || len(list) != 2 || list[0].ID != reply.ID {
		t.Fatalf("alice's events = %+v, %v; want newest first", list, err)
	}
	if _, err := db.DMEvents(ctx, carol.ID, storage.DMListing{ConversationID: first.ConversationID, Limit: 10}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("carol lists the conversation: %v, want not found", err)
	}
	if _, err := db.DMEvent(ctx, carol.ID, first.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("carol loads a message: %v, want not found", err)
	}
	if _, err := db.SendDM(ctx, storage.DMSend{SenderID: carol.ID, ConversationID: first.ConversationID, Text: "x"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("carol sends into the conversation: %v, want not found", err)
	}
	if _, err := db.SendDM(ctx, storage.DMSend{SenderID: carol.ID, ParticipantID: carol.ID, Text: "x"}); !errors.Is(err, storage.ErrDMRecipient) {
		t.Errorf("message to oneself: %v, want ErrDMRecipient", err)
	}
	if _, err := db.SendDM(ctx, storage.DMSend{SenderID: carol.ID, ParticipantID: alice.ID, MediaIDs: []int64{42}}); !errors.Is(err, storage.ErrDMMedia) {
		t.Errorf("unknown media: %v, want ErrDMMedia", err)
	}

	if err := db.DeleteDM(ctx, alice.ID, first.ID); !errors.Is(err, storage.ErrDMNotSender) {
		t.Errorf("alice deletes bob's message: %v", err)
	}
	if err := db.DeleteDM(ctx, bob.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DMEvent(ctx, alice.ID, first.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a deleted message loads: %v", err)
	}

	read, err := db.MarkDMRead(ctx, bob.ID, first.ConversationID, 0)
	if err != nil || read != reply.ID {
		t.Fatalf("mark read = %d, %v; want %d", read, err, reply.ID)
	}
	if err := db.IndicateDMTyping(ctx, carol.ID, first.ConversationID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("carol typing: %v", err)
	}
	if err := db.IndicateDMTyping(ctx, alice.ID, first.ConversationID); err != nil {
		t.Fatal(err)
	}
	marks := eventsOf(t, db, 0, func(typ events.Type) bool { return typ == events.DMRead || typ == events.DMTyping })
	if len(marks) != 2 || marks[0].Type != events.DMRead || marks[1].Type != events.DMTyping {
		t.Fatalf("marks = %+v", marks)
	}
	var mark events.DMMark
	if err := json.Unmarshal(marks[0].Payload, &mark); err != nil {
		t.Fatal(err)
	}
	if mark.UserID != bob.ID || mark.LastReadEventID != reply.ID || !slices.Equal(mark.RecipientIDs, []int64{alice.ID}) {
		t.Errorf("dm.read payload = %+v", mark)
	}

	group, err := db.CreateDMGroup(ctx, storage.DMSend{SenderID: carol.ID, Text: "all"}, []int64{alice.ID, bob.ID})
	if err != nil {
		t.Fatal(err)
	}
	joins, err := db.DMEvents(ctx, bob.ID, storage.DMListing{ConversationID: group.ConversationID, Types: []string{storage.DMParticipantsJoin}, Limit: 10})
	if err != nil || len(joins) != 1 || len(joins[0].ParticipantIDs) != 3 {
		t.Fatalf("group joins = %+v, %v", joins, err)
	}
}

// TestChat: a chat message and a join append their events; a repeated
// join appends nothing.
func TestChat(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	m, err := db.SendChat(ctx, alice.ID, bob.ID, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if m.ConversationID != storage.ChatConversationID(bob.ID, alice.ID) || m.ID == "" {
		t.Errorf("chat message = %+v", m)
	}
	for range 2 {
		if _, _, err := db.JoinChat(ctx, bob.ID, alice.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SendChat(ctx, alice.ID, alice.ID, "x"); !errors.Is(err, storage.ErrDMRecipient) {
		t.Errorf("chat to oneself: %v", err)
	}
	evs := eventsOf(t, db, 0, func(typ events.Type) bool { return typ == events.ChatMessageCreate || typ == events.ChatJoin })
	if len(evs) != 2 || evs[0].Type != events.ChatMessageCreate || evs[1].Type != events.ChatJoin {
		t.Fatalf("chat events = %+v", evs)
	}
	var c events.ChatMessage
	if err := json.Unmarshal(evs[0].Payload, &c); err != nil {
		t.Fatal(err)
	}
	if c.ID != m.ID || c.SenderID != alice.ID || c.RecipientID != bob.ID || c.Text != "secret" || c.KeyVersion == 0 {
		t.Errorf("chat payload = %+v", c)
	}
}
