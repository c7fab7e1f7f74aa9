package compliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Uploads is the compliance jobs' sweep source. The API records a job,
// hands out an upload URL served by its own upload gateway and records the
// upload when the PUT completes (uploaded_at); each tick Uploads has the
// task of every uploaded job enqueued. It also fails created jobs whose
// upload window expired with no upload streaming, has open jobs whose task
// was lost (Redis down or wiped) or whose worker stopped heartbeating
// enqueued again, and fails jobs whose task was archived.
//
// For a created job without a recorded upload and without a PUT streaming,
// it still looks for the object (Stat on its key): jobs created before the
// gateway got presigned blob-store URLs, and an API process that died
// between storing an upload and recording it leaves the stored file behind.
type Uploads struct {
	Store  SweepStore
	Blobs  blob.Store
	Logger *slog.Logger
	// StaleAfter is the heartbeat/enqueue age that counts as lost
	// (default 60 s).
	StaleAfter time.Duration
	// UploadGrace is how long after upload_expires_at a created job waits
	// before it fails: a PUT that began before expiry may still be arriving
	// (servers check the signature when a request starts). A PUT streaming
	// through the gateway holds the job longer, as long as its claim is
	// renewed. Default 15 min.
	UploadGrace time.Duration
}

var _ sweep.Source[storage.ComplianceJob] = (*Uploads)(nil)

// Name implements sweep.Source.
func (u *Uploads) Name() string { return "compliance" }

// Due implements sweep.Source: open jobs not swept, enqueued or
// heartbeating recently.
func (u *Uploads) Due(ctx context.Context, now time.Time, limit int) ([]storage.ComplianceJob, error) {
	stale := u.StaleAfter
	if stale <= 0 {
		stale = 60 * time.Second
	}
	return u.Store.ComplianceJobsToReconcile(ctx, now.Add(-stale), limit)
}

// Check implements sweep.Source. A job in progress (its task lost) is
// enqueued again at once; a created job once its upload is there and it is
// its turn: at most one job per app and type runs at a time, oldest upload
// first (storage.ComplianceJobTurn).
func (u *Uploads) Check(ctx context.Context, job storage.ComplianceJob, now time.Time) (*sweep.Work, error) {
	if job.Status == storage.JobInProgress {
		return work(job)
	}
	uploaded, err := u.uploaded(ctx, job, now)
	if err != nil || !uploaded {
		return nil, err
	}
	turn, err := u.Store.ComplianceJobTurn(ctx, job)
	if err != nil || !turn {
		return nil, err
	}
	return work(job)
}

// uploaded reports whether job's upload is complete: recorded by the upload
// gateway, or, for uploads that bypassed it (jobs created before the
// gateway, or an API that died between storing an upload and recording
// it), found in the blob store and then recorded so the job takes its
// place in line. A job whose window passed without an upload fails.
func (u *Uploads) uploaded(ctx context.Context, job storage.ComplianceJob, now time.Time) (bool, error) {
	if job.UploadedAt != nil {
		return true, nil
	}
	if job.UploadLeaseUntil != nil && now.Before(*job.UploadLeaseUntil) {
		return false, nil // a PUT is streaming through the gateway
	}
	info, err := u.Blobs.Stat(ctx, job.UploadKey)
	switch {
	case err == nil:
		return true, u.Store.RecordComplianceUpload(ctx, job.ID, info.Size, now)
	case !errors.Is(err, blob.ErrNotFound):
		return false, fmt.Errorf("look for upload of job %d: %w", job.ID, err)
	case now.After(job.UploadExpiresAt.Add(u.grace())):
		u.lifecycle().fail(ctx, job, expiredReason(job), now)
		u.Logger.InfoContext(ctx, "compliance job failed: upload window expired", "job_id", job.ID)
	}
	return false, nil
}

func (u *Uploads) grace() time.Duration {
	if u.UploadGrace <= 0 {
		return 15 * time.Minute
	}
	return u.UploadGrace
}

func (u *Uploads) lifecycle() lifecycle {
	return lifecycle{store: u.Store, blobs: u.Blobs, log: u.Logger}
}

func work(job storage.ComplianceJob) (*sweep.Work, error) {
	task, err := tasks.NewComplianceProcess(job.ID)
	if err != nil {
		return nil, err
	}
	return &sweep.Work{Task: task, Queue: tasks.QueueCompliance, TaskID: tasks.ComplianceTaskID(job.ID)}, nil
}

// Enqueued implements sweep.Source.
func (u *Uploads) Enqueued(ctx context.Context, job storage.ComplianceJob, now time.Time) error {
	return u.Store.MarkComplianceEnqueued(ctx, job.ID, now)
}

// Abandoned implements sweep.Source: the job fails like one whose retries
// ran out.
func (u *Uploads) Abandoned(ctx context.Context, job storage.ComplianceJob, info *asynq.TaskInfo, now time.Time) error {
	u.Logger.ErrorContext(ctx, "compliance task archived; failing job", "job_id", job.ID, "attempts", info.Retried+1, "last_err", info.LastErr)
	u.lifecycle().fail(ctx, job, failedAfterRetries(job.ID, info.Retried+1), now)
	return nil
}

// Swept implements sweep.Source.
func (u *Uploads) Swept(ctx context.Context, jobs []storage.ComplianceJob, now time.Time) error {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return u.Store.MarkComplianceChecked(ctx, ids, now)
}
