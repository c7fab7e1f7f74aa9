package factory

import (
	"fmt"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// ComplianceJobOpts are the options of ComplianceJob; the zero value of a
// field means its default.
type ComplianceJobOpts struct {
	// App owns the job; the zero App means a new app (see App).
	App storage.App
	// Type defaults to storage.ComplianceTypeTweets.
	Type string
	// Name defaults to "job <id>".
	Name      string
	Resumable bool
	// CreatedAt defaults to now; UploadExpiresAt to CreatedAt + 15 minutes;
	// DownloadExpiresAt to CreatedAt + 7 days.
	CreatedAt         time.Time
	UploadExpiresAt   time.Time
	DownloadExpiresAt time.Time
	// EnqueuedAt records the job's task as handed to the queue at that time
	// (MarkComplianceEnqueued); nil means never.
	EnqueuedAt *time.Time

	// Status is where the job ends up, reached through the store's own
	// transitions: storage.JobCreated (the default); storage.JobInProgress
	// (started at StartedAt); storage.JobComplete (started at StartedAt,
	// completed at CompletedAt with Progress); storage.JobFailed (failed at
	// CompletedAt with FailureReason, and started at StartedAt first if that
	// is set). A job cannot be created while its app has one of the same type
	// in progress, so create such jobs after the others.
	Status storage.JobStatus
	// StartedAt defaults to CreatedAt.
	StartedAt time.Time
	// HeartbeatAt, when set, records a heartbeat with Progress at that time
	// after the start; a started job with a non-zero Progress gets one at
	// StartedAt by default. A complete job gets none: its completion
	// records Progress.
	HeartbeatAt time.Time
	// CompletedAt is when a complete or failed job finished; it defaults to
	// StartedAt (CreatedAt if the job never started).
	CompletedAt time.Time
	// Progress holds the counts recorded by the heartbeat or the completion.
	Progress storage.ComplianceProgress
	// FailureReason of a failed job defaults to "failed by factory".
	FailureReason string
}

// ComplianceJob records a job the way the API does (id from NextID, blob
// keys and presigned URLs under compliance/<app>/<job>/) and moves it to
// opts.Status.
func ComplianceJob(t testing.TB, db *postgres.DB, opts *ComplianceJobOpts) storage.ComplianceJob {
	t.Helper()
	if opts == nil {
		opts = &ComplianceJobOpts{}
	}
	ctx := t.Context()
	rec, err := jobRecord(t, db, opts)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if _, err := db.CreateComplianceJob(ctx, rec); err != nil {
		t.Fatalf("factory: %v", err)
	}
	if opts.EnqueuedAt != nil {
		if err := db.MarkComplianceEnqueued(ctx, rec.ID, *opts.EnqueuedAt); err != nil {
			t.Fatalf("factory: %v", err)
		}
	}
	if err := moveJob(t, db, rec, opts); err != nil {
		t.Fatalf("factory: %v", err)
	}
	j, err := db.ComplianceJob(ctx, rec.ID)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	return j
}

// jobRecord fills in the record CreateComplianceJob stores.
func jobRecord(t testing.TB, db *postgres.DB, opts *ComplianceJobOpts) (storage.ComplianceJob, error) {
	t.Helper()
	app := opts.App
	if app.ID == 0 {
		app = App(t, db, nil)
	}
	id, err := db.NextID(t.Context())
	if err != nil {
		return storage.ComplianceJob{}, fmt.Errorf("compliance job id: %w", err)
	}
	rec := storage.ComplianceJob{
		ID: id, AppID: app.ID, Type: opts.Type, Name: opts.Name, Resumable: opts.Resumable,
		CreatedAt: opts.CreatedAt, UploadExpiresAt: opts.UploadExpiresAt, DownloadExpiresAt: opts.DownloadExpiresAt,
	}
	if rec.Type == "" {
		rec.Type = storage.ComplianceTypeTweets
	}
	if rec.Name == "" {
		rec.Name = "job " + ids.Format(id)
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now()
	}
	if rec.UploadExpiresAt.IsZero() {
		rec.UploadExpiresAt = rec.CreatedAt.Add(storage.ComplianceUploadURLTTL)
	}
	if rec.DownloadExpiresAt.IsZero() {
		rec.DownloadExpiresAt = rec.CreatedAt.Add(storage.ComplianceDownloadURLTTL)
	}
	rec.UploadKey, rec.ResultKey = storage.ComplianceUploadKey(app.ID, id), storage.ComplianceResultKey(app.ID, id)
	rec.UploadURL, rec.DownloadURL = "http://127.0.0.1/blobs/"+rec.UploadKey, "http://127.0.0.1/blobs/"+rec.ResultKey
	return rec, nil
}

// moveJob takes the created job rec to opts.Status through the store's
// transitions.
func moveJob(t testing.TB, db *postgres.DB, rec storage.ComplianceJob, opts *ComplianceJobOpts) error {
	t.Helper()
	ctx := t.Context()
	var start bool
	switch opts.Status {
	case "", storage.JobCreated:
		return nil
	case storage.JobInProgress, storage.JobComplete:
		start = true
	case storage.JobFailed:
		start = !opts.StartedAt.IsZero()
	default:
		return fmt.Errorf("compliance job %d: unknown status %q", rec.ID, opts.Status)
	}
	finishedAt := rec.CreatedAt
	if start {
		startedAt := opts.StartedAt
		if startedAt.IsZero() {
			startedAt = rec.CreatedAt
		}
		finishedAt = startedAt
		if _, started, err := db.StartComplianceJob(ctx, rec.ID, startedAt); err != nil {
			return err
		} else if !started {
			return fmt.Errorf("start compliance job %d: not started", rec.ID)
		}
		beatAt := opts.HeartbeatAt
		if beatAt.IsZero() && opts.Progress != (storage.ComplianceProgress{}) {
			beatAt = startedAt
		}
		if !beatAt.IsZero() && opts.Status != storage.JobComplete {
			if err := db.HeartbeatComplianceJob(ctx, rec.ID, opts.Progress, beatAt); err != nil {
				return err
			}
		}
	}
	if !opts.CompletedAt.IsZero() {
		finishedAt = opts.CompletedAt
	}
	switch opts.Status {
	case storage.JobComplete:
		return db.CompleteComplianceJob(ctx, rec.ID, opts.Progress, finishedAt)
	case storage.JobFailed:
		reason := opts.FailureReason
		if reason == "" {
			reason = "failed by factory"
		}
		return db.FailComplianceJob(ctx, rec.ID, reason, finishedAt)
	}
	return nil
}
