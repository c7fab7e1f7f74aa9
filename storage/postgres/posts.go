package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const postColumns = `id, author_id, COALESCE(app_id, 0), text, paid_partnership, media_ids, created_at, deleted_at`

func scanPost(row pgx.Row) (storage.Post, error) {
	var p storage.Post
	err := row.Scan(&p.ID, &p.AuthorID, &p.AppID, &p.Text, &p.PaidPartnership, &p.MediaIDs, &p.CreatedAt, &p.DeletedAt)
	return p, err
}

// CreatePost stores a new post and returns it with its id and time.
func (db *DB) CreatePost(ctx context.Context, p storage.Post) (storage.Post, error) {
	out, err := scanPost(db.pool.QueryRow(ctx, `INSERT INTO posts (author_id, app_id, text, paid_partnership, media_ids)
		VALUES ($1, NULLIF($2::bigint, 0), $3, $4, $5) RETURNING `+postColumns, p.AuthorID, p.AppID, p.Text, p.PaidPartnership, nonNil(p.MediaIDs)))
	return out, wrap(fmt.Sprintf("create post for user %d", p.AuthorID), err)
}

// PostByID loads a post, including a deleted one.
func (db *DB) PostByID(ctx context.Context, id int64) (storage.Post, error) {
	p, err := scanPost(db.pool.QueryRow(ctx, `SELECT `+postColumns+` FROM posts WHERE id = $1`, id))
	return p, wrap(fmt.Sprintf("load post %d", id), err)
}

// DeletePost marks a live post deleted at time at. A post already deleted
// yields storage.ErrNotFound.
func (db *DB) DeletePost(ctx context.Context, id int64, at time.Time) (storage.Post, error) {
	p, err := scanPost(db.pool.QueryRow(ctx, `UPDATE posts SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL
		RETURNING `+postColumns, id, at))
	return p, wrap(fmt.Sprintf("delete post %d", id), err)
}

// PostStatuses returns what compliance needs for each known post id (with
// its author); ids that never existed are absent from the result.
func (db *DB) PostStatuses(ctx context.Context, postIDs []int64) ([]storage.PostStatus, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.created_at, p.deleted_at, `+userColumns+`
		FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ANY($1)`, postIDs)
	if err != nil {
		return nil, wrap("query post statuses", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.PostStatus, error) {
		var s storage.PostStatus
		u := &s.Author
		err := row.Scan(&s.ID, &s.CreatedAt, &s.DeletedAt,
			&u.ID, &u.Username, &u.Name, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt)
		return s, err
	})
	return out, wrap("scan post statuses", err)
}

// PostsNeedingAction is PostStatuses narrowed to what a compliance job
// writes: only the known posts that need action (the post or its author
// deleted, the author suspended, deactivated or protected), with only the
// columns the check reads (Author carries its id and state times, not its
// username or name). Most ids of a job need no action, so filtering in the
// query spares sending, decoding and discarding their rows.
func (db *DB) PostsNeedingAction(ctx context.Context, postIDs []int64) ([]storage.PostStatus, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.created_at, p.deleted_at, p.author_id,
		u.protected_at, u.suspended_at, u.deactivated_at, u.deleted_at
		FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ANY($1)
		AND (p.deleted_at IS NOT NULL OR u.deleted_at IS NOT NULL OR u.suspended_at IS NOT NULL
		     OR u.deactivated_at IS NOT NULL OR u.protected_at IS NOT NULL)`, postIDs)
	if err != nil {
		return nil, wrap("query posts needing action", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.PostStatus, error) {
		var s storage.PostStatus
		u := &s.Author
		err := row.Scan(&s.ID, &s.CreatedAt, &s.DeletedAt, &u.ID, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt)
		return s, err
	})
	return out, wrap("scan posts needing action", err)
}

// UsersNeedingAction is UsersByIDs narrowed to the known users that need
// compliance action (deleted, suspended, deactivated or protected), without
// their username and name.
func (db *DB) UsersNeedingAction(ctx context.Context, userIDs []int64) ([]storage.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT u.id, u.created_at, u.protected_at, u.suspended_at, u.deactivated_at, u.deleted_at
		FROM users u WHERE u.id = ANY($1) AND (u.deleted_at IS NOT NULL OR u.suspended_at IS NOT NULL
		     OR u.deactivated_at IS NOT NULL OR u.protected_at IS NOT NULL)`, userIDs)
	if err != nil {
		return nil, wrap("query users needing action", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) {
		var u storage.User
		err := row.Scan(&u.ID, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt)
		return u, err
	})
	return out, wrap("scan users needing action", err)
}

// UsersByIDs returns the known users among ids.
func (db *DB) UsersByIDs(ctx context.Context, userIDs []int64) ([]storage.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ANY($1)`, userIDs)
	if err != nil {
		return nil, wrap("query users", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) { return scanUser(row) })
	return out, wrap("scan users", err)
}
