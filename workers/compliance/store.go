// Package compliance is the worker side of batch compliance jobs: Uploads
// (a sweep source) notices a job's upload and enqueues its task, fails jobs
// whose upload window passed and re-enqueues lost ones; Processor runs the
// task, streaming the uploaded ids through the check pipeline into the
// result file; lifecycle holds the job's final transitions.
package compliance

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access compliance processing needs
// (storage/postgres.DB satisfies it).
type Store interface {
	StartComplianceJob(ctx context.Context, id int64, at time.Time) (storage.ComplianceJob, bool, error)
	RequeueComplianceJob(ctx context.Context, id int64) error
	HeartbeatComplianceJob(ctx context.Context, id int64, p storage.ComplianceProgress, at time.Time) error
	CompleteComplianceJob(ctx context.Context, id int64, p storage.ComplianceProgress, at time.Time) error
	FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error
	ComplianceJob(ctx context.Context, id int64) (storage.ComplianceJob, error)
	// NextComplianceJob is the oldest uploaded job of an app and type
	// waiting to start (storage.ErrNotFound: none).
	NextComplianceJob(ctx context.Context, appID int64, jobType string) (storage.ComplianceJob, error)
	// The lookups of the check: the known records among ids that need
	// action (the rest are absent), with their state times.
	PostsNeedingAction(ctx context.Context, ids []int64) ([]storage.PostStatus, error)
	UsersNeedingAction(ctx context.Context, ids []int64) ([]storage.User, error)
}

// SweepStore is the record access the Uploads sweep source needs.
type SweepStore interface {
	ComplianceJobsToReconcile(ctx context.Context, staleBefore time.Time, limit int) ([]storage.ComplianceJob, error)
	MarkComplianceChecked(ctx context.Context, ids []int64, at time.Time) error
	MarkComplianceEnqueued(ctx context.Context, id int64, at time.Time) error
	FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error
	ComplianceJobTurn(ctx context.Context, job storage.ComplianceJob) (bool, error)
	RecordComplianceUpload(ctx context.Context, id int64, size int64, at time.Time) error
}
