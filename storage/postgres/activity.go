package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/aviary-dev/aviary/storage"
)

// activityColumns are the columns of an ActivitySubscription, the optional
// ones as zero values.
const activityColumns = `id, app_id, event_type, coalesce(filter_user_id, 0), coalesce(filter_keyword, ''),
	coalesce(direction, ''), tag, coalesce(webhook_id, 0), created_by, created_at, updated_at`

func scanActivitySubscription(row pgx.Row) (storage.ActivitySubscription, error) {
	var s storage.ActivitySubscription
	err := row.Scan(&s.ID, &s.AppID, &s.EventType, &s.FilterUserID, &s.FilterKeyword, &s.Direction, &s.Tag,
		&s.WebhookID, &s.CreatedBy, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

func collectActivitySubscriptions(rows pgx.Rows) ([]storage.ActivitySubscription, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ActivitySubscription, error) {
		return scanActivitySubscription(row)
	})
}

// activityUnique is the unique index of an app's subscriptions
// (migration 0035).
const activityUnique = "activity_subscriptions_unique"

// CreateActivitySubscription records s (its ID, timestamps ignored)
// unless the app holds max subscriptions already (storage.ErrActivityLimit;
// max 0: no cap), has one of that type, filter, direction and webhook
// (storage.ErrActivityDuplicate), or s.WebhookID is not one of its live
// webhooks (storage.ErrActivityWebhook). The app row's lock serializes an
// app's creations, so the cap is exact; the webhook row's share lock keeps
// it from being deleted before the subscription is in.
func (db *DB) CreateActivitySubscription(ctx context.Context, s storage.ActivitySubscription, max int) (storage.ActivitySubscription, error) {
	var out storage.ActivitySubscription
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM apps WHERE id = $1 FOR UPDATE`, s.AppID); err != nil {
			return err
		}
		if err := lockAppWebhook(ctx, tx, s.AppID, s.WebhookID); err != nil {
			return err
		}
		var count int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM activity_subscriptions WHERE app_id = $1`, s.AppID).Scan(&count); err != nil {
			return err
		}
		if max > 0 && count >= max {
			return storage.ErrActivityLimit
		}
		var err error
		out, err = scanActivitySubscription(tx.QueryRow(ctx, `INSERT INTO activity_subscriptions
				(app_id, event_type, filter_user_id, filter_keyword, direction, tag, webhook_id, created_by)
			VALUES ($1, $2, nullif($3::bigint, 0), nullif($4::text, ''), nullif($5::text, ''), $6, nullif($7::bigint, 0), $8)
			RETURNING `+activityColumns,
			s.AppID, s.EventType, s.FilterUserID, s.FilterKeyword, s.Direction, s.Tag, s.WebhookID, s.CreatedBy))
		return err
	})
	return out, activityError("create activity subscription", err)
}

// lockAppWebhook share-locks the app's live webhook id (none for 0), or
// answers storage.ErrActivityWebhook.
func lockAppWebhook(ctx context.Context, tx pgx.Tx, appID, id int64) error {
	if id == 0 {
		return nil
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM webhooks WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL FOR SHARE`,
		id, appID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.ErrActivityWebhook
	}
	return err
}

// activityError passes the refusals through, names a unique violation a
// duplicate and wraps anything else.
func activityError(op string, err error) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == activityUnique:
		return storage.ErrActivityDuplicate
	case errors.Is(err, storage.ErrActivityLimit), errors.Is(err, storage.ErrActivityWebhook),
		errors.Is(err, storage.ErrNotFound):
		return err
	}
	return wrap(op, err)
}

// ActivitySubscriptions lists a page of the app's subscriptions, oldest
// first.
func (db *DB) ActivitySubscriptions(ctx context.Context, q storage.ActivitySubscriptionPage) ([]storage.ActivitySubscription, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+activityColumns+` FROM activity_subscriptions
		WHERE app_id = $1 AND id > $2 ORDER BY id LIMIT $3`, q.AppID, q.AfterID, q.Limit)
	if err != nil {
		return nil, wrap("list activity subscriptions", err)
	}
	out, err := collectActivitySubscriptions(rows)
	return out, wrap("list activity subscriptions", err)
}

// ActivitySubscriptionOf loads the app's subscription id
// (storage.ErrNotFound for none or another app's).
func (db *DB) ActivitySubscriptionOf(ctx context.Context, appID, id int64) (storage.ActivitySubscription, error) {
	s, err := scanActivitySubscription(db.pool.QueryRow(ctx, `SELECT `+activityColumns+` FROM activity_subscriptions
		WHERE id = $1 AND app_id = $2`, id, appID))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, storage.ErrNotFound
	}
	return s, wrap(fmt.Sprintf("load activity subscription %d", id), err)
}

// CountActivitySubscriptions counts the app's subscriptions.
func (db *DB) CountActivitySubscriptions(ctx context.Context, appID int64) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM activity_subscriptions WHERE app_id = $1`, appID).Scan(&n)
	return n, wrap("count activity subscriptions", err)
}

// UpdateActivitySubscription sets the tag and the webhook (0: none) that
// u names of the app's subscription and returns it as it now stands:
// storage.ErrNotFound for none or another app's, storage.ErrActivityWebhook
// for a webhook that is not the app's, storage.ErrActivityDuplicate when
// the new webhook makes it a copy of another subscription.
func (db *DB) UpdateActivitySubscription(ctx context.Context, u storage.ActivitySubscriptionUpdate) (storage.ActivitySubscription, error) {
	var out storage.ActivitySubscription
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var webhookID int64
		if u.WebhookID != nil {
			webhookID = *u.WebhookID
			if err := lockAppWebhook(ctx, tx, u.AppID, webhookID); err != nil {
				return err
			}
		}
		var err error
		out, err = scanActivitySubscription(tx.QueryRow(ctx, `UPDATE activity_subscriptions SET
				tag = coalesce($3::text, tag),
				webhook_id = CASE WHEN $4 THEN nullif($5::bigint, 0) ELSE webhook_id END,
				updated_at = now()
			WHERE id = $1 AND app_id = $2 RETURNING `+activityColumns,
			u.ID, u.AppID, u.Tag, u.WebhookID != nil, webhookID))
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrNotFound
		}
		return err
	})
	return out, activityError(fmt.Sprintf("update activity subscription %d", u.ID), err)
}

// DeleteActivitySubscriptions deletes those of ids that are the app's
// subscriptions and returns the ids it deleted, in no particular order.
func (db *DB) DeleteActivitySubscriptions(ctx context.Context, appID int64, ids []int64) ([]int64, error) {
	rows, err := db.pool.Query(ctx, `DELETE FROM activity_subscriptions WHERE app_id = $1 AND id = ANY($2) RETURNING id`, appID, ids)
	if err != nil {
		return nil, wrap("delete activity subscriptions", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return out, wrap("delete activity subscriptions", err)
}
