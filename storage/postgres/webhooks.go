package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/aviary-dev/aviary/storage"
)

const webhookColumns = `id, app_id, url, valid, created_at, last_crc_at, last_crc_ok_at, crc_failure, deleted_at`

func scanWebhook(row pgx.Row) (storage.Webhook, error) {
	var w storage.Webhook
	err := row.Scan(&w.ID, &w.AppID, &w.URL, &w.Valid, &w.CreatedAt, &w.LastCRCAt, &w.LastCRCOKAt, &w.Failure, &w.DeletedAt)
	return w, err
}

// CreateWebhook records c as a valid webhook that passed its check at
// c.CheckedAt, unless the app has a live webhook with that URL
// (storage.ErrDuplicateWebhookURL) or holds c.Max already
// (storage.ErrWebhookLimit). The app row's lock serializes an app's
// registrations, so the cap is exact under concurrent requests.
func (db *DB) CreateWebhook(ctx context.Context, c storage.WebhookCreate) (storage.Webhook, error) {
	var out storage.Webhook
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM apps WHERE id = $1 FOR UPDATE`, c.AppID); err != nil {
			return err
		}
		var count int
		var dup bool
		err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(url = $2), false) FROM webhooks
			WHERE app_id = $1 AND deleted_at IS NULL`, c.AppID, c.URL).Scan(&count, &dup)
		switch {
		case err != nil:
			return err
		case dup:
			return storage.ErrDuplicateWebhookURL
		case c.Max > 0 && count >= c.Max:
			return storage.ErrWebhookLimit
		}
		out, err = scanWebhook(tx.QueryRow(ctx, `INSERT INTO webhooks (app_id, url, valid, last_crc_at, last_crc_ok_at)
			VALUES ($1, $2, true, $3, $3) RETURNING `+webhookColumns, c.AppID, c.URL, c.CheckedAt))
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return out, storage.ErrDuplicateWebhookURL
	}
	return out, wrap("create webhook", err)
}

// Webhooks lists an app's live webhooks, oldest first.
func (db *DB) Webhooks(ctx context.Context, appID int64) ([]storage.Webhook, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks
		WHERE app_id = $1 AND deleted_at IS NULL ORDER BY id`, appID)
	if err != nil {
		return nil, wrap("list webhooks", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Webhook, error) { return scanWebhook(row) })
	return out, wrap("list webhooks", err)
}

// WebhookOf loads the app's live webhook id (storage.ErrNotFound for none,
// another app's or a deleted one).
func (db *DB) WebhookOf(ctx context.Context, appID, id int64) (storage.Webhook, error) {
	w, err := scanWebhook(db.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks
		WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL`, id, appID))
	if errors.Is(err, pgx.ErrNoRows) {
		return w, storage.ErrNotFound
	}
	return w, wrap(fmt.Sprintf("load webhook %d", id), err)
}

// DeleteWebhook marks the app's live webhook id deleted and removes its
// stream link and the activity subscriptions delivering to it in the same
// transaction (storage.ErrNotFound for none).
func (db *DB) DeleteWebhook(ctx context.Context, appID, id int64) error {
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE webhooks SET deleted_at = now()
			WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL`, id, appID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return storage.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `DELETE FROM webhook_stream_links WHERE webhook_id = $1`, id); err != nil {
			return err
		}
		// Webhooks are deleted by a mark, so the foreign key's cascade
		// (migration 0035) never fires: the activity subscriptions
		// delivering to the webhook go with it here (docs/activity.md).
		_, err = tx.Exec(ctx, `DELETE FROM activity_subscriptions WHERE webhook_id = $1`, id)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return wrap(fmt.Sprintf("delete webhook %d", id), err)
}

// RecordWebhookCRC stores the outcome of a check of a live webhook and
// returns the webhook as it now stands (storage.ErrNotFound when it was
// deleted meanwhile).
func (db *DB) RecordWebhookCRC(ctx context.Context, c storage.WebhookCRC) (storage.Webhook, error) {
	w, err := scanWebhook(db.pool.QueryRow(ctx, `UPDATE webhooks SET
			last_crc_at = $2,
			last_crc_ok_at = CASE WHEN $3 THEN $2 ELSE last_crc_ok_at END,
			crc_failure = CASE WHEN $3 THEN '' ELSE $4 END,
			valid = CASE WHEN $3 THEN true WHEN $5 THEN false ELSE valid END
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+webhookColumns, c.ID, c.At, c.OK, c.Failure, c.Invalidate))
	if errors.Is(err, pgx.ErrNoRows) {
		return w, storage.ErrNotFound
	}
	return w, wrap(fmt.Sprintf("record CRC of webhook %d", c.ID), err)
}

// ClaimWebhooksForCRC claims up to q.Limit live webhooks without a pass
// since q.PassedBefore and not checked since q.CheckedBefore, least
// recently checked first, setting their last_crc_at to q.Now so that
// another sweeper skips them (rows another transaction holds are skipped
// too). Each comes with its app's consumer secret.
func (db *DB) ClaimWebhooksForCRC(ctx context.Context, q storage.WebhookDueQuery) ([]storage.WebhookDue, error) {
	rows, err := db.pool.Query(ctx, `WITH due AS (
			SELECT id FROM webhooks
			WHERE deleted_at IS NULL
			  AND (last_crc_ok_at IS NULL OR last_crc_ok_at < $2)
			  AND (last_crc_at IS NULL OR last_crc_at < $3)
			ORDER BY last_crc_at NULLS FIRST, id
			LIMIT $4
			FOR UPDATE SKIP LOCKED
		), claimed AS (
			UPDATE webhooks w SET last_crc_at = $1 FROM due WHERE w.id = due.id
			RETURNING w.id, w.app_id, w.url, w.valid, w.created_at, w.last_crc_at, w.last_crc_ok_at, w.crc_failure, w.deleted_at
		)
		SELECT c.id, c.app_id, c.url, c.valid, c.created_at, c.last_crc_at, c.last_crc_ok_at, c.crc_failure, c.deleted_at, a.consumer_secret
		FROM claimed c JOIN apps a ON a.id = c.app_id ORDER BY c.id`, q.Now, q.PassedBefore, q.CheckedBefore, q.Limit)
	if err != nil {
		return nil, wrap("claim webhooks for CRC", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.WebhookDue, error) {
		var d storage.WebhookDue
		w := &d.Webhook
		err := row.Scan(&w.ID, &w.AppID, &w.URL, &w.Valid, &w.CreatedAt, &w.LastCRCAt, &w.LastCRCOKAt, &w.Failure, &w.DeletedAt, &d.ConsumerSecret)
		return d, err
	})
	return out, wrap("claim webhooks for CRC", err)
}
