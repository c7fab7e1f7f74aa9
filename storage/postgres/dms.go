package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// Direct messages and XChat (docs/direct-messages.md). Every change
// appends its log event in its own transaction.

const dmEventColumns = `e.id, e.conversation_id, e.event_type, e.sender_id, e.text, e.media_ids,
	COALESCE((SELECT array_agg(m.media_key ORDER BY x.ord) FROM unnest(e.media_ids) WITH ORDINALITY AS x(id, ord)
	  JOIN media m ON m.id = x.id), '{}'), e.participant_ids, e.created_at`

func scanDMEvent(row pgx.Row) (storage.DMEvent, error) {
	var e storage.DMEvent
	err := row.Scan(&e.ID, &e.ConversationID, &e.Type, &e.SenderID, &e.Text, &e.MediaIDs, &e.MediaKeys, &e.ParticipantIDs, &e.CreatedAt)
	return e, err
}

// activeUser reports whether user id exists and is neither deleted,
// suspended nor deactivated.
func activeUser(ctx context.Context, tx pgx.Tx, id int64) (bool, error) {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 AND deleted_at IS NULL
		AND suspended_at IS NULL AND deactivated_at IS NULL)`, id).Scan(&ok)
	return ok, err
}

// dmParticipants locks conversation conv's row and returns its
// participants; storage.ErrNotFound unless user is one of them.
func dmParticipants(ctx context.Context, tx pgx.Tx, conv string, user int64) ([]int64, error) {
	var list []int64
	err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT array_agg(p.user_id ORDER BY p.user_id) FROM dm_participants p
		WHERE p.conversation_id = c.id), '{}') FROM dm_conversations c WHERE c.id = $1 FOR UPDATE`, conv).Scan(&list)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !slices.Contains(list, user) {
		return nil, storage.ErrNotFound
	}
	return list, err
}

// dmUsers snapshots users ids for an event's payload.
func dmUsers(ctx context.Context, tx pgx.Tx, ids []int64) ([]events.DMUser, error) {
	rows, err := tx.Query(ctx, `SELECT u.id, u.username, u.name, u.created_at, u.protected_at IS NOT NULL, u.verified,
		u.description, u.location, u.url, u.profile_image_url FROM users u WHERE u.id = ANY($1) ORDER BY u.id`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (events.DMUser, error) {
		var u events.DMUser
		err := r.Scan(&u.ID, &u.Username, &u.Name, &u.CreatedAt, &u.Protected, &u.Verified, &u.Description, &u.Location, &u.URL, &u.ProfileImageURL)
		return u, err
	})
}

func others(list []int64, user int64) []int64 {
	out := []int64{}
	for _, id := range list {
		if id != user {
			out = append(out, id)
		}
	}
	return out
}

// openOneToOne creates (if new) the one-to-one conversation of sender and
// participant, who must be an active user other than the sender.
func openOneToOne(ctx context.Context, tx pgx.Tx, sender, participant int64) (string, error) {
	if participant == sender {
		return "", storage.ErrDMRecipient
	}
	ok, err := activeUser(ctx, tx, participant)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", storage.ErrDMRecipient
	}
	conv := storage.OneToOneConversationID(sender, participant)
	if _, err := tx.Exec(ctx, `INSERT INTO dm_conversations (id, kind, created_by) VALUES ($1, 'one_to_one', $2)
		ON CONFLICT DO NOTHING`, conv, sender); err != nil {
		return "", err
	}
	_, err = tx.Exec(ctx, `INSERT INTO dm_participants (conversation_id, user_id) SELECT $1, unnest($2::bigint[])
		ON CONFLICT DO NOTHING`, conv, []int64{sender, participant})
	return conv, err
}

// checkOneToOne checks a send into a one-to-one conversation of members:
// the other participant must still be active (storage.ErrDMRecipient) and
// neither may block the other (storage.ErrBlocked).
func checkOneToOne(ctx context.Context, tx pgx.Tx, sender int64, members []int64) error {
	for _, id := range others(members, sender) {
		ok, err := activeUser(ctx, tx, id)
		if err != nil {
			return err
		}
		if !ok {
			return storage.ErrDMRecipient
		}
	}
	return checkDMBlocks(ctx, tx, sender, members)
}

// checkDMBlocks reports storage.ErrBlocked when sender blocks, or is
// blocked by, any other of members: neither may write to the other
// (docs/direct-messages.md, "Blocks").
func checkDMBlocks(ctx context.Context, tx pgx.Tx, sender int64, members []int64) error {
	var blocked bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blocks WHERE (source_id = $1 AND target_id = ANY($2))
		OR (target_id = $1 AND source_id = ANY($2)))`, sender, others(members, sender)).Scan(&blocked)
	if err != nil {
		return err
	}
	if blocked {
		return storage.ErrBlocked
	}
	return nil
}

// checkDMMedia reports storage.ErrDMMedia unless every id is a finished
// upload the sender owns.
func checkDMMedia(ctx context.Context, tx pgx.Tx, sender int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var n int
	err := tx.QueryRow(ctx, `SELECT count(*) FROM media WHERE id = ANY($1) AND state = 'succeeded'
		AND (owner_id = $2 OR $2 = ANY(additional_owners))`, ids, sender).Scan(&n)
	if err != nil {
		return err
	}
	if n != len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
		return storage.ErrDMMedia
	}
	return nil
}

// insertDMEvent records one event of conversation conv.
func insertDMEvent(ctx context.Context, tx pgx.Tx, conv, typ string, sender, app int64, text string, media, participants []int64) (storage.DMEvent, error) {
	if media == nil {
		media = []int64{}
	}
	if participants == nil {
		participants = []int64{}
	}
	return scanDMEvent(tx.QueryRow(ctx, `WITH e AS (INSERT INTO dm_events (conversation_id, event_type, sender_id, app_id, text, media_ids, participant_ids, created_at)
		VALUES ($1, $2, $3, NULLIF($4::bigint, 0), $5, $6, $7, clock_timestamp()) RETURNING *)
		SELECT `+dmEventColumns+` FROM e`, conv, typ, sender, app, text, media, participants))
}

// SendDM records a message from in.SenderID: to the conversation
// in.ConversationID, which the sender must be in (storage.ErrNotFound), or
// to the one-to-one conversation with in.ParticipantID, created when new
// (storage.ErrDMRecipient for an unknown or inactive user, or the sender;
// also when the other participant of a one-to-one conversation named by
// id is no longer active). A block between the two users of a one-to-one
// conversation is storage.ErrBlocked.
// Attached media must be the sender's finished uploads
// (storage.ErrDMMedia). It appends dm.message.create.
func (db *DB) SendDM(ctx context.Context, in storage.DMSend) (storage.DMEvent, error) {
	var ev storage.DMEvent
	err := db.inTx(ctx, fmt.Sprintf("send direct message from user %d", in.SenderID), func(tx pgx.Tx) error {
		conv := in.ConversationID
		if conv == "" {
			var err error
			if conv, err = openOneToOne(ctx, tx, in.SenderID, in.ParticipantID); err != nil {
				return err
			}
		}
		members, err := dmParticipants(ctx, tx, conv, in.SenderID)
		if err != nil {
			return err
		}
		if storage.IsOneToOneConversationID(conv) {
			if err := checkOneToOne(ctx, tx, in.SenderID, members); err != nil {
				return err
			}
		}
		if err := checkDMMedia(ctx, tx, in.SenderID, in.MediaIDs); err != nil {
			return err
		}
		if ev, err = insertDMEvent(ctx, tx, conv, storage.DMMessageCreate, in.SenderID, in.AppID, in.Text, in.MediaIDs, nil); err != nil {
			return err
		}
		return appendDMMessage(ctx, tx, ev, in.AppID, members)
	})
	return ev, err
}

func appendDMMessage(ctx context.Context, tx pgx.Tx, ev storage.DMEvent, app int64, members []int64) error {
	users, err := dmUsers(ctx, tx, members)
	if err != nil {
		return err
	}
	msg := events.DMMessage{EventID: ev.ID, ConversationID: ev.ConversationID, SenderID: ev.SenderID,
		RecipientIDs: others(members, ev.SenderID), Text: ev.Text, MediaIDs: ev.MediaIDs, CreatedAt: ev.CreatedAt, Users: users}
	return appendEvents(ctx, tx, newEvent{typ: events.DMMessageCreate, app: app, user: ev.SenderID, subject: ev.ID, payload: msg})
}

// CreateDMGroup creates a group conversation of sender and participants
// (each an active user: storage.ErrDMRecipient names none in particular),
// records its ParticipantsJoin event and the first message, and appends
// dm.message.create. It returns the message.
func (db *DB) CreateDMGroup(ctx context.Context, in storage.DMSend, participants []int64) (storage.DMEvent, error) {
	var ev storage.DMEvent
	err := db.inTx(ctx, fmt.Sprintf("create group conversation of user %d", in.SenderID), func(tx pgx.Tx) error {
		members := slices.Compact(slices.Sorted(slices.Values(append([]int64{in.SenderID}, participants...))))
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE id = ANY($1) AND deleted_at IS NULL
			AND suspended_at IS NULL AND deactivated_at IS NULL`, members).Scan(&n); err != nil {
			return err
		}
		if n != len(members) || len(members) < 3 {
			return storage.ErrDMRecipient
		}
		if err := checkDMBlocks(ctx, tx, in.SenderID, members); err != nil {
			return err
		}
		id, err := nextID(ctx, tx)
		if err != nil {
			return err
		}
		conv := fmt.Sprint(id)
		if _, err := tx.Exec(ctx, `INSERT INTO dm_conversations (id, kind, created_by) VALUES ($1, 'group', $2)`, conv, in.SenderID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO dm_participants (conversation_id, user_id) SELECT $1, unnest($2::bigint[])`, conv, members); err != nil {
			return err
		}
		if err := checkDMMedia(ctx, tx, in.SenderID, in.MediaIDs); err != nil {
			return err
		}
		if _, err := insertDMEvent(ctx, tx, conv, storage.DMParticipantsJoin, in.SenderID, in.AppID, "", nil, members); err != nil {
			return err
		}
		if ev, err = insertDMEvent(ctx, tx, conv, storage.DMMessageCreate, in.SenderID, in.AppID, in.Text, in.MediaIDs, nil); err != nil {
			return err
		}
		return appendDMMessage(ctx, tx, ev, in.AppID, members)
	})
	return ev, err
}

// DMEvents lists viewer's events, newest first: of every conversation
// viewer is in, or of l.ConversationID (storage.ErrNotFound unless viewer
// is in it). Deleted messages are not listed.
func (db *DB) DMEvents(ctx context.Context, viewer int64, l storage.DMListing) ([]storage.DMEvent, error) {
	op := fmt.Sprintf("list direct message events of user %d", viewer)
	if l.ConversationID != "" {
		var in bool
		err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM dm_participants WHERE conversation_id = $1 AND user_id = $2)`,
			l.ConversationID, viewer).Scan(&in)
		if err != nil {
			return nil, wrap(op, err)
		}
		if !in {
			return nil, wrap(op, storage.ErrNotFound)
		}
	}
	rows, err := db.pool.Query(ctx, `SELECT `+dmEventColumns+` FROM dm_events e
		JOIN dm_participants p ON p.conversation_id = e.conversation_id AND p.user_id = $1
		WHERE e.deleted_at IS NULL AND ($2 = '' OR e.conversation_id = $2)
		  AND (cardinality($3::text[]) = 0 OR e.event_type = ANY($3)) AND ($4::bigint = 0 OR e.id < $4)
		ORDER BY e.id DESC LIMIT $5`, viewer, l.ConversationID, append([]string{}, l.Types...), l.BeforeID, l.Limit)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.DMEvent, error) { return scanDMEvent(r) })
	return list, wrap(op, err)
}

// DMEvent loads event id of a conversation viewer is in
// (storage.ErrNotFound otherwise, or when it was deleted).
func (db *DB) DMEvent(ctx context.Context, viewer, id int64) (storage.DMEvent, error) {
	ev, err := scanDMEvent(db.pool.QueryRow(ctx, `SELECT `+dmEventColumns+` FROM dm_events e
		JOIN dm_participants p ON p.conversation_id = e.conversation_id AND p.user_id = $1
		WHERE e.id = $2 AND e.deleted_at IS NULL`, viewer, id))
	return ev, wrap(fmt.Sprintf("load direct message event %d for user %d", id, viewer), err)
}

// DeleteDM hides message id, sent by user, from every participant. An
// event user can not see is storage.ErrNotFound; another's message, or an
// event that is not a message, storage.ErrDMNotSender.
func (db *DB) DeleteDM(ctx context.Context, user, id int64) error {
	return db.inTx(ctx, fmt.Sprintf("delete direct message %d of user %d", id, user), func(tx pgx.Tx) error {
		var sender int64
		var typ string
		err := tx.QueryRow(ctx, `SELECT e.sender_id, e.event_type FROM dm_events e
			JOIN dm_participants p ON p.conversation_id = e.conversation_id AND p.user_id = $1
			WHERE e.id = $2 AND e.deleted_at IS NULL FOR UPDATE OF e`, user, id).Scan(&sender, &typ)
		if err != nil {
			return err
		}
		if sender != user || typ != storage.DMMessageCreate {
			return storage.ErrDMNotSender
		}
		_, err = tx.Exec(ctx, `UPDATE dm_events SET deleted_at = now() WHERE id = $1`, id)
		return err
	})
}

// MarkDMRead records that user read conversation conv up to message
// lastRead (0: its newest message; storage.ErrNotFound when the
// conversation is not user's, or lastRead not one of its messages) and
// appends dm.read. It returns the message marked.
func (db *DB) MarkDMRead(ctx context.Context, user int64, conv string, lastRead int64) (int64, error) {
	err := db.inTx(ctx, fmt.Sprintf("mark conversation %s read for user %d", conv, user), func(tx pgx.Tx) error {
		members, err := dmParticipants(ctx, tx, conv, user)
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT id FROM dm_events WHERE conversation_id = $1 AND event_type = 'MessageCreate'
			AND deleted_at IS NULL AND ($2::bigint = 0 OR id = $2) ORDER BY id DESC LIMIT 1`, conv, lastRead).Scan(&lastRead)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE dm_participants SET last_read_event_id = greatest(last_read_event_id, $3)
			WHERE conversation_id = $1 AND user_id = $2`, conv, user, lastRead); err != nil {
			return err
		}
		return appendDMMark(ctx, tx, events.DMRead, conv, user, lastRead, members)
	})
	return lastRead, err
}

// IndicateDMTyping appends dm.indicate_typing: user is typing in
// conversation conv (storage.ErrNotFound unless user is in it).
func (db *DB) IndicateDMTyping(ctx context.Context, user int64, conv string) error {
	return db.inTx(ctx, fmt.Sprintf("typing in conversation %s by user %d", conv, user), func(tx pgx.Tx) error {
		members, err := dmParticipants(ctx, tx, conv, user)
		if err != nil {
			return err
		}
		return appendDMMark(ctx, tx, events.DMTyping, conv, user, 0, members)
	})
}

func appendDMMark(ctx context.Context, tx pgx.Tx, typ events.Type, conv string, user, lastRead int64, members []int64) error {
	users, err := dmUsers(ctx, tx, members)
	if err != nil {
		return err
	}
	var at time.Time
	if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&at); err != nil {
		return err
	}
	mark := events.DMMark{ConversationID: conv, UserID: user, RecipientIDs: others(members, user),
		LastReadEventID: lastRead, At: at, Users: users}
	return appendEvents(ctx, tx, newEvent{typ: typ, user: user, subject: lastRead, payload: mark})
}

// chatKeyVersion is the conversation's key version: the millisecond of
// its first message or membership (now for a new conversation).
func chatKeyVersion(ctx context.Context, tx pgx.Tx, conv string) (int64, error) {
	var v int64
	err := tx.QueryRow(ctx, `SELECT (extract(epoch FROM COALESCE(least(
		(SELECT min(created_at) FROM chat_messages WHERE conversation_id = $1),
		(SELECT min(joined_at) FROM chat_members WHERE conversation_id = $1)), now())) * 1000)::bigint`, conv).Scan(&v)
	return v, err
}

// SendChat records an XChat message from sender to recipient (an active
// user other than the sender: storage.ErrDMRecipient) and appends
// chat.message.create.
func (db *DB) SendChat(ctx context.Context, sender, recipient int64, text string) (storage.ChatMessage, error) {
	m := storage.ChatMessage{SenderID: sender, RecipientID: recipient, Text: text, ConversationID: storage.ChatConversationID(sender, recipient)}
	err := db.inTx(ctx, fmt.Sprintf("send chat message from user %d", sender), func(tx pgx.Tx) error {
		ok, err := activeUser(ctx, tx, recipient)
		if err != nil {
			return err
		}
		if !ok || recipient == sender {
			return storage.ErrDMRecipient
		}
		version, err := chatKeyVersion(ctx, tx, m.ConversationID)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO chat_messages (id, conversation_id, sender_id, recipient_id, text, created_at)
			VALUES (gen_random_uuid(), $1, $2, $3, $4, clock_timestamp()) RETURNING id::text, created_at`,
			m.ConversationID, sender, recipient, text).Scan(&m.ID, &m.CreatedAt); err != nil {
			return err
		}
		payload := events.ChatMessage{ID: m.ID, ConversationID: m.ConversationID, SenderID: sender, RecipientID: recipient,
			Text: text, KeyVersion: version, CreatedAt: m.CreatedAt}
		return appendEvents(ctx, tx, newEvent{typ: events.ChatMessageCreate, user: sender, subject: recipient, payload: payload})
	})
	return m, err
}

// JoinChat records that user joined the XChat conversation with peer (an
// active user other than user: storage.ErrDMRecipient) and appends
// chat.conversation.join; a repeat records and appends nothing (false).
func (db *DB) JoinChat(ctx context.Context, user, peer int64) (string, bool, error) {
	conv := storage.ChatConversationID(user, peer)
	var joined bool
	err := db.inTx(ctx, fmt.Sprintf("join chat conversation %s for user %d", conv, user), func(tx pgx.Tx) error {
		ok, err := activeUser(ctx, tx, peer)
		if err != nil {
			return err
		}
		if !ok || peer == user {
			return storage.ErrDMRecipient
		}
		version, err := chatKeyVersion(ctx, tx, conv)
		if err != nil {
			return err
		}
		var at time.Time
		err = tx.QueryRow(ctx, `INSERT INTO chat_members (conversation_id, user_id, joined_at) VALUES ($1, $2, clock_timestamp())
			ON CONFLICT DO NOTHING RETURNING joined_at`, conv, user).Scan(&at)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		joined = true
		payload := events.ChatJoined{ConversationID: conv, UserID: user, PeerID: peer, KeyVersion: version, JoinedAt: at}
		return appendEvents(ctx, tx, newEvent{typ: events.ChatJoin, user: user, payload: payload})
	})
	return conv, joined, err
}
