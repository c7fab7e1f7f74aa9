package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// broadcastVerbs are the admin commands of Spaces and broadcasts
// (docs/spaces-broadcasts.md).
var broadcastVerbs = []string{"space start", "space end", "broadcast start", "broadcast end", "broadcast chat", "broadcast chat-remove"}

const broadcastUsage = `  space start --host NAME --title TEXT              start a Space hosted by NAME (spaces.start); prints its id
  space end --space ID                             end a Space (spaces.end)
  broadcast start --user NAME --title TEXT [--language en] [--moderators NAME,NAME]
                                                   start a live broadcast (broadcast.start); prints its id
  broadcast end --broadcast ID                     end a broadcast (broadcast.end)
  broadcast chat --broadcast ID --user NAME --text TEXT
                                                   send a chat message (broadcast.chat); prints its id
  broadcast chat-remove --broadcast ID --message ID --by NAME
                                                   remove a chat message, as the owner or a moderator
                                                   (broadcast.chat.remove)
`

// liveFlags are the flags of the Space and broadcast commands, and user
// update's --banner and --affiliate.
type liveFlags struct {
	Host, Title, Space, Broadcast, Text, Message, By, Language, Moderators string
	// Banner and Affiliate are user update's --banner URL and
	// --affiliate on|off.
	Banner, Affiliate optString
}

func (o *liveFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Host, "host", "", "space start: the host's username")
	fs.StringVar(&o.Title, "title", "", "space/broadcast start: the title")
	fs.StringVar(&o.Space, "space", "", "space end: the Space id")
	fs.StringVar(&o.Broadcast, "broadcast", "", "broadcast end/chat/chat-remove: the broadcast id")
	fs.StringVar(&o.Text, "text", "", "broadcast chat, chat send: the message")
	fs.StringVar(&o.Message, "message", "", "broadcast chat-remove: the message id")
	fs.StringVar(&o.By, "by", "", "broadcast chat-remove: the remover's username (owner or moderator)")
	fs.StringVar(&o.Language, "language", "en", "broadcast start: the language")
	fs.StringVar(&o.Moderators, "moderators", "", "broadcast start: usernames allowed to remove chat messages, comma-separated")
	fs.Var(&o.Banner, "banner", "user update: profile banner URL (http or https; \"\" clears it)")
	fs.Var(&o.Affiliate, "affiliate", "user update: affiliate badge, on or off")
}

// broadcastCommand runs one of broadcastVerbs; each prints the record.
func broadcastCommand(ctx context.Context, db *postgres.DB, verb string, o adminFlags) (any, error) {
	l := o.Live
	switch verb {
	case "space start":
		if err := required(map[string]string{"--host": l.Host, "--title": l.Title}); err != nil {
			return nil, err
		}
		host, err := findUser(ctx, db, l.Host)
		if err != nil {
			return nil, err
		}
		s, err := db.StartSpace(ctx, host.ID, l.Title)
		return spaceResult(s), err
	case "space end":
		if err := required(map[string]string{"--space": l.Space}); err != nil {
			return nil, err
		}
		s, err := db.EndSpace(ctx, l.Space)
		return spaceResult(s), err
	case "broadcast start":
		return startBroadcast(ctx, db, o)
	case "broadcast end":
		if err := required(map[string]string{"--broadcast": l.Broadcast}); err != nil {
			return nil, err
		}
		b, err := db.EndBroadcast(ctx, l.Broadcast)
		return broadcastResult(b), err
	case "broadcast chat":
		return broadcastChat(ctx, db, o)
	case "broadcast chat-remove":
		return removeBroadcastChat(ctx, db, o)
	}
	return nil, fmt.Errorf("unknown command (see aviary admin help)")
}

// required refuses the flags of m given empty (or not given), in name
// order.
func required(m map[string]string) error {
	var missing []string
	for name, v := range m {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("%s required", strings.Join(missing, ", "))
}

func startBroadcast(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	l := o.Live
	if err := required(map[string]string{"--user": o.User, "--title": l.Title, "--language": l.Language}); err != nil {
		return nil, err
	}
	owner, err := findUser(ctx, db, o.User)
	if err != nil {
		return nil, err
	}
	var mods []int64
	for _, name := range strings.Split(l.Moderators, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		u, err := findUser(ctx, db, name)
		if err != nil {
			return nil, fmt.Errorf("--moderators: %w", err)
		}
		mods = append(mods, u.ID)
	}
	b, err := db.StartBroadcast(ctx, owner.ID, l.Title, l.Language, mods)
	return broadcastResult(b), err
}

func broadcastChat(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	l := o.Live
	if err := required(map[string]string{"--broadcast": l.Broadcast, "--user": o.User, "--text": l.Text}); err != nil {
		return nil, err
	}
	u, err := findUser(ctx, db, o.User)
	if err != nil {
		return nil, err
	}
	m, err := db.AddBroadcastChat(ctx, l.Broadcast, u.ID, l.Text)
	if errors.Is(err, storage.ErrConflict) {
		return nil, fmt.Errorf("broadcast %s ended: %w", l.Broadcast, err)
	}
	return messageResult(m), err
}

func removeBroadcastChat(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	l := o.Live
	if err := required(map[string]string{"--broadcast": l.Broadcast, "--message": l.Message, "--by": l.By}); err != nil {
		return nil, err
	}
	msg, err := strconv.ParseInt(l.Message, 10, 64)
	if err != nil || msg <= 0 {
		return nil, fmt.Errorf("--message %q: want a message id", l.Message)
	}
	by, err := findUser(ctx, db, l.By)
	if err != nil {
		return nil, err
	}
	m, err := db.RemoveBroadcastChat(ctx, l.Broadcast, msg, by.ID)
	if errors.Is(err, storage.ErrNotModerator) {
		return nil, fmt.Errorf("--by %s: only the broadcast's owner or a moderator may remove a message", l.By)
	}
	return messageResult(m), err
}

func spaceResult(s storage.Space) map[string]any {
	out := map[string]any{"id": s.ID, "host_id": ids.Format(s.HostID), "title": s.Title, "state": "live",
		"created_at": s.CreatedAt}
	if s.EndedAt != nil {
		out["state"], out["ended_at"] = "ended", *s.EndedAt
	}
	return out
}

func broadcastResult(b storage.Broadcast) map[string]any {
	mods := make([]string, len(b.Moderators))
	for i, m := range b.Moderators {
		mods[i] = ids.Format(m)
	}
	out := map[string]any{"id": b.ID, "user_id": ids.Format(b.UserID), "title": b.Title, "language": b.Language,
		"moderator_ids": mods, "state": "running", "created_at": b.CreatedAt}
	if b.EndedAt != nil {
		out["state"], out["ended_at"] = "ended", *b.EndedAt
	}
	return out
}

func messageResult(m storage.BroadcastMessage) map[string]any {
	out := map[string]any{"id": ids.Format(m.ID), "broadcast_id": m.BroadcastID, "user_id": ids.Format(m.UserID),
		"text": m.Text, "created_at": m.CreatedAt}
	if m.RemovedAt != nil {
		out["removed_at"], out["removed_by"] = *m.RemovedAt, ids.Format(m.RemovedBy)
	}
	return out
}

// bannerAndBadge reads user update's --banner and --affiliate into c.
func bannerAndBadge(l liveFlags, c *postgres.ProfileUpdate) error {
	c.Banner = l.Banner.ptr()
	if c.Banner != nil && *c.Banner != "" && !webURL(*c.Banner) {
		return fmt.Errorf("--banner %q: want an http or https URL (or \"\" to clear it)", *c.Banner)
	}
	if l.Affiliate.set {
		on, err := parseOnOff(l.Affiliate.value)
		if err != nil {
			return fmt.Errorf("--affiliate: %w", err)
		}
		c.Affiliate = &on
	}
	return nil
}
