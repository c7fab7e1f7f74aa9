package postgres

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// Spaces, broadcasts and broadcast chat (docs/spaces-broadcasts.md): each
// change appends its activity event in its transaction.

// liveID is a new Space or broadcast id: 13 letters and digits, as the
// platform's, starting with "1" as theirs do.
func liveID() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	return "1" + randomFrom(alphabet, 12)
}

func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails (Go 1.24+)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// userCard is user id as an event shows them (events.UserCard), read in
// tx; a deleted or unknown user is storage.ErrNotFound.
func userCard(ctx context.Context, tx pgx.Tx, id int64) (events.UserCard, error) {
	var c events.UserCard
	err := tx.QueryRow(ctx, `SELECT u.id, u.username, u.name, u.description, u.url, u.location, u.profile_image_url,
			u.profile_banner_url, u.protected_at IS NOT NULL, u.verified, u.created_at,
			(SELECT count(*) FROM posts p WHERE p.author_id = u.id AND p.deleted_at IS NULL AND p.superseded_at IS NULL),
			(SELECT count(*) FROM likes l WHERE l.user_id = u.id)
		FROM users u WHERE u.id = $1 AND u.deleted_at IS NULL`, id).Scan(&c.ID, &c.Username, &c.Name, &c.Description,
		&c.URL, &c.Location, &c.ProfileImageURL, &c.BannerURL, &c.Protected, &c.Verified, &c.CreatedAt, &c.Posts, &c.Likes)
	if err != nil {
		return c, fmt.Errorf("load user %d: %w", id, translate(err))
	}
	return c, nil
}

const spaceColumns = `s.id, s.host_id, s.title, s.created_at, s.ended_at`

func scanSpace(row pgx.Row) (storage.Space, error) {
	var s storage.Space
	err := row.Scan(&s.ID, &s.HostID, &s.Title, &s.CreatedAt, &s.EndedAt)
	return s, err
}

// StartSpace starts a Space of host titled title and appends spaces.start.
func (db *DB) StartSpace(ctx context.Context, host int64, title string) (storage.Space, error) {
	var s storage.Space
	err := db.inTx(ctx, fmt.Sprintf("start a space of user %d", host), func(tx pgx.Tx) error {
		card, err := userCard(ctx, tx, host)
		if err != nil {
			return err
		}
		s, err = scanSpace(tx.QueryRow(ctx, `INSERT INTO spaces AS s (id, host_id, title) VALUES ($1, $2, $3)
			RETURNING `+spaceColumns, liveID(), host, title))
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.SpacesStart, user: host, payload: events.Space{ID: s.ID, Title: title, Host: card}})
	})
	return s, err
}

// EndSpace ends live Space id and appends spaces.end; an unknown Space is
// storage.ErrNotFound, an ended one storage.ErrConflict.
func (db *DB) EndSpace(ctx context.Context, id string) (storage.Space, error) {
	var s storage.Space
	err := db.inTx(ctx, "end space "+id, func(tx pgx.Tx) error {
		var err error
		if s, err = scanSpace(tx.QueryRow(ctx, `SELECT `+spaceColumns+` FROM spaces s WHERE s.id = $1 FOR UPDATE`, id)); err != nil {
			return err
		}
		if s.EndedAt != nil {
			return fmt.Errorf("%w: the space ended already", storage.ErrConflict)
		}
		card, err := userCard(ctx, tx, s.HostID)
		if err != nil {
			return err
		}
		if s, err = scanSpace(tx.QueryRow(ctx, `UPDATE spaces s SET ended_at = now() WHERE s.id = $1 RETURNING `+spaceColumns, id)); err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.SpacesEnd, user: s.HostID, payload: events.Space{ID: s.ID, Title: s.Title, Host: card}})
	})
	return s, err
}

// SpaceByID loads Space id.
func (db *DB) SpaceByID(ctx context.Context, id string) (storage.Space, error) {
	s, err := scanSpace(db.pool.QueryRow(ctx, `SELECT `+spaceColumns+` FROM spaces s WHERE s.id = $1`, id))
	return s, wrap("load space "+id, err)
}

const broadcastColumns = `b.id, b.user_id, b.title, b.language, b.moderators, b.created_at, b.ended_at`

func scanBroadcast(row pgx.Row) (storage.Broadcast, error) {
	var b storage.Broadcast
	err := row.Scan(&b.ID, &b.UserID, &b.Title, &b.Language, &b.Moderators, &b.CreatedAt, &b.EndedAt)
	return b, err
}

func broadcastEvent(b storage.Broadcast, owner events.UserCard) events.Broadcast {
	out := events.Broadcast{ID: b.ID, Title: b.Title, Language: b.Language, Owner: owner, CreatedAt: b.CreatedAt}
	if b.EndedAt != nil {
		out.EndedAt = *b.EndedAt
	}
	return out
}

// StartBroadcast starts a broadcast of user titled title in language
// (moderators may remove chat messages) and appends broadcast.start.
func (db *DB) StartBroadcast(ctx context.Context, user int64, title, language string, moderators []int64) (storage.Broadcast, error) {
	var b storage.Broadcast
	if moderators == nil {
		moderators = []int64{}
	}
	err := db.inTx(ctx, fmt.Sprintf("start a broadcast of user %d", user), func(tx pgx.Tx) error {
		card, err := userCard(ctx, tx, user)
		if err != nil {
			return err
		}
		b, err = scanBroadcast(tx.QueryRow(ctx, `INSERT INTO broadcasts AS b (id, user_id, title, language, moderators)
			VALUES ($1, $2, $3, $4, $5) RETURNING `+broadcastColumns, liveID(), user, title, language, moderators))
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.BroadcastStart, user: user, payload: broadcastEvent(b, card)})
	})
	return b, err
}

// EndBroadcast ends running broadcast id and appends broadcast.end; an
// unknown broadcast is storage.ErrNotFound, an ended one
// storage.ErrConflict.
func (db *DB) EndBroadcast(ctx context.Context, id string) (storage.Broadcast, error) {
	var b storage.Broadcast
	err := db.inTx(ctx, "end broadcast "+id, func(tx pgx.Tx) error {
		var err error
		if b, err = lockBroadcast(ctx, tx, id); err != nil {
			return err
		}
		if b.EndedAt != nil {
			return fmt.Errorf("%w: the broadcast ended already", storage.ErrConflict)
		}
		card, err := userCard(ctx, tx, b.UserID)
		if err != nil {
			return err
		}
		if b, err = scanBroadcast(tx.QueryRow(ctx, `UPDATE broadcasts b SET ended_at = now() WHERE b.id = $1
			RETURNING `+broadcastColumns, id)); err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.BroadcastEnd, user: b.UserID, payload: broadcastEvent(b, card)})
	})
	return b, err
}

// BroadcastByID loads broadcast id.
func (db *DB) BroadcastByID(ctx context.Context, id string) (storage.Broadcast, error) {
	b, err := scanBroadcast(db.pool.QueryRow(ctx, `SELECT `+broadcastColumns+` FROM broadcasts b WHERE b.id = $1`, id))
	return b, wrap("load broadcast "+id, err)
}

func lockBroadcast(ctx context.Context, tx pgx.Tx, id string) (storage.Broadcast, error) {
	return scanBroadcast(tx.QueryRow(ctx, `SELECT `+broadcastColumns+` FROM broadcasts b WHERE b.id = $1 FOR UPDATE`, id))
}

const broadcastMessageColumns = `m.id, m.broadcast_id, m.user_id, m.text, m.created_at, m.removed_at, COALESCE(m.removed_by, 0)`

func scanBroadcastMessage(row pgx.Row) (storage.BroadcastMessage, error) {
	var m storage.BroadcastMessage
	err := row.Scan(&m.ID, &m.BroadcastID, &m.UserID, &m.Text, &m.CreatedAt, &m.RemovedAt, &m.RemovedBy)
	return m, err
}

// AddBroadcastChat records user's message text in the chat of running
// broadcast id and appends broadcast.chat; an unknown broadcast is
// storage.ErrNotFound, an ended one storage.ErrConflict.
func (db *DB) AddBroadcastChat(ctx context.Context, id string, user int64, text string) (storage.BroadcastMessage, error) {
	var m storage.BroadcastMessage
	err := db.inTx(ctx, "chat in broadcast "+id, func(tx pgx.Tx) error {
		b, err := scanBroadcast(tx.QueryRow(ctx, `SELECT `+broadcastColumns+` FROM broadcasts b WHERE b.id = $1 FOR SHARE`, id))
		if err != nil {
			return err
		}
		if b.EndedAt != nil {
			return fmt.Errorf("%w: the broadcast ended", storage.ErrConflict)
		}
		card, err := userCard(ctx, tx, user)
		if err != nil {
			return err
		}
		if m, err = scanBroadcastMessage(tx.QueryRow(ctx, `INSERT INTO broadcast_chat_messages AS m (broadcast_id, user_id, text)
			VALUES ($1, $2, $3) RETURNING `+broadcastMessageColumns, id, user, text)); err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.BroadcastChat, user: user, subject: m.ID,
			payload: events.BroadcastChatSent{BroadcastID: id, OwnerID: b.UserID, MessageID: m.ID, Text: text, Author: card}})
	})
	return m, err
}

// RemoveBroadcastChat removes message msg of broadcast id's chat on behalf
// of by, the broadcast's owner or one of its moderators (else
// storage.ErrNotModerator), and appends broadcast.chat.remove. An unknown
// message (or one of another broadcast) is storage.ErrNotFound, one
// removed already storage.ErrConflict.
func (db *DB) RemoveBroadcastChat(ctx context.Context, id string, msg, by int64) (storage.BroadcastMessage, error) {
	var m storage.BroadcastMessage
	err := db.inTx(ctx, fmt.Sprintf("remove message %d of broadcast %s", msg, id), func(tx pgx.Tx) error {
		b, err := scanBroadcast(tx.QueryRow(ctx, `SELECT `+broadcastColumns+` FROM broadcasts b WHERE b.id = $1 FOR SHARE`, id))
		if err != nil {
			return err
		}
		if by != b.UserID && !containsID(b.Moderators, by) {
			return storage.ErrNotModerator
		}
		if m, err = scanBroadcastMessage(tx.QueryRow(ctx, `SELECT `+broadcastMessageColumns+` FROM broadcast_chat_messages m
			WHERE m.id = $1 AND m.broadcast_id = $2 FOR UPDATE`, msg, id)); err != nil {
			return err
		}
		if m.RemovedAt != nil {
			return fmt.Errorf("%w: the message was removed already", storage.ErrConflict)
		}
		if m, err = scanBroadcastMessage(tx.QueryRow(ctx, `UPDATE broadcast_chat_messages m SET removed_at = now(), removed_by = $2
			WHERE m.id = $1 RETURNING `+broadcastMessageColumns, msg, by)); err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.BroadcastChatRemove, user: by, subject: msg,
			payload: events.BroadcastChatRemoved{BroadcastID: id, OwnerID: b.UserID, MessageID: msg, AuthorID: m.UserID, RemovedBy: by}})
	})
	return m, err
}

func containsID(list []int64, id int64) bool {
	for _, v := range list {
		if v == id {
			return true
		}
	}
	return false
}
