package compliance

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
)

// TestProcessTaskWaitsItsTurn: a task whose job is not its turn (another
// job of the app and type is in progress) ends without starting it and
// without an error (no retry spent); the job waits, created, for the
// sweeper to enqueue it again.
func TestProcessTaskWaitsItsTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running := e.job(t, storage.ComplianceTypeTweets, nil)
	waiting := e.job(t, storage.ComplianceTypeTweets, nil)
	if _, started, err := e.db.StartComplianceJob(t.Context(), running.ID, workerClock); err != nil || !started {
		t.Fatalf("start the running job: %v %v", started, err)
	}
	e.put(t, waiting.UploadKey, "1\n")
	if err := e.db.MarkComplianceEnqueued(t.Context(), waiting.ID, workerClock.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := processTask(t, e.compliance(nil), waiting.ID); err != nil {
		t.Fatalf("ProcessTask of a job that is not its turn: %v", err)
	}
	got := e.load(t, waiting.ID)
	if got.Status != storage.JobCreated || got.Attempts != 0 || got.EnqueuedAt != nil {
		t.Errorf("waiting job = %s, %d attempts, enqueued %v; want created, 0, not enqueued", got.Status, got.Attempts, got.EnqueuedAt)
	}
	e.wantNoObject(t, waiting.ResultKey)
}

// TestSweeperEnqueuesInTurn: of three uploaded jobs of one app and type
// only the oldest is handed to the queue; the next one once it finished,
// within one tick. A job of another type is not held back.
func TestSweeperEnqueuesInTurn(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	first := q.job(t, storage.ComplianceTypeTweets, nil)
	second := q.job(t, storage.ComplianceTypeTweets, nil)
	third := q.job(t, storage.ComplianceTypeTweets, nil)
	users := q.job(t, storage.ComplianceTypeUsers, nil)
	for _, j := range []storage.ComplianceJob{third, second, first, users} {
		q.put(t, j.UploadKey, "1\n")
	}
	q.tick(t, r)
	q.wantTask(t, first.ID, asynq.TaskStatePending)
	q.wantTask(t, users.ID, asynq.TaskStatePending)
	q.wantNoTask(t, second.ID)
	q.wantNoTask(t, third.ID)

	if err := processTask(t, q.compliance(nil), first.ID); err != nil {
		t.Fatalf("process the first job: %v", err)
	}
	q.now = q.now.Add(time.Second)
	q.tick(t, r)
	q.wantTask(t, second.ID, asynq.TaskStatePending)
	q.wantNoTask(t, third.ID)
}

// TestFinishedJobStartsTheNext: when a job completes or fails, the next
// uploaded job of its app and type is enqueued at once through Next (no
// tick), and only that one; with no job waiting nothing is enqueued.
func TestFinishedJobStartsTheNext(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	first := q.job(t, storage.ComplianceTypeTweets, nil)
	second := q.job(t, storage.ComplianceTypeTweets, nil)
	third := q.job(t, storage.ComplianceTypeTweets, nil)
	for _, j := range []storage.ComplianceJob{first, second, third} {
		q.put(t, j.UploadKey, "1\n")
	}
	q.put(t, second.UploadKey, "\x1f\x8b\x08\x00binary") // second fails
	q.tick(t, r)                                         // records the uploads, enqueues the first
	q.wantTask(t, first.ID, asynq.TaskStatePending)
	q.wantNoTask(t, second.ID)

	c := q.compliance(nil)
	c.Next = r
	if err := processTask(t, c, first.ID); err != nil {
		t.Fatalf("process the first job: %v", err)
	}
	q.wantTask(t, second.ID, asynq.TaskStatePending)
	q.wantNoTask(t, third.ID)

	_ = processTask(t, c, second.ID) // fails: gzip
	if got := q.load(t, second.ID); got.Status != storage.JobFailed {
		t.Fatalf("second job is %s, want failed", got.Status)
	}
	q.wantTask(t, third.ID, asynq.TaskStatePending)

	if err := processTask(t, c, third.ID); err != nil {
		t.Fatalf("process the third job: %v", err)
	}
	if got := q.load(t, third.ID); got.Status != storage.JobComplete {
		t.Errorf("third job is %s, want complete", got.Status)
	}
}
