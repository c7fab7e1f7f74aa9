package main

import (
	"context"
	"flag"
	"fmt"
	"slices"

	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// dmVerbs are the direct message and XChat commands (docs/direct-messages.md):
// the platform's v2 API has no endpoint for read receipts, typing or
// XChat, so the operator makes them happen, each writing its log event.
var dmVerbs = []string{"dm read", "dm typing", "chat send", "chat join"}

const dmUsage = `  dm read --user NAME --conversation ID [--event ID]
                                                   mark a DM conversation read (up to --event, default its newest
                                                   message) as the user: a dm.read activity event
  dm typing --user NAME --conversation ID          the user is typing in the conversation: dm.indicate_typing
  chat send --from NAME --to NAME --text T         an XChat message: chat.sent and chat.received
  chat join --user NAME --with NAME                the user joins the XChat conversation with the other user:
                                                   chat.conversation.join
`

// dmFlags are the flags of the dm and chat commands.
type dmFlags struct {
	Conversation, From, To, With string
	Event                        int64
}

func (d *dmFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&d.Conversation, "conversation", "", "dm read|typing: the DM conversation id")
	fs.Int64Var(&d.Event, "event", 0, "dm read: the last message read (default the newest)")
	fs.StringVar(&d.From, "from", "", "chat send: the sender (username or id)")
	fs.StringVar(&d.To, "to", "", "chat send: the recipient (username or id)")
	fs.StringVar(&d.With, "with", "", "chat join: the other member (username or id)")
}

// dmCommand runs one dm or chat command.
func dmCommand(ctx context.Context, db *postgres.DB, verb string, o adminFlags) (any, error) {
	switch verb {
	case "dm read", "dm typing":
		return dmMark(ctx, db, verb, o)
	case "chat send":
		return chatSend(ctx, db, o)
	case "chat join":
		return chatJoin(ctx, db, o)
	}
	return nil, fmt.Errorf("unknown command (see aviary admin help)")
}

func dmMark(ctx context.Context, db *postgres.DB, verb string, o adminFlags) (any, error) {
	if o.User == "" || o.DM.Conversation == "" {
		return nil, fmt.Errorf("--user and --conversation are required")
	}
	u, err := findUser(ctx, db, o.User)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"user_id": ids.Format(u.ID), "dm_conversation_id": o.DM.Conversation}
	if verb == "dm typing" {
		if err := db.IndicateDMTyping(ctx, u.ID, o.DM.Conversation); err != nil {
			return nil, fmt.Errorf("conversation %s of %s: %w", o.DM.Conversation, u.Username, err)
		}
		out["event"] = "dm.indicate_typing"
		return out, nil
	}
	last, err := db.MarkDMRead(ctx, u.ID, o.DM.Conversation, o.DM.Event)
	if err != nil {
		return nil, fmt.Errorf("conversation %s of %s (and message %d): %w", o.DM.Conversation, u.Username, o.DM.Event, err)
	}
	out["event"], out["last_read_event_id"] = "dm.read", ids.Format(last)
	return out, nil
}

func chatSend(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.DM.From == "" || o.DM.To == "" || o.Live.Text == "" {
		return nil, fmt.Errorf("--from, --to and --text are required")
	}
	from, err := findUser(ctx, db, o.DM.From)
	if err != nil {
		return nil, err
	}
	to, err := findUser(ctx, db, o.DM.To)
	if err != nil {
		return nil, err
	}
	m, err := db.SendChat(ctx, from.ID, to.ID, o.Live.Text)
	if err != nil {
		return nil, fmt.Errorf("chat from %s to %s: %w", from.Username, to.Username, err)
	}
	return map[string]any{"id": m.ID, "conversation_id": m.ConversationID, "sender_id": ids.Format(from.ID),
		"recipient_id": ids.Format(to.ID), "events": []string{"chat.sent", "chat.received"}}, nil
}

func chatJoin(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.User == "" || o.DM.With == "" {
		return nil, fmt.Errorf("--user and --with are required")
	}
	u, err := findUser(ctx, db, o.User)
	if err != nil {
		return nil, err
	}
	peer, err := findUser(ctx, db, o.DM.With)
	if err != nil {
		return nil, err
	}
	conv, joined, err := db.JoinChat(ctx, u.ID, peer.ID)
	if err != nil {
		return nil, fmt.Errorf("chat of %s with %s: %w", u.Username, peer.Username, err)
	}
	out := map[string]any{"conversation_id": conv, "user_id": ids.Format(u.ID), "joined": joined}
	if joined {
		out["events"] = []string{"chat.conversation.join"}
	}
	return out, nil
}

// isDMVerb reports whether verb is a dm or chat command.
func isDMVerb(verb string) bool { return slices.Contains(dmVerbs, verb) }
