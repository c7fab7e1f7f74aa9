package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// The event log (migration 0024, docs/events.md).

// EventsChannel is the LISTEN/NOTIFY channel an append notifies, with the
// highest seq it appended as the payload.
const EventsChannel = "aviary_events"

// eventsLockKey is the advisory lock (two-key form, a key space no
// single-key lock of the schema shares) every append takes before it draws
// its seq, held until its transaction ends: seq follows commit order.
var eventsLockKey = [2]int32{730119, 24}

// newEvent is one event an append writes; Seq and CreatedAt come from the
// database.
type newEvent struct {
	typ                events.Type
	app, user, subject int64
	payload            any
}

// appendEvents appends evs, in order, to the log and notifies EventsChannel.
// It must be the last statement of tx: it takes the log's lock, held
// until the commit, so seq grows in commit order and the lock is held only
// for the commit itself. One round trip.
func appendEvents(ctx context.Context, tx pgx.Tx, evs ...newEvent) error {
	if len(evs) == 0 {
		return nil
	}
	types := make([]string, len(evs))
	apps, users, subjects := make([]int64, len(evs)), make([]int64, len(evs)), make([]int64, len(evs))
	payloads := make([]string, len(evs))
	for i, e := range evs {
		body, err := json.Marshal(e.payload)
		if err != nil {
			return fmt.Errorf("encode %s event of %d: %w", e.typ, e.subject, err)
		}
		types[i], apps[i], users[i], subjects[i], payloads[i] = string(e.typ), e.app, e.user, e.subject, string(body)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, eventsLockKey[0], eventsLockKey[1])
	b.Queue(`WITH ins AS (
			INSERT INTO events (seq, type, app_id, user_id, subject_id, payload)
			SELECT nextval('events_seq'), e.type, e.app_id, e.user_id, e.subject_id, e.payload::jsonb
			FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[])
				WITH ORDINALITY AS e(type, app_id, user_id, subject_id, payload, ord)
			ORDER BY e.ord
			RETURNING seq)
		SELECT pg_notify('`+EventsChannel+`', max(seq)::text) FROM ins`, types, apps, users, subjects, payloads)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("append %d events: %w", len(evs), err)
	}
	return nil
}

const eventColumns = `seq, type, app_id, user_id, subject_id, payload, created_at`

func scanEvents(rows pgx.Rows) ([]events.Event, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Event, error) {
		var e events.Event
		var typ string
		err := row.Scan(&e.Seq, &typ, &e.AppID, &e.UserID, &e.SubjectID, &e.Payload, &e.CreatedAt)
		e.Type = events.Type(typ)
		return e, err
	})
}

// EventsAfter returns up to limit committed events with Seq > after, in
// Seq order (events.Log).
func (db *DB) EventsAfter(ctx context.Context, after int64, limit int) ([]events.Event, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+eventColumns+` FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("read events after %d", after), err)
	}
	out, err := scanEvents(rows)
	return out, wrap(fmt.Sprintf("scan events after %d", after), err)
}

// EventsSince returns up to limit committed events with Seq > after
// created at or after since, in Seq order (events.Log; backfill). The
// append stamps created_at under the log's lock, so it grows with seq:
// the first seq at or after since (events_created_at) bounds a range scan
// of the primary key instead of a filter over the whole log.
func (db *DB) EventsSince(ctx context.Context, since time.Time, after int64, limit int) ([]events.Event, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+eventColumns+` FROM events
		WHERE seq > $2 AND created_at >= $1
		  AND seq >= (SELECT min(seq) FROM events WHERE created_at >= $1)
		ORDER BY seq LIMIT $3`, since, after, limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("read events since %s", since.Format(time.RFC3339)), err)
	}
	out, err := scanEvents(rows)
	return out, wrap("scan events since", err)
}

// EventHead is the Seq of the newest committed event, 0 when none
// (events.Log). The retention sweep always keeps the newest event, so the
// head never moves back.
func (db *DB) EventHead(ctx context.Context) (int64, error) {
	var head int64
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM events`).Scan(&head)
	return head, wrap("read event head", err)
}

// DeleteEventsOlderThan deletes the events created more than age ago (the
// database's clock), batch rows per statement so no statement holds many
// locks or a long snapshot, and returns how many it deleted. The newest
// event is always kept (EventHead).
func (db *DB) DeleteEventsOlderThan(ctx context.Context, age time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = 10_000
	}
	var total int64
	for {
		tag, err := db.pool.Exec(ctx, `DELETE FROM events WHERE seq IN (
			SELECT seq FROM events WHERE created_at < now() - $1::interval
			  AND seq < (SELECT max(seq) FROM events) ORDER BY seq LIMIT $2)`, age, batch)
		if err != nil {
			return total, wrap("delete old events", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}

// Event cursors: a dispatcher's committed position, under a lease judged
// by the database's clock (one holder per cursor name at a time).

// ClaimEventCursor takes the lease on cursor name for holder for ttl and
// returns the cursor's committed seq; false when another holder's lease
// has not expired. A cursor claimed for the first time starts at 0 (every
// retained event is dispatched).
func (db *DB) ClaimEventCursor(ctx context.Context, name, holder string, ttl time.Duration) (int64, bool, error) {
	var seq int64
	err := db.pool.QueryRow(ctx, `INSERT INTO event_cursors AS c (name, holder, held_until)
		VALUES ($1, $2, clock_timestamp() + $3::interval)
		ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, held_until = EXCLUDED.held_until
		WHERE c.held_until IS NULL OR c.held_until <= clock_timestamp() OR c.holder = EXCLUDED.holder
		RETURNING c.seq`, name, holder, ttl).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, wrap(fmt.Sprintf("claim event cursor %s", name), err)
	}
	return seq, true, nil
}

// RenewEventCursor extends holder's lease on cursor name to ttl from now;
// false when holder's lease expired (another may hold it).
func (db *DB) RenewEventCursor(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE event_cursors SET held_until = clock_timestamp() + $3::interval
		WHERE name = $1 AND holder = $2 AND held_until > clock_timestamp()`, name, holder, ttl)
	if err != nil {
		return false, wrap(fmt.Sprintf("renew event cursor %s", name), err)
	}
	return tag.RowsAffected() == 1, nil
}

// CommitEventCursor moves cursor name to seq and renews holder's lease for
// ttl, only while holder's lease lives; false otherwise (the cursor is not
// moved). The cursor never moves back.
func (db *DB) CommitEventCursor(ctx context.Context, name, holder string, seq int64, ttl time.Duration) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE event_cursors
		SET seq = GREATEST(seq, $3), updated_at = clock_timestamp(), held_until = clock_timestamp() + $4::interval
		WHERE name = $1 AND holder = $2 AND held_until > clock_timestamp()`, name, holder, seq, ttl)
	if err != nil {
		return false, wrap(fmt.Sprintf("commit event cursor %s at %d", name, seq), err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseEventCursor ends holder's lease on cursor name (nothing when
// another holds it), so another replica takes over at once.
func (db *DB) ReleaseEventCursor(ctx context.Context, name, holder string) error {
	_, err := db.pool.Exec(ctx, `UPDATE event_cursors SET holder = NULL, held_until = NULL
		WHERE name = $1 AND holder = $2`, name, holder)
	return wrap(fmt.Sprintf("release event cursor %s", name), err)
}

// EventCursor returns cursor name's committed seq (0 when it does not
// exist yet).
func (db *DB) EventCursor(ctx context.Context, name string) (int64, error) {
	var seq int64
	err := db.pool.QueryRow(ctx, `SELECT COALESCE((SELECT seq FROM event_cursors WHERE name = $1), 0)`, name).Scan(&seq)
	return seq, wrap(fmt.Sprintf("read event cursor %s", name), err)
}

// ListenEvents opens a dedicated connection (outside the pool, without
// the pool's call bound) listening on EventsChannel: wait blocks until a
// notification arrives (nil) or ctx ends or the connection fails (an
// error); close ends the connection. A dispatcher wakes on it.
func (db *DB) ListenEvents(ctx context.Context) (wait func(ctx context.Context) error, close func(), err error) {
	return db.listen(ctx, EventsChannel)
}

// listen opens a dedicated connection (outside the pool, without the
// pool's call bound) listening on channel.
func (db *DB) listen(ctx context.Context, channel string) (wait func(ctx context.Context) error, close func(), err error) {
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.Tracer = nil
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, nil, wrap("connect to listen on "+channel, err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, nil, wrap("listen on "+channel, err)
	}
	wait = func(ctx context.Context) error {
		_, err := conn.WaitForNotification(ctx)
		return err
	}
	close = func() { _ = conn.Close(context.Background()) }
	return wait, close, nil
}

// Post events: their payloads are filled inside the writing transaction.

// postCreated is the post.create event of post p (as stored, its id and
// time set) with its search terms, made with app p.AppID by p.AuthorID;
// editOf is the version p follows (0: none). The author's username and
// verified flag, the replied-to and reposted authors' usernames and the
// media kinds are read in tx.
func postCreated(ctx context.Context, tx pgx.Tx, p storage.Post, terms storage.PostTerms, editOf int64) (newEvent, error) {
	var author, replyTo, repostOf string
	var verified bool
	var kinds []string
	var repostAuthor, quoteAuthor int64
	err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT username FROM users WHERE id = $1), ''),
		COALESCE((SELECT verified FROM users WHERE id = $1), false),
		COALESCE((SELECT username FROM users WHERE id = $2), ''),
		COALESCE((SELECT u.username FROM posts r JOIN users u ON u.id = r.author_id WHERE r.id = $3), ''),
		ARRAY(SELECT m.kind FROM unnest($4::bigint[]) WITH ORDINALITY AS a(id, n) JOIN media m ON m.id = a.id ORDER BY a.n),
		COALESCE((SELECT author_id FROM posts WHERE id = $3), 0),
		COALESCE((SELECT author_id FROM posts WHERE id = $5), 0)`,
		p.AuthorID, p.InReplyToUserID, p.RepostOfID, p.MediaIDs, p.QuoteOfID).Scan(&author, &verified, &replyTo, &repostOf, &kinds,
		&repostAuthor, &quoteAuthor)
	if err != nil {
		return newEvent{}, fmt.Errorf("read the users and media of the event of post %d: %w", p.ID, err)
	}
	payload := events.Post{ID: p.ID, AuthorID: p.AuthorID, AuthorUsername: author, AppID: p.AppID, Text: p.Text,
		Lang: p.Lang, ConversationID: p.ConversationID, InReplyToPostID: p.InReplyToPostID,
		InReplyToUserID: p.InReplyToUserID, InReplyToUsername: replyTo, QuoteOfID: p.QuoteOfID,
		RepostOfID: p.RepostOfID, EditOfID: editOf, MediaCount: len(p.MediaIDs), Mentions: terms.Mentions, Hashtags: terms.Hashtags,
		Cashtags: terms.Cashtags, URLTerms: terms.URLTerms, CreatedAt: p.CreatedAt,
		AuthorVerified: verified, Source: p.Source, PlaceID: p.PlaceID, MediaKinds: kinds, RepostOfUsername: repostOf,
		MentionIDs: explicitMentions(p), QuoteOfAuthorID: quoteAuthor, RepostOfAuthorID: repostAuthor}
	if p.QuoteOfID != 0 {
		if payload.Quoted, err = quotedContent(ctx, tx, p.QuoteOfID); err != nil {
			return newEvent{}, fmt.Errorf("read the quoted post for the event of post %d: %w", p.ID, err)
		}
	}
	return newEvent{typ: events.PostCreate, app: p.AppID, user: p.AuthorID, subject: p.ID, payload: payload}, nil
}

// explicitMentions are the ids of the users post p mentions explicitly
// (post.mention.create): none for a repost; for a reply, its leading run
// of mentions (the implicit reply mentions, as the platform prefixes a
// reply's text with them) is left out. Unresolved mentions and repeats are
// dropped.
func explicitMentions(p storage.Post) []int64 {
	if p.RepostOfID != 0 {
		return nil
	}
	text := []rune(p.Text)
	lead := 0 // the end of the leading run of mentions, in code points
	var out []int64
	seen := map[int64]bool{}
	for _, m := range p.Entities.Mentions {
		implicit := false
		if p.InReplyToPostID != 0 && m.Start >= lead && m.Start <= len(text) && strings.TrimSpace(string(text[lead:m.Start])) == "" {
			implicit, lead = true, m.End
		}
		if implicit || m.UserID == 0 || seen[m.UserID] {
			continue
		}
		seen[m.UserID] = true
		out = append(out, m.UserID)
	}
	return out
}

// quotedContent is what a quote's event carries of the quoted post id: the
// filtered stream matches a quote on the quoted post's text and entities
// too (nil when the post is gone).
func quotedContent(ctx context.Context, tx pgx.Tx, id int64) (*events.QuotedPost, error) {
	q, err := scanPost(tx.QueryRow(ctx, `SELECT `+postColumns+` FROM posts p WHERE p.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := termsOf(q.Entities)
	return &events.QuotedPost{Text: q.Text, Mentions: t.Mentions, Hashtags: t.Hashtags, Cashtags: t.Cashtags, URLTerms: t.URLTerms}, nil
}

// deletedPost is a post row a deletion changed.
type deletedPost struct {
	id, author int64
	at         time.Time
}

// postsDeleted are the post.delete events of the posts ds, deleted by
// user with app (0 when unknown).
func postsDeleted(app, user int64, ds []deletedPost) []newEvent {
	out := make([]newEvent, len(ds))
	for i, d := range ds {
		out[i] = newEvent{typ: events.PostDelete, app: app, user: user, subject: d.id,
			payload: events.PostDeleted{ID: d.id, AuthorID: d.author, DeletedAt: d.at}}
	}
	return out
}

// collectDeleted reads the rows of a statement RETURNING id, author_id,
// deleted_at.
func collectDeleted(rows pgx.Rows, err error) ([]deletedPost, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (deletedPost, error) {
		var d deletedPost
		err := row.Scan(&d.id, &d.author, &d.at)
		return d, err
	})
}

// AppEventsAfter returns up to limit events appended with app appID with
// Seq > after, in Seq order; with typePrefix set, only the types starting
// with it (GET /_aviary/events).
func (db *DB) AppEventsAfter(ctx context.Context, appID, after int64, typePrefix string, limit int) ([]events.Event, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+eventColumns+` FROM events
		WHERE app_id = $1 AND app_id <> 0 AND seq > $2 AND left(type, length($3)) = $3
		ORDER BY app_id, seq LIMIT $4`, appID, after, typePrefix, limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("read app %d events after %d", appID, after), err)
	}
	out, err := scanEvents(rows)
	return out, wrap(fmt.Sprintf("scan app %d events", appID), err)
}
