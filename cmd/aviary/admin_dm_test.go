package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestAdminDM: `admin dm read|typing` and `admin chat send|join` write
// their events for participants, check their flags, and refuse a user
// outside the conversation.
func TestAdminDM(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	alice, bob, carol := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	msg, err := db.SendDM(ctx, storage.DMSend{SenderID: alice.ID, ParticipantID: bob.ID, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	conv := msg.ConversationID
	steps := []struct {
		verb    string
		opts    adminFlags
		want    map[string]any
		wantErr string
	}{
		{verb: "dm read", opts: adminFlags{User: bob.Username, DM: dmFlags{Conversation: conv}},
			want: map[string]any{"event": "dm.read", "last_read_event_id": strconv.FormatInt(msg.ID, 10)}},
		{verb: "dm typing", opts: adminFlags{User: bob.Username, DM: dmFlags{Conversation: conv}}, want: map[string]any{"event": "dm.indicate_typing"}},
		{verb: "dm typing", opts: adminFlags{User: carol.Username, DM: dmFlags{Conversation: conv}}, wantErr: "not found"},
		{verb: "dm read", opts: adminFlags{User: bob.Username}, wantErr: "--conversation"},
		{verb: "dm read", opts: adminFlags{User: bob.Username, DM: dmFlags{Conversation: conv, Event: 42}}, wantErr: "not found"},
		{verb: "chat send", opts: adminFlags{DM: dmFlags{From: alice.Username, To: bob.Username}, Live: liveFlags{Text: "s"}},
			want: map[string]any{"conversation_id": storage.ChatConversationID(alice.ID, bob.ID)}},
		{verb: "chat send", opts: adminFlags{DM: dmFlags{From: alice.Username, To: bob.Username}}, wantErr: "--text"},
		{verb: "chat join", opts: adminFlags{User: bob.Username, DM: dmFlags{With: alice.Username}}, want: map[string]any{"joined": true}},
		{verb: "chat join", opts: adminFlags{User: bob.Username, DM: dmFlags{With: alice.Username}}, want: map[string]any{"joined": false}},
		{verb: "chat join", opts: adminFlags{User: bob.Username, DM: dmFlags{With: bob.Username}}, wantErr: "recipient"},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, s.verb, s.opts)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d (%s): error %v, want %q", i, s.verb, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, s.verb, err)
		}
		res, _ := out.(map[string]any)
		for k, v := range s.want {
			if res[k] != v {
				t.Errorf("step %d (%s): %s = %v, want %v (%v)", i, s.verb, k, res[k], v, res)
			}
		}
	}
	evs, err := db.EventsAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, string(e.Type))
	}
	if got := strings.Join(types, ","); got != "dm.message.create,dm.read,dm.indicate_typing,chat.message.create,chat.conversation.join" {
		t.Errorf("log = %s", got)
	}
}
