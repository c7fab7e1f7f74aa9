package compliance

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
)

// TestReconcilerTakesGatewayUploads: the upload gateway's record
// (uploaded_at) is the upload signal, without looking at the blob store,
// and a created job whose upload is streaming (a live claim) is neither
// enqueued nor failed, even past its upload window and grace.
func TestReconcilerTakesGatewayUploads(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	ctx := t.Context()

	// Recorded by the gateway: enqueued although no Stat would find it
	// (the worker's blob store here is not the API's).
	uploaded := q.job(t, storage.ComplianceTypeTweets, nil)
	if _, err := q.db.ClaimComplianceUpload(ctx, uploaded.ID, "a", q.now, q.now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := q.db.CompleteComplianceUpload(ctx, uploaded.ID, "a", 2, q.now); err != nil {
		t.Fatal(err)
	}

	// Streaming since before its window closed; the window and the grace
	// are over now, the lease is live.
	streaming := q.job(t, storage.ComplianceTypeUsers, func(j *storage.ComplianceJob) {
		j.UploadExpiresAt = q.now.Add(-time.Hour)
	})
	if _, err := q.db.ClaimComplianceUpload(ctx, streaming.ID, "b", q.now.Add(-time.Minute), q.now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	q.tick(t, r)
	q.wantTask(t, uploaded.ID, asynq.TaskStatePending)
	q.wantNoTask(t, streaming.ID)
	if got := q.load(t, streaming.ID); got.Status != storage.JobCreated {
		t.Fatalf("job with an upload streaming = %s %q, want created", got.Status, got.FailureReason)
	}

	// The API process died: once the lease lapsed, the job fails like any
	// job without an upload.
	q.now = q.now.Add(2 * time.Minute)
	q.tick(t, r)
	if got := q.load(t, streaming.ID); got.Status != storage.JobFailed {
		t.Fatalf("job whose upload claim lapsed past its window = %s, want failed", got.Status)
	}
}
