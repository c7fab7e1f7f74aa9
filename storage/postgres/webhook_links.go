package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const webhookLinkColumns = `webhook_id, app_id, query, created_at`

func scanWebhookLink(row pgx.Row) (storage.WebhookLink, error) {
	var l storage.WebhookLink
	err := row.Scan(&l.WebhookID, &l.AppID, &l.Query, &l.CreatedAt)
	return l, err
}

// LinkWebhook links the app's live webhook l.WebhookID to the app's
// filtered stream with l.Query, or replaces the query of its link (the
// link keeps its created_at: it applies to posts created since then).
// storage.ErrNotFound when the webhook is none of the app's live ones; the
// webhook row's share lock keeps a concurrent delete from leaving a link.
func (db *DB) LinkWebhook(ctx context.Context, l storage.WebhookLink) (storage.WebhookLink, error) {
	var out storage.WebhookLink
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM webhooks WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL FOR SHARE`,
			l.WebhookID, l.AppID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		out, err = scanWebhookLink(tx.QueryRow(ctx, `INSERT INTO webhook_stream_links (webhook_id, app_id, query)
			VALUES ($1, $2, $3)
			ON CONFLICT (webhook_id) DO UPDATE SET query = EXCLUDED.query
			RETURNING `+webhookLinkColumns, l.WebhookID, l.AppID, l.Query))
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return out, err
	}
	return out, wrap(fmt.Sprintf("link webhook %d", l.WebhookID), err)
}

// WebhookLinks lists the stream links of the app's live webhooks, oldest
// webhook first.
func (db *DB) WebhookLinks(ctx context.Context, appID int64) ([]storage.WebhookLink, error) {
	rows, err := db.pool.Query(ctx, `SELECT l.webhook_id, l.app_id, l.query, l.created_at
		FROM webhook_stream_links l JOIN webhooks w ON w.id = l.webhook_id
		WHERE l.app_id = $1 AND w.deleted_at IS NULL ORDER BY l.webhook_id`, appID)
	if err != nil {
		return nil, wrap("list webhook links", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.WebhookLink, error) { return scanWebhookLink(row) })
	return out, wrap("list webhook links", err)
}

// UnlinkWebhook removes the stream link of the app's live webhook id and
// reports whether it had one (storage.ErrNotFound: the webhook is none of
// the app's live ones).
func (db *DB) UnlinkWebhook(ctx context.Context, appID, id int64) (bool, error) {
	var live, deleted bool
	err := db.pool.QueryRow(ctx, `WITH hook AS (
			SELECT id FROM webhooks WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL
		), del AS (
			DELETE FROM webhook_stream_links l USING hook WHERE l.webhook_id = hook.id RETURNING 1
		)
		SELECT EXISTS (SELECT 1 FROM hook), EXISTS (SELECT 1 FROM del)`, id, appID).Scan(&live, &deleted)
	if err != nil {
		return false, wrap(fmt.Sprintf("unlink webhook %d", id), err)
	}
	if !live {
		return false, storage.ErrNotFound
	}
	return deleted, nil
}
