package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// socialLockKey is the first key of the advisory lock a change of one pair
// of users takes (the second: the pair's hash), so a follow and a block of
// the same two users never interleave.
const socialLockKey = 0x50c1a1

// lockPair takes the pair's lock for the rest of tx, the same for (a, b)
// and (b, a).
func lockPair(ctx context.Context, tx pgx.Tx, a, b int64) error {
	lo, hi := min(a, b), max(a, b)
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2::text))`, socialLockKey, fmt.Sprintf("%d:%d", lo, hi))
	return err
}

// liveTarget loads user id for a change aimed at them: storage.ErrNotFound
// when unknown, deleted, suspended or deactivated.
func liveTarget(ctx context.Context, tx pgx.Tx, id int64) (storage.User, error) {
	u, err := scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1 FOR SHARE`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, storage.ErrNotFound
	}
	if err != nil {
		return u, err
	}
	if u.DeletedAt != nil || u.SuspendedAt != nil || u.DeactivatedAt != nil {
		return u, storage.ErrNotFound
	}
	return u, nil
}

// socialEvent is the log event of typ for source and target, with both
// users as tx sees them now.
func socialEvent(ctx context.Context, tx pgx.Tx, typ events.Type, app, source, target int64, at time.Time) (newEvent, error) {
	rows, err := tx.Query(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ANY($1)`, []int64{source, target})
	if err != nil {
		return newEvent{}, err
	}
	found, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) { return scanUser(row) })
	if err != nil {
		return newEvent{}, err
	}
	metrics, err := userMetrics(ctx, tx, []int64{source, target})
	if err != nil {
		return newEvent{}, err
	}
	ev := events.Social{SourceID: source, TargetID: target, At: at.UTC()}
	for _, u := range found {
		snap := socialUser(u, metrics[u.ID])
		if u.ID == source {
			ev.Source = snap
		}
		if u.ID == target {
			ev.Target = snap
		}
	}
	return newEvent{typ: typ, app: app, user: source, subject: target, payload: ev}, nil
}

func socialUser(u storage.User, m storage.UserMetrics) events.SocialUser {
	return events.SocialUser{ID: u.ID, Username: u.Username, Name: u.Name, CreatedAt: u.CreatedAt.UTC(),
		Description: u.Description, Location: u.Location, URL: u.URL, ProfileImageURL: u.ProfileImageURL,
		Protected: u.ProtectedAt != nil, Verified: u.Verified,
		Followers: m.Followers, Following: m.Following, Posts: m.Posts, Likes: m.Likes, Listed: m.Listed}
}

// txNow is the transaction's clock (the time of the change).
func txNow(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	var at time.Time
	err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&at)
	return at, err
}

// appendSocial appends typ's event for each (source, target) pair, in
// order, as app's (0: none).
func appendSocial(ctx context.Context, tx pgx.Tx, typ events.Type, app int64, pairs ...[2]int64) error {
	at, err := txNow(ctx, tx)
	if err != nil {
		return err
	}
	evs := make([]newEvent, 0, len(pairs))
	for _, p := range pairs {
		ev, err := socialEvent(ctx, tx, typ, app, p[0], p[1], at)
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	return appendEvents(ctx, tx, evs...)
}

// Social graph changes record the acting app (app, 0 for none) on their
// log events, as the other writes do (GET /_aviary/events lists them).

// Follow makes source follow target. A protected target gets a pending
// follow request instead (no event); a repeat changes nothing and appends
// nothing. An unknown or hidden target is storage.ErrNotFound; a block
// between the two, either way, storage.ErrBlocked. A new follow appends
// follow.follow in the same transaction.
func (db *DB) Follow(ctx context.Context, app, source, target int64) (storage.FollowState, error) {
	var st storage.FollowState
	err := db.inTx(ctx, fmt.Sprintf("user %d follows user %d", source, target), func(tx pgx.Tx) error {
		if err := lockPair(ctx, tx, source, target); err != nil {
			return err
		}
		u, err := liveTarget(ctx, tx, target)
		if err != nil {
			return err
		}
		var blocked bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blocks WHERE (source_id = $1 AND target_id = $2) OR (source_id = $2 AND target_id = $1))`,
			source, target).Scan(&blocked); err != nil {
			return err
		}
		if blocked {
			return storage.ErrBlocked
		}
		var created bool
		err = tx.QueryRow(ctx, `WITH ins AS (INSERT INTO follows (source_id, target_id, pending) VALUES ($1, $2, $3)
				ON CONFLICT DO NOTHING RETURNING pending)
			SELECT pending, true FROM ins UNION ALL SELECT pending, false FROM follows WHERE source_id = $1 AND target_id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
			source, target, u.ProtectedAt != nil).Scan(&st.Pending, &created)
		if err != nil {
			return err
		}
		st.Following = !st.Pending
		if !created || st.Pending {
			return nil
		}
		return appendSocial(ctx, tx, events.FollowFollow, app, [2]int64{source, target})
	})
	return st, err
}

// Unfollow ends source's follow of target (or withdraws a pending
// request) and reports whether there was one; ending a follow appends
// follow.unfollow in the same transaction.
func (db *DB) Unfollow(ctx context.Context, app, source, target int64) (bool, error) {
	var removed bool
	err := db.inTx(ctx, fmt.Sprintf("user %d unfollows user %d", source, target), func(tx pgx.Tx) error {
		if err := lockPair(ctx, tx, source, target); err != nil {
			return err
		}
		var pending bool
		err := tx.QueryRow(ctx, `DELETE FROM follows WHERE source_id = $1 AND target_id = $2 RETURNING pending`, source, target).Scan(&pending)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		removed = true
		if pending {
			return nil
		}
		return appendSocial(ctx, tx, events.FollowUnfollow, app, [2]int64{source, target})
	})
	return removed, err
}

// Mute makes source mute target and reports whether that is new; a new
// mute appends mute.mute. An unknown or hidden target is
// storage.ErrNotFound.
func (db *DB) Mute(ctx context.Context, app, source, target int64) (bool, error) {
	return db.pairInsert(ctx, "mutes", events.MuteMute, app, source, target, nil)
}

// Unmute ends source's mute of target and reports whether there was one;
// ending one appends mute.unmute.
func (db *DB) Unmute(ctx context.Context, app, source, target int64) (bool, error) {
	return db.pairDelete(ctx, "mutes", events.MuteUnmute, app, source, target)
}

// Block makes source block target and reports whether that is new. A new
// block ends the follows (and pending requests) between the two, both
// ways, appending follow.unfollow for each follow ended, then block.block.
// An unknown or hidden target is storage.ErrNotFound.
func (db *DB) Block(ctx context.Context, app, source, target int64) (bool, error) {
	return db.pairInsert(ctx, "blocks", events.BlockBlock, app, source, target, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM follows WHERE ((source_id = $1 AND target_id = $2) OR (source_id = $2 AND target_id = $1))
			RETURNING source_id, target_id, pending`, source, target)
		if err != nil {
			return err
		}
		var pairs [][2]int64
		var s, t int64
		var pending bool
		if _, err := pgx.ForEachRow(rows, []any{&s, &t, &pending}, func() error {
			if !pending {
				pairs = append(pairs, [2]int64{s, t})
			}
			return nil
		}); err != nil {
			return err
		}
		if len(pairs) == 0 {
			return nil
		}
		return appendSocial(ctx, tx, events.FollowUnfollow, app, pairs...)
	})
}

// Unblock ends source's block of target and reports whether there was
// one; ending one appends block.unblock.
func (db *DB) Unblock(ctx context.Context, app, source, target int64) (bool, error) {
	return db.pairDelete(ctx, "blocks", events.BlockUnblock, app, source, target)
}

// pairInsert records (source, target) in table (mutes or blocks); when the
// row is new it runs also (nil: nothing) and appends typ.
func (db *DB) pairInsert(ctx context.Context, table string, typ events.Type, app, source, target int64, also func(pgx.Tx) error) (bool, error) {
	var created bool
	err := db.inTx(ctx, fmt.Sprintf("%s user %d by user %d", typ, target, source), func(tx pgx.Tx) error {
		if err := lockPair(ctx, tx, source, target); err != nil {
			return err
		}
		if _, err := liveTarget(ctx, tx, target); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO `+table+` (source_id, target_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, source, target)
		if err != nil {
			return err
		}
		if created = tag.RowsAffected() == 1; !created {
			return nil
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		return appendSocial(ctx, tx, typ, app, [2]int64{source, target})
	})
	return created, err
}

// pairDelete removes (source, target) from table and, when there was such
// a row, appends typ.
func (db *DB) pairDelete(ctx context.Context, table string, typ events.Type, app, source, target int64) (bool, error) {
	var removed bool
	err := db.inTx(ctx, fmt.Sprintf("%s user %d by user %d", typ, target, source), func(tx pgx.Tx) error {
		if err := lockPair(ctx, tx, source, target); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE source_id = $1 AND target_id = $2`, source, target)
		if err != nil {
			return err
		}
		if removed = tag.RowsAffected() == 1; !removed {
			return nil
		}
		return appendSocial(ctx, tx, typ, app, [2]int64{source, target})
	})
	return removed, err
}

// socialListSQL are the lists' statements: $1 the user, $2 the cursor
// (0: none), $3 the page size; hidden users are left out.
var socialListSQL = map[storage.Relation]string{
	storage.RelFollowing: `SELECT r.seq, ` + userColumns + ` FROM follows r JOIN users u ON u.id = r.target_id
		WHERE r.source_id = $1 AND NOT r.pending`,
	storage.RelFollowers: `SELECT r.seq, ` + userColumns + ` FROM follows r JOIN users u ON u.id = r.source_id
		WHERE r.target_id = $1 AND NOT r.pending`,
	storage.RelMuting: `SELECT r.seq, ` + userColumns + ` FROM mutes r JOIN users u ON u.id = r.target_id
		WHERE r.source_id = $1`,
	storage.RelBlocking: `SELECT r.seq, ` + userColumns + ` FROM blocks r JOIN users u ON u.id = r.target_id
		WHERE r.source_id = $1`,
}

// SocialList returns one page of a user's list, newest first, without
// deleted, suspended or deactivated users.
func (db *DB) SocialList(ctx context.Context, page storage.SocialPage) ([]storage.SocialEntry, error) {
	q, ok := socialListSQL[page.Relation]
	if !ok {
		return nil, fmt.Errorf("list %q of user %d: unknown relation", page.Relation, page.UserID)
	}
	rows, err := db.pool.Query(ctx, q+` AND ($2 = 0 OR r.seq < $2)
		AND u.deleted_at IS NULL AND u.suspended_at IS NULL AND u.deactivated_at IS NULL
		ORDER BY r.seq DESC LIMIT $3`, page.UserID, page.BeforeSeq, page.Limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("query %s of user %d", page.Relation, page.UserID), err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.SocialEntry, error) {
		var e storage.SocialEntry
		pr := &e.User.Profile
		u := &e.User
		err := row.Scan(&e.Seq, &u.ID, &u.Username, &u.Name, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt,
			&pr.Description, &pr.Location, &pr.URL, &pr.ProfileImageURL, &pr.PinnedPostID, &pr.Verified, &pr.Premium, &pr.CountryCode)
		return e, err
	})
	return out, wrap(fmt.Sprintf("scan %s of user %d", page.Relation, page.UserID), err)
}

// Follows reports whether source follows target (an accepted follow).
func (db *DB) Follows(ctx context.Context, source, target int64) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM follows WHERE source_id = $1 AND target_id = $2 AND NOT pending)`, source, target).Scan(&ok)
	return ok, wrap(fmt.Sprintf("does user %d follow user %d", source, target), err)
}
