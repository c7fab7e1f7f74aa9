package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const jobColumns = `id, app_id, type, name, resumable, status, upload_key, result_key, upload_url, download_url,
	upload_expires_at, download_expires_at, created_at, updated_at, enqueued_at, started_at, heartbeat_at,
	completed_at, attempts, lines_read, malformed_lines, result_lines, failure_reason,
	upload_started_at, upload_lease_until, uploaded_at, upload_bytes, blobs_deleted_at`

func scanJob(row pgx.Row) (storage.ComplianceJob, error) {
	var j storage.ComplianceJob
	err := row.Scan(&j.ID, &j.AppID, &j.Type, &j.Name, &j.Resumable, &j.Status, &j.UploadKey, &j.ResultKey,
		&j.UploadURL, &j.DownloadURL, &j.UploadExpiresAt, &j.DownloadExpiresAt, &j.CreatedAt, &j.UpdatedAt,
		&j.EnqueuedAt, &j.StartedAt, &j.HeartbeatAt, &j.CompletedAt, &j.Attempts, &j.LinesRead,
		&j.MalformedLines, &j.ResultLines, &j.FailureReason,
		&j.UploadStartedAt, &j.UploadLeaseUntil, &j.UploadedAt, &j.UploadBytes, &j.BlobsDeletedAt)
	return j, err
}

func collectJobs(rows pgx.Rows) ([]storage.ComplianceJob, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ComplianceJob, error) { return scanJob(row) })
}

// CreateComplianceJob records a new job in status created. It fails with
// storage.ErrConflict while the app has a job of the same type in progress;
// creations of one app are serialized so the check cannot race.
func (db *DB) CreateComplianceJob(ctx context.Context, j storage.ComplianceJob) (storage.ComplianceJob, error) {
	var out storage.ComplianceJob
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, j.AppID); err != nil {
			return fmt.Errorf("lock app: %w", err)
		}
		var busy bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM compliance_jobs
			WHERE app_id = $1 AND type = $2 AND status = 'in_progress')`, j.AppID, j.Type).Scan(&busy); err != nil {
			return fmt.Errorf("check jobs in progress: %w", err)
		}
		if busy {
			return fmt.Errorf("a %s job is in progress: %w", j.Type, storage.ErrConflict)
		}
		var err error
		out, err = scanJob(tx.QueryRow(ctx, `INSERT INTO compliance_jobs (id, app_id, type, name, resumable, upload_key,
			result_key, upload_url, download_url, upload_expires_at, download_expires_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING `+jobColumns,
			j.ID, j.AppID, j.Type, j.Name, j.Resumable, j.UploadKey, j.ResultKey, j.UploadURL, j.DownloadURL,
			j.UploadExpiresAt, j.DownloadExpiresAt, j.CreatedAt))
		return err
	})
	return out, wrap(fmt.Sprintf("create compliance job %d", j.ID), err)
}

// jobViewColumns are the columns a client sees of a job (the API's GET and
// list render nothing else), read by scanJobView. The app is not among
// them: the statements select by it, so the caller knows it.
const jobViewColumns = `id, type, name, resumable, status, upload_url, download_url,
	upload_expires_at, download_expires_at, created_at, failure_reason`

// scanJobView reads a row of jobViewColumns of appID's job.
func scanJobView(row pgx.Row, appID int64) (storage.ComplianceJob, error) {
	j := storage.ComplianceJob{AppID: appID}
	err := row.Scan(&j.ID, &j.Type, &j.Name, &j.Resumable, &j.Status, &j.UploadURL, &j.DownloadURL,
		&j.UploadExpiresAt, &j.DownloadExpiresAt, &j.CreatedAt, &j.FailureReason)
	return j, err
}

// AppComplianceJob loads what a client sees of one job of an app
// (jobViewColumns; the worker's bookkeeping fields are left zero); another
// app's job is not found.
func (db *DB) AppComplianceJob(ctx context.Context, appID, id int64) (storage.ComplianceJob, error) {
	j, err := scanJobView(db.pool.QueryRow(ctx, `SELECT `+jobViewColumns+` FROM compliance_jobs WHERE id = $1 AND app_id = $2`, id, appID), appID)
	if err != nil { // the message is formatted only when there is an error: this is the API's hottest read
		return j, wrap(fmt.Sprintf("load compliance job %d", id), err)
	}
	return j, nil
}

// ComplianceJob loads any job by id (workers).
func (db *DB) ComplianceJob(ctx context.Context, id int64) (storage.ComplianceJob, error) {
	j, err := scanJob(db.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM compliance_jobs WHERE id = $1`, id))
	return j, wrap(fmt.Sprintf("load compliance job %d", id), err)
}

// ListComplianceJobs returns what a client sees (jobViewColumns) of an
// app's jobs of one type, newest first.
func (db *DB) ListComplianceJobs(ctx context.Context, f storage.ComplianceFilter) ([]storage.ComplianceJob, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.pool.Query(ctx, `SELECT `+jobViewColumns+` FROM compliance_jobs
		WHERE app_id = $1 AND type = $2 AND ($3 = '' OR status = $3) ORDER BY id DESC LIMIT $4`,
		f.AppID, f.Type, f.Status, limit)
	if err != nil {
		return nil, wrap("list compliance jobs", err)
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ComplianceJob, error) { return scanJobView(row, f.AppID) })
	return jobs, wrap("scan compliance jobs", err)
}

// ComplianceJobsToReconcile returns open jobs the reconciler should look at:
// created jobs not enqueued since staleBefore (least recently checked first)
// and in-progress jobs with neither a heartbeat nor an enqueue since
// staleBefore (a job waiting out a retry backoff is not looked at again on
// every tick once it was re-enqueued).
func (db *DB) ComplianceJobsToReconcile(ctx context.Context, staleBefore time.Time, limit int) ([]storage.ComplianceJob, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+jobColumns+` FROM compliance_jobs
		WHERE (status = 'created' AND (enqueued_at IS NULL OR enqueued_at < $1))
		   OR (status = 'in_progress' AND COALESCE(GREATEST(heartbeat_at, enqueued_at), created_at) < $1)
		ORDER BY upload_checked_at NULLS FIRST, id LIMIT $2`, staleBefore, limit)
	if err != nil {
		return nil, wrap("list jobs to reconcile", err)
	}
	jobs, err := collectJobs(rows)
	return jobs, wrap("scan jobs to reconcile", err)
}

// MarkComplianceChecked records that the reconciler looked for the upload.
func (db *DB) MarkComplianceChecked(ctx context.Context, ids []int64, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET upload_checked_at = $2 WHERE id = ANY($1)`, ids, at)
	return wrap("mark compliance jobs checked", err)
}

// MarkComplianceEnqueued records that the job's task was handed to the queue.
func (db *DB) MarkComplianceEnqueued(ctx context.Context, id int64, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET enqueued_at = $2 WHERE id = $1`, id, at)
	return wrap(fmt.Sprintf("mark compliance job %d enqueued", id), err)
}

// StartComplianceJob moves an open job to in_progress for a new attempt.
// The recorded progress is kept (the attempt's heartbeats overwrite it), so
// an attempt that finds an already stored result can complete with the
// counts recorded before it was stored. started is false (and the job is
// returned as stored) when the job is already complete or failed.
//
// A created job starts only when it is its turn (see ComplianceJobTurn):
// otherwise it fails with storage.ErrJobBusy and is left as it is. Starts
// and creations of one app are serialized, so the check cannot race.
func (db *DB) StartComplianceJob(ctx context.Context, id int64, at time.Time) (job storage.ComplianceJob, started bool, err error) {
	err = db.beginFunc(ctx, func(tx pgx.Tx) error {
		job, err = scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM compliance_jobs WHERE id = $1`, id))
		if err != nil || job.Status.Final() {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, job.AppID); err != nil {
			return fmt.Errorf("lock app: %w", err)
		}
		if job.Status == storage.JobCreated {
			if err := mayStart(ctx, tx, job); err != nil {
				return err
			}
		}
		job, err = scanJob(tx.QueryRow(ctx, `UPDATE compliance_jobs SET status = 'in_progress',
			started_at = COALESCE(started_at, $2), heartbeat_at = $2, updated_at = $2, attempts = attempts + 1
			WHERE id = $1 AND status IN ('created', 'in_progress') RETURNING `+jobColumns, id, at))
		started = err == nil
		return err
	})
	return job, started, wrap(fmt.Sprintf("start compliance job %d", id), err)
}

// jobsAhead is true while another job of the app and type of job $3 is in
// progress, or an older one is uploaded and waiting to start.
const jobsAhead = `EXISTS(SELECT 1 FROM compliance_jobs WHERE app_id = $1 AND type = $2 AND id <> $3
	AND (status = 'in_progress' OR (status = 'created' AND id < $3 AND uploaded_at IS NOT NULL)))`

// mayStart returns storage.ErrJobBusy while it is not job's turn.
func mayStart(ctx context.Context, tx pgx.Tx, job storage.ComplianceJob) error {
	var busy bool
	if err := tx.QueryRow(ctx, `SELECT `+jobsAhead, job.AppID, job.Type, job.ID).Scan(&busy); err != nil {
		return fmt.Errorf("check jobs ahead: %w", err)
	}
	if busy {
		return storage.ErrJobBusy
	}
	return nil
}

// ComplianceJobTurn reports whether job may start now: no other job of its
// app and type is in progress, and none older is uploaded and waiting. At
// most one job per app and type runs at a time, and uploaded jobs start
// oldest first. The sweeper asks before it enqueues; StartComplianceJob
// enforces it.
func (db *DB) ComplianceJobTurn(ctx context.Context, job storage.ComplianceJob) (bool, error) {
	var busy bool
	err := db.pool.QueryRow(ctx, `SELECT `+jobsAhead, job.AppID, job.Type, job.ID).Scan(&busy)
	return !busy, wrap(fmt.Sprintf("check the turn of compliance job %d", job.ID), err)
}

// NextComplianceJob returns the oldest uploaded job of an app and type still
// waiting to start (the one whose turn comes when the job ahead of it ends),
// or storage.ErrNotFound when none waits.
func (db *DB) NextComplianceJob(ctx context.Context, appID int64, jobType string) (storage.ComplianceJob, error) {
	j, err := scanJob(db.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM compliance_jobs
		WHERE app_id = $1 AND type = $2 AND status = 'created' AND uploaded_at IS NOT NULL
		ORDER BY id LIMIT 1`, appID, jobType))
	return j, wrap(fmt.Sprintf("next %s compliance job of app %d", jobType, appID), err)
}

// RecordComplianceUpload records an upload found in the blob store that did
// not come through the upload gateway, so the job takes its place in line.
// The first record wins; a job that is no longer created, or whose upload a
// live gateway claim is still streaming, is left alone.
func (db *DB) RecordComplianceUpload(ctx context.Context, id int64, size int64, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET uploaded_at = $2, upload_bytes = $3
		WHERE id = $1 AND status = 'created' AND uploaded_at IS NULL
		AND (upload_claim IS NULL OR upload_lease_until < $2)`, id, at, size)
	return wrap(fmt.Sprintf("record upload of compliance job %d", id), err)
}

// RequeueComplianceJob puts a created job that found itself busy back to
// waiting: it is no longer counted as enqueued, so the sweeper looks at it
// again on its next tick.
func (db *DB) RequeueComplianceJob(ctx context.Context, id int64) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET enqueued_at = NULL WHERE id = $1 AND status = 'created'`, id)
	return wrap(fmt.Sprintf("requeue compliance job %d", id), err)
}

// HeartbeatComplianceJob records progress of an in-progress job.
func (db *DB) HeartbeatComplianceJob(ctx context.Context, id int64, p storage.ComplianceProgress, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET heartbeat_at = $2, lines_read = $3, malformed_lines = $4,
		result_lines = $5 WHERE id = $1 AND status = 'in_progress'`, id, at, p.LinesRead, p.MalformedLines, p.ResultLines)
	return wrap(fmt.Sprintf("heartbeat compliance job %d", id), err)
}

// CompleteComplianceJob moves an in-progress job to complete with its final
// counts. It returns storage.ErrConflict if the job was not in progress.
func (db *DB) CompleteComplianceJob(ctx context.Context, id int64, p storage.ComplianceProgress, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET status = 'complete', completed_at = $2, updated_at = $2,
		heartbeat_at = $2, lines_read = $3, malformed_lines = $4, result_lines = $5
		WHERE id = $1 AND status = 'in_progress'`, id, at, p.LinesRead, p.MalformedLines, p.ResultLines)
	if err != nil {
		return wrap(fmt.Sprintf("complete compliance job %d", id), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("complete compliance job %d: not in progress: %w", id, storage.ErrConflict)
	}
	return nil
}

// FailComplianceJob moves an open job to failed with a reason. A job that is
// already complete or failed is left as it is (ErrConflict).
func (db *DB) FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE compliance_jobs SET status = 'failed', failure_reason = $2, updated_at = $3,
		completed_at = $3 WHERE id = $1 AND status IN ('created', 'in_progress')`, id, reason, at)
	if err != nil {
		return wrap(fmt.Sprintf("fail compliance job %d", id), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("fail compliance job %d: already finished: %w", id, storage.ErrConflict)
	}
	return nil
}
