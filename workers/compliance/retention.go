package compliance

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// RetentionStore is the record access Retention needs
// (storage/postgres.DB satisfies it).
type RetentionStore interface {
	ComplianceJobsToPurge(ctx context.Context, now, failedBefore time.Time, limit int) ([]storage.ComplianceJob, error)
	MarkComplianceBlobsDeleted(ctx context.Context, id int64, at time.Time) error
}

// Retention is the sweep source that deletes finished jobs' blobs once
// their retention ended (docs/compliance-lifecycle.md, "Retention"): the
// upload and the result of a complete job when its download URL expires,
// the upload of a failed job (which has no result) FailedAfter it failed.
// It enqueues nothing: each due job's objects are deleted in Check and the
// deletion is recorded (blobs_deleted_at), so a job is done once, and a
// failed deletion is retried on the next tick. It runs in every worker
// under the sweepers' Redis lease, like Uploads, on either blob driver.
type Retention struct {
	Store  RetentionStore
	Blobs  blob.Store
	Logger *slog.Logger
	// FailedAfter is how long a failed job's upload is kept (default 0:
	// deleted on the first tick after the failure).
	FailedAfter time.Duration
}

var _ sweep.Source[storage.ComplianceJob] = (*Retention)(nil)

// Name implements sweep.Source.
func (r *Retention) Name() string { return "compliance-retention" }

// Due implements sweep.Source: finished jobs whose retention ended and
// whose blobs are not deleted yet, oldest first.
func (r *Retention) Due(ctx context.Context, now time.Time, limit int) ([]storage.ComplianceJob, error) {
	return r.Store.ComplianceJobsToPurge(ctx, now, now.Add(-r.FailedAfter), limit)
}

// Check implements sweep.Source: it deletes job's upload and result
// (deleting a missing object is not an error) and records it.
func (r *Retention) Check(ctx context.Context, job storage.ComplianceJob, now time.Time) (*sweep.Work, error) {
	for _, key := range []string{job.UploadKey, job.ResultKey} {
		if err := r.Blobs.Delete(ctx, key); err != nil {
			return nil, fmt.Errorf("delete %s of compliance job %d: %w", key, job.ID, err)
		}
	}
	if err := r.Store.MarkComplianceBlobsDeleted(ctx, job.ID, now); err != nil {
		return nil, err
	}
	r.Logger.InfoContext(ctx, "compliance job blobs deleted after retention", "job_id", job.ID, "status", job.Status)
	return nil, nil
}

// Enqueued implements sweep.Source; Retention enqueues nothing.
func (r *Retention) Enqueued(context.Context, storage.ComplianceJob, time.Time) error { return nil }

// Abandoned implements sweep.Source; Retention enqueues nothing.
func (r *Retention) Abandoned(context.Context, storage.ComplianceJob, *asynq.TaskInfo, time.Time) error {
	return nil
}

// Swept implements sweep.Source: blobs_deleted_at already took the swept
// jobs out of Due.
func (r *Retention) Swept(context.Context, []storage.ComplianceJob, time.Time) error { return nil }
