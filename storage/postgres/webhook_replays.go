package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/aviary-dev/aviary/storage"
)

const webhookReplayColumns = `id, app_id, webhook_id, from_at, to_at, state, events, created_at, started_at, finished_at`

func scanWebhookReplay(row pgx.Row) (storage.WebhookReplayJob, error) {
	var j storage.WebhookReplayJob
	err := row.Scan(&j.ID, &j.AppID, &j.WebhookID, &j.From, &j.To, &j.State, &j.Events, &j.CreatedAt, &j.StartedAt, &j.FinishedAt)
	return j, err
}

// CreateWebhookReplay records a queued replay job of the app's live
// webhook r.WebhookID: storage.ErrNotFound for none of the app's live
// webhooks, storage.ErrReplayConflict while the webhook has a job queued
// or running (the partial unique index decides, so it is exact).
func (db *DB) CreateWebhookReplay(ctx context.Context, r storage.NewWebhookReplay) (storage.WebhookReplayJob, error) {
	var out storage.WebhookReplayJob
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM webhooks WHERE id = $1 AND app_id = $2 AND deleted_at IS NULL FOR SHARE`,
			r.WebhookID, r.AppID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		out, err = scanWebhookReplay(tx.QueryRow(ctx, `INSERT INTO webhook_replay_jobs (app_id, webhook_id, from_at, to_at)
			VALUES ($1, $2, $3, $4) RETURNING `+webhookReplayColumns, r.AppID, r.WebhookID, r.From, r.To))
		return err
	})
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return out, err
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "webhook_replay_jobs_active":
		return out, storage.ErrReplayConflict
	}
	return out, wrap(fmt.Sprintf("create replay job of webhook %d", r.WebhookID), err)
}

// WebhookReplay loads replay job id (storage.ErrNotFound for none).
func (db *DB) WebhookReplay(ctx context.Context, id int64) (storage.WebhookReplayJob, error) {
	j, err := scanWebhookReplay(db.pool.QueryRow(ctx, `SELECT `+webhookReplayColumns+` FROM webhook_replay_jobs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return j, storage.ErrNotFound
	}
	return j, wrap(fmt.Sprintf("load replay job %d", id), err)
}

// RunWebhookReplay starts replay job id if it is still queued, in one
// transaction: copies of the webhook's live post deliveries of events in
// the job's window (any state), in event order, go pending on the
// webhook's queue with the job's id, then one replay_status delivery (its
// body is written when it is sent); the job turns running with events set
// to the copies' count; the deliverers are woken. A job not queued is left
// as it is (ran false): the run is idempotent. A job whose webhook was
// deleted ends incomplete with nothing queued.
func (db *DB) RunWebhookReplay(ctx context.Context, id int64) (job storage.WebhookReplayJob, ran bool, err error) {
	err = db.beginFunc(ctx, func(tx pgx.Tx) error {
		job, err = scanWebhookReplay(tx.QueryRow(ctx, `SELECT `+webhookReplayColumns+` FROM webhook_replay_jobs
			WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrNotFound
		}
		if err != nil || job.State != storage.ReplayQueued {
			return err
		}
		var live bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE id = $1 AND deleted_at IS NULL)`,
			job.WebhookID).Scan(&live); err != nil {
			return err
		}
		if !live {
			job, err = scanWebhookReplay(tx.QueryRow(ctx, `UPDATE webhook_replay_jobs
				SET state = 'incomplete', finished_at = now() WHERE id = $1 RETURNING `+webhookReplayColumns, id))
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, subscription_id, event_seq, event_at, replay_job_id, body)
			SELECT webhook_id, app_id, kind, subscription_id, event_seq, event_at, $1, body FROM (
				SELECT * FROM webhook_deliveries
				WHERE webhook_id = $2 AND replay_job_id IS NULL AND redelivery_of IS NULL AND kind = 'post'
				  AND event_at >= $3 AND event_at < $4
				UNION ALL
				SELECT * FROM webhook_deliveries
				WHERE webhook_id = $2 AND replay_job_id IS NULL AND redelivery_of IS NULL AND kind = 'activity'
				  AND event_at >= $3 AND event_at < $4) live
			ORDER BY event_seq, id`, id, job.WebhookID, job.From, job.To)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_at, replay_job_id, body)
			VALUES ($1, $2, 'replay_status', now(), $3, '')`, job.WebhookID, job.AppID, id); err != nil {
			return err
		}
		job, err = scanWebhookReplay(tx.QueryRow(ctx, `UPDATE webhook_replay_jobs
			SET state = 'running', events = $2, started_at = now() WHERE id = $1 RETURNING `+webhookReplayColumns, id, tag.RowsAffected()))
		if err != nil {
			return err
		}
		ran = true
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, DeliveriesChannel)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return job, false, err
	}
	return job, ran, wrap(fmt.Sprintf("run replay job %d", id), err)
}

// WebhookReplaysDue lists up to limit replay jobs still queued that were
// created at or before createdBefore, least recently swept first.
func (db *DB) WebhookReplaysDue(ctx context.Context, createdBefore time.Time, limit int) ([]storage.WebhookReplayJob, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+webhookReplayColumns+` FROM webhook_replay_jobs
		WHERE state = 'queued' AND created_at <= $1 ORDER BY swept_at NULLS FIRST, id LIMIT $2`, createdBefore, limit)
	if err != nil {
		return nil, wrap("list queued replay jobs", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.WebhookReplayJob, error) { return scanWebhookReplay(row) })
	return out, wrap("list queued replay jobs", err)
}

// MarkWebhookReplaysSwept records that the sweep looked at the jobs.
func (db *DB) MarkWebhookReplaysSwept(ctx context.Context, ids []int64, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE webhook_replay_jobs SET swept_at = $2 WHERE id = ANY($1)`, ids, now)
	return wrap("mark replay jobs swept", err)
}

// AbandonWebhookReplay ends a replay job that is still queued as
// incomplete (its task will not run again); a job already started is left
// to its status delivery. It reports whether the job was ended.
func (db *DB) AbandonWebhookReplay(ctx context.Context, id int64, now time.Time) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE webhook_replay_jobs SET state = 'incomplete', finished_at = $2
		WHERE id = $1 AND state = 'queued'`, id, now)
	if err != nil {
		return false, wrap(fmt.Sprintf("abandon replay job %d", id), err)
	}
	return tag.RowsAffected() == 1, nil
}
