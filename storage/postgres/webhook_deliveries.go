package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Webhook deliveries (migration 0028; docs/webhooks.md, "Deliveries"): the
// link sink records them, the deliverer claims a webhook under its
// delivery lease, sends its queue in id order and records the outcomes in
// batches. Times are the database's clock, the same for every replica.

// DeliveriesChannel is the LISTEN/NOTIFY channel a recorded delivery
// notifies: deliverers wake on it.
const DeliveriesChannel = "aviary_webhook_deliveries"

// AddWebhookDeliveries records ds (kind post) in one statement, in order,
// and notifies DeliveriesChannel in the same transaction. A delivery of a
// (webhook, event) recorded already is skipped (the live unique index), so
// a re-offered dispatcher batch is harmless. It returns how many were new.
func (db *DB) AddWebhookDeliveries(ctx context.Context, ds []storage.NewDelivery) (int64, error) {
	if len(ds) == 0 {
		return 0, nil
	}
	hooks, apps, seqs := make([]int64, len(ds)), make([]int64, len(ds)), make([]int64, len(ds))
	ats, bodies := make([]time.Time, len(ds)), make([][]byte, len(ds))
	for i, d := range ds {
		hooks[i], apps[i], seqs[i], ats[i], bodies[i] = d.WebhookID, d.AppID, d.EventSeq, d.EventAt, d.Body
	}
	var n int64
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_seq, event_at, body)
			SELECT w, a, 'post', s, t, b FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::bytea[])
			  WITH ORDINALITY AS x(w, a, s, t, b, n)
			ORDER BY n
			ON CONFLICT DO NOTHING`, hooks, apps, seqs, ats, bodies)
		if err != nil {
			return err
		}
		if n = tag.RowsAffected(); n > 0 {
			_, err = tx.Exec(ctx, `SELECT pg_notify('`+DeliveriesChannel+`', '')`)
		}
		return err
	})
	return n, wrap("record webhook deliveries", err)
}

// DeliveryLinks loads the stream links of live webhooks of apps (nil:
// of every app), by webhook id.
func (db *DB) DeliveryLinks(ctx context.Context, apps []int64) ([]storage.DeliveryLink, error) {
	rows, err := db.pool.Query(ctx, `SELECT l.webhook_id, l.app_id, l.query, l.created_at
		FROM webhook_stream_links l JOIN webhooks w ON w.id = l.webhook_id AND w.deleted_at IS NULL
		WHERE $1::bigint[] IS NULL OR l.app_id = ANY($1::bigint[]) ORDER BY l.webhook_id`, apps)
	if err != nil {
		return nil, wrap("load stream links", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.DeliveryLink, error) {
		var l storage.DeliveryLink
		err := row.Scan(&l.WebhookID, &l.AppID, &l.Query, &l.CreatedAt)
		return l, err
	})
	return out, wrap("load stream links", err)
}

// ClaimWebhookDeliveries leases to q.Holder, for q.TTL, up to q.Limit
// webhooks with something to send: live, stored valid with a pass at or
// after q.ValidSince, not leased, and either not failing with their queue
// head (oldest pending delivery) due, or failing with a probe due. Rows
// another transaction holds are skipped; the least recently held go
// first. Each comes with its app's consumer secret.
func (db *DB) ClaimWebhookDeliveries(ctx context.Context, q storage.DeliveryClaimQuery) ([]storage.DeliveryClaim, error) {
	rows, err := db.pool.Query(ctx, `WITH due AS (
			SELECT w.id FROM webhooks w
			WHERE w.deleted_at IS NULL AND w.valid AND w.last_crc_ok_at >= $3
			  AND (w.delivery_held_until IS NULL OR w.delivery_held_until <= clock_timestamp())
			  AND CASE WHEN w.failing_since IS NULL THEN
			        (SELECT d.next_attempt_at FROM webhook_deliveries d
			         WHERE d.webhook_id = w.id AND d.state = 'pending' ORDER BY d.id LIMIT 1) <= clock_timestamp()
			      ELSE w.next_probe_at <= clock_timestamp() END
			ORDER BY w.delivery_held_until NULLS FIRST, w.id
			LIMIT $4
			FOR UPDATE SKIP LOCKED
		), claimed AS (
			UPDATE webhooks w SET delivery_holder = $1, delivery_held_until = clock_timestamp() + $2::interval
			FROM due WHERE w.id = due.id
			RETURNING w.id, w.app_id, w.url, w.valid, w.created_at, w.last_crc_at, w.last_crc_ok_at, w.crc_failure,
			  w.deleted_at, w.failing_since, w.next_probe_at
		)
		SELECT c.id, c.app_id, c.url, c.valid, c.created_at, c.last_crc_at, c.last_crc_ok_at, c.crc_failure, c.deleted_at,
		  c.failing_since, c.next_probe_at, a.consumer_secret
		FROM claimed c JOIN apps a ON a.id = c.app_id ORDER BY c.id`, q.Holder, q.TTL, q.ValidSince, q.Limit)
	if err != nil {
		return nil, wrap("claim webhooks for delivery", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.DeliveryClaim, error) {
		var c storage.DeliveryClaim
		w := &c.Webhook
		err := row.Scan(&w.ID, &w.AppID, &w.URL, &w.Valid, &w.CreatedAt, &w.LastCRCAt, &w.LastCRCOKAt, &w.Failure, &w.DeletedAt,
			&c.FailingSince, &c.NextProbeAt, &c.ConsumerSecret)
		return c, err
	})
	return out, wrap("claim webhooks for delivery", err)
}

// RenewDeliveryLease extends holder's delivery lease on webhook id to ttl
// from now; false when holder lost it, or the webhook was deleted or is no
// longer valid with a pass at or after validSince (the drain stops).
func (db *DB) RenewDeliveryLease(ctx context.Context, id int64, holder string, ttl time.Duration, validSince time.Time) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE webhooks SET delivery_held_until = clock_timestamp() + $3::interval
		WHERE id = $1 AND delivery_holder = $2 AND deleted_at IS NULL AND valid AND last_crc_ok_at >= $4`,
		id, holder, ttl, validSince)
	if err != nil {
		return false, wrap(fmt.Sprintf("renew delivery lease of webhook %d", id), err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseDeliveryLease ends holder's delivery lease on webhook id
// (nothing when another holder has it).
func (db *DB) ReleaseDeliveryLease(ctx context.Context, id int64, holder string) error {
	_, err := db.pool.Exec(ctx, `UPDATE webhooks SET delivery_holder = NULL, delivery_held_until = clock_timestamp()
		WHERE id = $1 AND delivery_holder = $2`, id, holder)
	return wrap(fmt.Sprintf("release delivery lease of webhook %d", id), err)
}

const deliveryColumns = `id, webhook_id, app_id, kind, event_seq, event_at, coalesce(replay_job_id, 0),
	coalesce(redelivery_of, 0), body, state, coalesce(dead_reason, ''), attempts, next_attempt_at, last_attempt_at,
	last_status, last_latency_ms, last_error, delivered_at, created_at`

func scanDelivery(row pgx.Row) (storage.WebhookDelivery, error) {
	var d storage.WebhookDelivery
	err := row.Scan(&d.ID, &d.WebhookID, &d.AppID, &d.Kind, &d.EventSeq, &d.EventAt, &d.ReplayJobID, &d.RedeliveryOf,
		&d.Body, &d.State, &d.DeadReason, &d.Attempts, &d.NextAttemptAt, &d.LastAttemptAt, &d.LastStatus,
		&d.LastLatencyMS, &d.LastError, &d.DeliveredAt, &d.CreatedAt)
	return d, err
}

// PendingDeliveries reads up to limit pending deliveries of webhook id
// after delivery afterID, in id order (the queue); none once the webhook
// is deleted or invalid, so a drain stops at its next read rather than at
// its next lease renewal.
func (db *DB) PendingDeliveries(ctx context.Context, id, afterID int64, limit int) ([]storage.WebhookDelivery, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = $1 AND state = 'pending' AND id > $2
		  AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $1 AND w.deleted_at IS NULL AND w.valid)
		ORDER BY id LIMIT $3`, id, afterID, limit)
	if err != nil {
		return nil, wrap(fmt.Sprintf("read pending deliveries of webhook %d", id), err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.WebhookDelivery, error) { return scanDelivery(row) })
	return out, wrap(fmt.Sprintf("read pending deliveries of webhook %d", id), err)
}

// ProbeDelivery is what a probe of failing webhook id re-sends: its oldest
// unreachable-dead delivery (false: none).
func (db *DB) ProbeDelivery(ctx context.Context, id int64) (storage.WebhookDelivery, bool, error) {
	d, err := scanDelivery(db.pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = $1 AND state = 'dead' AND dead_reason = 'unreachable' ORDER BY id LIMIT 1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return d, false, nil
	}
	return d, err == nil, wrap(fmt.Sprintf("read the probe delivery of webhook %d", id), err)
}

// RecordDeliveryBatch records b in one transaction (committed without
// waiting for the WAL flush): one statement updates
// the deliveries and inserts their attempt rows (numbered after the
// delivery's last), the replay jobs whose status was sent are finished,
// then the webhook's transition (delivered at, failing, recovery: its
// unreachable-dead deliveries go back to pending with their attempts
// counted afresh, and deliverers are notified).
func (db *DB) RecordDeliveryBatch(ctx context.Context, b storage.DeliveryBatch) error {
	n := len(b.Outcomes)
	ids, started := make([]int64, n), make([]time.Time, n)
	status, latency := make([]int32, n), make([]int32, n)
	errs, states, reasons := make([]string, n), make([]string, n), make([]string, n)
	retry, bodies := make([]int64, n), make([][]byte, n)
	var jobs []int64
	var jobStates []string
	delivered := false
	for i, o := range b.Outcomes {
		ids[i], started[i], status[i], latency[i] = o.DeliveryID, o.StartedAt, int32(o.Status), int32(o.LatencyMS)
		errs[i], states[i], reasons[i] = o.Error, o.State, o.DeadReason
		retry[i], bodies[i] = o.RetryIn.Microseconds(), o.Body
		if o.ReplayJobID != 0 && o.JobState != "" {
			jobs, jobStates = append(jobs, o.ReplayJobID), append(jobStates, o.JobState)
		}
		delivered = delivered || o.State == storage.DeliveryDelivered
	}
	op := fmt.Sprintf("record deliveries of webhook %d", b.WebhookID)
	return wrap(op, db.beginFunc(ctx, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		// The commit does not wait for its WAL flush: a database crash may
		// lose the last outcomes (their deliveries are sent again, which
		// at-least-once allows; a lost recovery or job end is redone by the
		// next probe or status), and the lease's release, a synchronous
		// commit after them, flushes them anyway.
		batch.Queue(`SET LOCAL synchronous_commit = off`)
		if n > 0 {
			batch.Queue(`WITH o AS (
					SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[],
					  $7::text[], $8::bigint[], $9::bytea[]) AS o(id, started, status, latency, err, state, reason, retry_us, body)
				), u AS (
					UPDATE webhook_deliveries d SET state = o.state, dead_reason = NULLIF(o.reason, ''),
					  attempts = d.attempts + 1,
					  next_attempt_at = CASE WHEN o.state = 'pending'
					    THEN clock_timestamp() + o.retry_us * interval '1 microsecond' ELSE d.next_attempt_at END,
					  last_attempt_at = o.started, last_status = o.status, last_latency_ms = o.latency, last_error = o.err,
					  delivered_at = CASE WHEN o.state = 'delivered' THEN clock_timestamp() ELSE d.delivered_at END,
					  body = coalesce(o.body, d.body)
					FROM o WHERE d.id = o.id AND d.id = ANY($1::bigint[]) -- (an index scan, never a scan of the table)
					RETURNING d.id, o.started, o.status, o.latency, o.err
				)
				INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, status, latency_ms, error)
				SELECT u.id, coalesce((SELECT max(a.attempt) FROM webhook_delivery_attempts a WHERE a.delivery_id = u.id), 0) + 1,
				  u.started, u.status, u.latency, u.err
				FROM u WHERE u.status NOT BETWEEN 200 AND 299 -- the delivering attempt lives in the row (WebhookDeliveryOf)`, ids, started, status, latency, errs, states, reasons, retry, bodies)
		}
		if len(jobs) > 0 {
			batch.Queue(`UPDATE webhook_replay_jobs j SET state = o.state, finished_at = clock_timestamp()
				FROM unnest($1::bigint[], $2::text[]) AS o(id, state) WHERE j.id = o.id AND j.state = 'running'`, jobs, jobStates)
		}
		batch.Queue(`UPDATE webhooks SET
				last_delivered_at = CASE WHEN $2 THEN clock_timestamp() ELSE last_delivered_at END,
				failing_since = CASE WHEN $3 THEN coalesce(failing_since, clock_timestamp()) WHEN $5 THEN NULL ELSE failing_since END,
				next_probe_at = CASE WHEN $3 THEN clock_timestamp() + $4::interval WHEN $5 THEN NULL ELSE next_probe_at END
			WHERE id = $1`, b.WebhookID, delivered, b.Fail, b.ProbeIn, b.Recover)
		if b.Recover {
			batch.Queue(`UPDATE webhook_deliveries SET state = 'pending', dead_reason = NULL, attempts = 0,
					next_attempt_at = clock_timestamp()
				WHERE webhook_id = $1 AND state = 'dead' AND dead_reason = 'unreachable'`, b.WebhookID)
			batch.Queue(`SELECT pg_notify('` + DeliveriesChannel + `', '')`)
		}
		return tx.SendBatch(ctx, batch).Close()
	}))
}

// ReplayJobComplete reports whether every post delivery of replay job id
// was delivered (its status says Complete).
func (db *DB) ReplayJobComplete(ctx context.Context, id int64) (bool, error) {
	var complete bool
	err := db.pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM webhook_deliveries
		WHERE replay_job_id = $1 AND kind IN ('post', 'activity') AND state <> 'delivered')`, id).Scan(&complete)
	return complete, wrap(fmt.Sprintf("read the outcome of replay job %d", id), err)
}

// WebhookDeliveryStats counts the pending deliveries and the failing live
// webhooks.
func (db *DB) WebhookDeliveryStats(ctx context.Context) (storage.DeliveryStats, error) {
	var s storage.DeliveryStats
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'),
		(SELECT count(*) FROM webhooks WHERE failing_since IS NOT NULL AND deleted_at IS NULL)`).Scan(&s.Pending, &s.Failing)
	return s, wrap("count webhook deliveries", err)
}

// ListenWebhookDeliveries opens a dedicated connection listening on
// DeliveriesChannel (as ListenEvents does for the event log): wait blocks
// until a notification arrives (nil) or ctx ends or the connection fails;
// close ends the connection. Deliverers wake on it.
func (db *DB) ListenWebhookDeliveries(ctx context.Context) (wait func(ctx context.Context) error, close func(), err error) {
	return db.listen(ctx, DeliveriesChannel)
}

// DeleteWebhookDeliveriesOlderThan deletes the deliveries (any state; their
// attempts go with them) created more than age ago, batch rows per
// statement, and returns how many it deleted; running replay jobs left
// without their status delivery end incomplete.
func (db *DB) DeleteWebhookDeliveriesOlderThan(ctx context.Context, age time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = 10_000
	}
	var total int64
	for {
		tag, err := db.pool.Exec(ctx, `DELETE FROM webhook_deliveries WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE created_at < now() - $1::interval ORDER BY created_at LIMIT $2)`, age, batch)
		if err != nil {
			return total, wrap("delete old webhook deliveries", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	// A running replay job whose status delivery is gone (it aged out
	// unsent) can never finish: it ends incomplete, or it would hold the
	// webhook's one active job (ReplayConflictError) for ever.
	if _, err := db.pool.Exec(ctx, `UPDATE webhook_replay_jobs j SET state = 'incomplete', finished_at = now()
		WHERE state = 'running' AND NOT EXISTS (
			SELECT 1 FROM webhook_deliveries d WHERE d.replay_job_id = j.id AND d.kind = 'replay_status')`); err != nil {
		return total, wrap("end replay jobs without a status delivery", err)
	}
	return total, nil
}
