package compliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
)

// jobFailer is the record access a failure needs.
type jobFailer interface {
	FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error
}

// lifecycle ends jobs: fail marks an open job failed and removes any result
// an attempt stored, so a failed job never serves a download.
type lifecycle struct {
	store jobFailer
	blobs blob.Store
	log   *slog.Logger
}

// fail ends job as failed with a client-facing reason. It runs even when
// ctx is done (the attempt was cancelled) and is a no-op for a job that is
// already final.
func (l lifecycle) fail(ctx context.Context, job storage.ComplianceJob, reason string, at time.Time) {
	ctx = context.WithoutCancel(ctx)
	err := l.store.FailComplianceJob(ctx, job.ID, reason, at)
	if errors.Is(err, storage.ErrConflict) {
		return // already final
	}
	if err != nil {
		l.log.ErrorContext(ctx, "mark compliance job failed", "job_id", job.ID, "err", err)
		return
	}
	if err := l.blobs.Delete(ctx, job.ResultKey); err != nil {
		l.log.WarnContext(ctx, "remove result of failed compliance job", "job_id", job.ID, "err", err)
	}
}

// errNoUpload marks a job whose upload object is gone.
var errNoUpload = errors.New("upload not found")

// reasonFor is the client-facing failure reason. Only errors of our own
// making are shown; internal errors never reach clients.
func reasonFor(err error) string {
	if errors.Is(err, errNoUpload) {
		return "The uploaded file could not be found."
	}
	return fmt.Sprintf("The uploaded file could not be read: %v", err)
}

// failedAfterRetries is the client-facing reason when every attempt failed;
// the cause is in the worker logs.
func failedAfterRetries(jobID int64, attempts int) string {
	return fmt.Sprintf("Processing failed after %d attempts. The operator can find the cause in the worker logs (job %d).", attempts, jobID)
}

// expiredReason is the client-facing reason when no upload arrived in time.
func expiredReason(job storage.ComplianceJob) string {
	return fmt.Sprintf("No file was uploaded before the upload URL expired at %s.", job.UploadExpiresAt.UTC().Format(time.RFC3339))
}
