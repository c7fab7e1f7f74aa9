package compliance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// failingDeletes is a blob store whose Delete fails while fail is set.
type failingDeletes struct {
	blob.Store
	fail bool
}

func (f *failingDeletes) Delete(ctx context.Context, key string) error {
	if f.fail {
		return errors.New("delete refused")
	}
	return f.Store.Delete(ctx, key)
}

// TestRetention: a complete job's upload and result are deleted once its
// download URL expired, a failed job's upload once FailedAfter passed;
// open jobs and complete jobs still downloadable keep theirs. Each job is
// done once, and a failed deletion is retried on the next tick.
func TestRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	old := now.Add(-storage.ComplianceDownloadURLTTL - time.Hour)
	blobs := &failingDeletes{Store: e.blobs}
	clock := now
	s := &sweep.Sweeper[storage.ComplianceJob]{
		Source: &Retention{Store: e.db, Blobs: blobs, Logger: e.log, FailedAfter: 10 * time.Minute},
		Logger: e.log, Clock: func() time.Time { return clock },
	}
	job := func(typ string, st storage.JobStatus, created, completed time.Time) storage.ComplianceJob {
		j := factory.ComplianceJob(t, e.db, &factory.ComplianceJobOpts{App: e.app, Type: typ, Status: st, CreatedAt: created, CompletedAt: completed})
		e.put(t, j.UploadKey, "1\n")
		if st == storage.JobComplete {
			e.put(t, j.ResultKey, "{}\n")
		}
		return j
	}
	expired := job(storage.ComplianceTypeTweets, storage.JobComplete, old, old)
	valid := job(storage.ComplianceTypeTweets, storage.JobComplete, now.Add(-time.Hour), now.Add(-time.Hour))
	failedLong := job(storage.ComplianceTypeUsers, storage.JobFailed, now.Add(-time.Hour), now.Add(-time.Hour))
	failedJust := job(storage.ComplianceTypeUsers, storage.JobFailed, now.Add(-time.Minute), now.Add(-time.Minute))
	open := job(storage.ComplianceTypeTweets, storage.JobInProgress, old, time.Time{})

	blobs.fail = true
	if err := s.Tick(t.Context()); err == nil {
		t.Fatal("Tick with failing deletes reported no error")
	}
	if got := e.load(t, expired.ID); got.BlobsDeletedAt != nil {
		t.Fatalf("blobs_deleted_at set although the delete failed")
	}

	blobs.fail = false
	if err := s.Tick(t.Context()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	for _, key := range []string{expired.UploadKey, expired.ResultKey, failedLong.UploadKey} {
		e.wantNoObject(t, key)
	}
	for _, key := range []string{valid.UploadKey, valid.ResultKey, failedJust.UploadKey, open.UploadKey} {
		if _, err := e.blobs.Stat(t.Context(), key); err != nil {
			t.Errorf("blob %s within its retention: %v", key, err)
		}
	}
	for _, j := range []storage.ComplianceJob{expired, failedLong} {
		if got := e.load(t, j.ID); got.BlobsDeletedAt == nil || !got.BlobsDeletedAt.Equal(now) {
			t.Errorf("job %d blobs_deleted_at = %v, want %v", j.ID, got.BlobsDeletedAt, now)
		}
	}

	// A week later everything finished has gone; a re-created object of a
	// purged job is not looked at again (the job is done once).
	e.put(t, expired.UploadKey, "again\n")
	clock = now.Add(storage.ComplianceDownloadURLTTL)
	if err := s.Tick(t.Context()); err != nil {
		t.Fatalf("Tick a week later: %v", err)
	}
	for _, key := range []string{valid.UploadKey, valid.ResultKey, failedJust.UploadKey} {
		e.wantNoObject(t, key)
	}
	if _, err := e.blobs.Stat(t.Context(), open.UploadKey); err != nil {
		t.Errorf("upload of a job in progress: %v", err)
	}
	if _, err := e.blobs.Stat(t.Context(), expired.UploadKey); err != nil {
		t.Errorf("purged job swept again: %v", err)
	}
}
