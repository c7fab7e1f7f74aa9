package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// WebhookDeliveryState is the delivery health of the app's live webhook
// id: failing or not, its pending and dead deliveries, the newest delivery
// attempted (storage.ErrNotFound for none of the app's live webhooks).
func (db *DB) WebhookDeliveryState(ctx context.Context, appID, id int64) (storage.WebhookDeliveryState, error) {
	var s storage.WebhookDeliveryState
	err := db.pool.QueryRow(ctx, `SELECT failing_since, next_probe_at, last_delivered_at,
			(SELECT count(*) FROM webhook_deliveries WHERE webhook_id = w.id AND state = 'pending'),
			(SELECT count(*) FROM webhook_deliveries WHERE webhook_id = w.id AND state = 'dead')
		FROM webhooks w WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL`, id, appID).
		Scan(&s.FailingSince, &s.NextProbeAt, &s.LastDeliveredAt, &s.Pending, &s.Dead)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, storage.ErrNotFound
	}
	if err != nil {
		return s, wrap(fmt.Sprintf("load delivery state of webhook %d", id), err)
	}
	last, err := scanDelivery(db.pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = $1 AND attempts > 0 ORDER BY id DESC LIMIT 1`, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return s, wrap(fmt.Sprintf("load last delivery of webhook %d", id), err)
	default:
		s.Last = &last
	}
	return s, nil
}

// WebhookDeliveries pages the delivery log of the app's webhook q.WebhookID,
// newest first.
func (db *DB) WebhookDeliveries(ctx context.Context, q storage.WebhookDeliveryQuery) ([]storage.WebhookDelivery, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = $1 AND app_id = $2 AND ($3 = '' OR state = $3) AND ($4 = 0 OR id < $4)
		ORDER BY id DESC LIMIT $5`, q.WebhookID, q.AppID, q.State, q.BeforeID, q.Limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("list deliveries of webhook %d", q.WebhookID), err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.WebhookDelivery, error) { return scanDelivery(row) })
	return out, wrap(fmt.Sprintf("list deliveries of webhook %d", q.WebhookID), err)
}

// WebhookDeliveryOf loads delivery id of the app's webhook webhookID with
// its attempts, oldest first (storage.ErrNotFound for none).
func (db *DB) WebhookDeliveryOf(ctx context.Context, appID, webhookID, id int64) (storage.WebhookDelivery, []storage.DeliveryAttempt, error) {
	d, err := scanDelivery(db.pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE id = $1 AND webhook_id = $2 AND app_id = $3`, id, webhookID, appID))
	if errors.Is(err, pgx.ErrNoRows) {
		return d, nil, storage.ErrNotFound
	}
	if err != nil {
		return d, nil, wrap(fmt.Sprintf("load delivery %d", id), err)
	}
	rows, err := db.pool.Query(ctx, `SELECT delivery_id, attempt, started_at, status, latency_ms, error
		FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`, id)
	if err != nil {
		return d, nil, wrap(fmt.Sprintf("load attempts of delivery %d", id), err)
	}
	attempts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.DeliveryAttempt, error) {
		var a storage.DeliveryAttempt
		err := row.Scan(&a.DeliveryID, &a.Attempt, &a.StartedAt, &a.Status, &a.LatencyMS, &a.Error)
		return a, err
	})
	if err != nil {
		return d, nil, wrap(fmt.Sprintf("load attempts of delivery %d", id), err)
	}
	return d, withDeliveringAttempt(d, attempts), nil
}

// withDeliveringAttempt completes the attempts of a delivered delivery
// with the attempt that delivered it: its row holds it (last_*), and no
// attempt row is written for it, so the deliverer's hot path writes one row
// per delivery rather than two (docs/webhooks.md, "Delivery log").
func withDeliveringAttempt(d storage.WebhookDelivery, attempts []storage.DeliveryAttempt) []storage.DeliveryAttempt {
	if d.State != storage.DeliveryDelivered || d.LastAttemptAt == nil {
		return attempts
	}
	next := 1
	if len(attempts) > 0 {
		next = attempts[len(attempts)-1].Attempt + 1
	}
	return append(attempts, storage.DeliveryAttempt{DeliveryID: d.ID, Attempt: next, StartedAt: *d.LastAttemptAt,
		Status: d.LastStatus, LatencyMS: d.LastLatencyMS})
}

// RedeliverWebhookDelivery queues a copy of the post delivery id of the
// app's live webhook webhookID at the end of the webhook's queue (pending,
// redelivery_of id, no replay job) and wakes the deliverers, in one
// transaction. storage.ErrNotFound: no such post delivery of a live webhook
// of the app (a replay status is not copied: its job ends once).
func (db *DB) RedeliverWebhookDelivery(ctx context.Context, appID, webhookID, id int64) (storage.WebhookDelivery, error) {
	var out storage.WebhookDelivery
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = scanDelivery(tx.QueryRow(ctx, `INSERT INTO webhook_deliveries
				(webhook_id, app_id, kind, subscription_id, event_seq, event_at, redelivery_of, body)
			SELECT d.webhook_id, d.app_id, d.kind, d.subscription_id, d.event_seq, d.event_at, d.id, d.body
			FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.deleted_at IS NULL
			WHERE d.id = $1 AND d.webhook_id = $2 AND d.app_id = $3 AND d.kind IN ('post', 'activity')
			RETURNING `+deliveryColumns, id, webhookID, appID))
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, DeliveriesChannel)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return out, err
	}
	return out, wrap(fmt.Sprintf("redeliver delivery %d", id), err)
}
