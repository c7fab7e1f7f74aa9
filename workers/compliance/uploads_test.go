package compliance

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/sweep/sweeptest"
)

// queueEnv adds a claimed Redis database with a real asynq client and
// inspector to env.
type queueEnv struct {
	*env
	client    *asynq.Client
	inspector *asynq.Inspector
	redis     *redis.Client
	now       time.Time // the reconciler's clock
}

const lockPrefix = "aviary:lock:"

func newQueueEnv(t *testing.T) *queueEnv {
	t.Helper()
	addr, db := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: db}
	q := &queueEnv{env: newEnv(t), now: time.Now().UTC().Truncate(time.Microsecond)}
	q.client = asynq.NewClient(opt)
	t.Cleanup(func() { q.client.Close() })
	q.inspector = asynq.NewInspector(opt)
	t.Cleanup(func() { q.inspector.Close() })
	q.redis = redis.NewClient(&redis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { q.redis.Close() })
	return q
}

func (q *queueEnv) reconciler() *sweep.Sweeper[storage.ComplianceJob] {
	return &sweep.Sweeper[storage.ComplianceJob]{
		Source: &Uploads{Store: q.db, Blobs: q.blobs, Logger: q.log, UploadGrace: 30 * time.Second},
		Queue:  q.client, Inspector: q.inspector,
		Locker: sweep.RedisLocker{Client: q.redis, Prefix: lockPrefix}, Logger: q.log,
		Clock: func() time.Time { return q.now }}
}

func (q *queueEnv) tick(t *testing.T, r *sweep.Sweeper[storage.ComplianceJob]) {
	t.Helper()
	if err := r.Tick(t.Context()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
}

// task returns the queued task of a job, or nil if there is none.
func (q *queueEnv) task(t *testing.T, jobID int64) *asynq.TaskInfo {
	t.Helper()
	info, err := q.inspector.GetTaskInfo(tasks.QueueCompliance, tasks.ComplianceTaskID(jobID))
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("GetTaskInfo: %v", err)
	}
	return info
}

func (q *queueEnv) wantTask(t *testing.T, jobID int64, state asynq.TaskState) {
	t.Helper()
	info := q.task(t, jobID)
	if info == nil {
		t.Fatalf("job %d has no task, want one %v", jobID, state)
	}
	if info.State != state || info.Type != tasks.TypeComplianceProcess || info.Queue != tasks.QueueCompliance {
		t.Errorf("task of job %d = %s %s in %s, want %s %v in %s", jobID, info.Type, info.State, info.Queue,
			tasks.TypeComplianceProcess, state, tasks.QueueCompliance)
	}
	if want := fmt.Sprintf(`{"job_id":%d}`, jobID); string(info.Payload) != want {
		t.Errorf("task payload = %s, want %s", info.Payload, want)
	}
}

func (q *queueEnv) wantNoTask(t *testing.T, jobID int64) {
	t.Helper()
	if info := q.task(t, jobID); info != nil {
		t.Errorf("job %d has a task (%v), want none", jobID, info.State)
	}
}

func (q *queueEnv) pendingCount(t *testing.T) int {
	t.Helper()
	infos, err := q.inspector.ListPendingTasks(tasks.QueueCompliance)
	if err != nil {
		t.Fatalf("ListPendingTasks: %v", err)
	}
	return len(infos)
}

func wantEnqueuedAt(t *testing.T, j storage.ComplianceJob, want *time.Time) {
	t.Helper()
	switch {
	case want == nil && j.EnqueuedAt != nil:
		t.Errorf("job %d enqueued_at = %v, want NULL", j.ID, *j.EnqueuedAt)
	case want != nil && (j.EnqueuedAt == nil || !j.EnqueuedAt.Equal(*want)):
		t.Errorf("job %d enqueued_at = %v, want %v", j.ID, j.EnqueuedAt, *want)
	}
}

func TestReconcilerEnqueuesUploadedJob(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	j := q.job(t, storage.ComplianceTypeTweets, nil)

	// No upload yet, window still open: nothing happens.
	q.tick(t, r)
	q.wantNoTask(t, j.ID)
	waiting := q.load(t, j.ID)
	if waiting.Status != storage.JobCreated || waiting.FailureReason != "" {
		t.Errorf("job without upload = %s %q, want created", waiting.Status, waiting.FailureReason)
	}
	wantEnqueuedAt(t, waiting, nil)

	q.put(t, j.UploadKey, "1\n")
	first := q.now
	q.tick(t, r)
	q.wantTask(t, j.ID, asynq.TaskStatePending)
	enqueued := q.load(t, j.ID)
	if enqueued.Status != storage.JobCreated {
		t.Errorf("enqueued job status = %s, want created", enqueued.Status)
	}
	wantEnqueuedAt(t, enqueued, &first)

	// A tick soon after leaves the recently enqueued job alone.
	q.now = first.Add(time.Second)
	q.tick(t, r)
	wantEnqueuedAt(t, q.load(t, j.ID), &first)
	if n := q.pendingCount(t); n != 1 {
		t.Errorf("%d pending tasks after a second tick, want 1", n)
	}

	// Once the enqueue is stale, a tick finds the task still queued and
	// only records that.
	q.now = first.Add(2 * time.Minute)
	q.tick(t, r)
	wantEnqueuedAt(t, q.load(t, j.ID), &q.now)
	if n := q.pendingCount(t); n != 1 {
		t.Errorf("%d pending tasks after a stale tick, want 1", n)
	}

	// A task lost from Redis is enqueued again.
	if err := q.inspector.DeleteTask(tasks.QueueCompliance, tasks.ComplianceTaskID(j.ID)); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	q.now = q.now.Add(2 * time.Minute)
	q.tick(t, r)
	q.wantTask(t, j.ID, asynq.TaskStatePending)
	wantEnqueuedAt(t, q.load(t, j.ID), &q.now)
}

func TestReconcilerExpiresUploadWindow(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	expiresAt := q.now.Add(-time.Minute).Truncate(time.Second)
	expired := q.job(t, storage.ComplianceTypeTweets, func(j *storage.ComplianceJob) {
		j.CreatedAt = expiresAt.Add(-15 * time.Minute)
		j.UploadExpiresAt = expiresAt
	})
	open := q.job(t, storage.ComplianceTypeTweets, nil)
	uploadedLate := q.job(t, storage.ComplianceTypeUsers, func(j *storage.ComplianceJob) {
		j.CreatedAt = expiresAt.Add(-15 * time.Minute)
		j.UploadExpiresAt = expiresAt
	})
	q.put(t, uploadedLate.UploadKey, "1\n") // arrived while the URL was valid

	q.tick(t, r)

	failed := q.load(t, expired.ID)
	want := "No file was uploaded before the upload URL expired at " + expiresAt.Format(time.RFC3339) + "."
	if failed.Status != storage.JobFailed || failed.FailureReason != want {
		t.Errorf("expired job = %s %q, want failed %q", failed.Status, failed.FailureReason, want)
	}
	if failed.CompletedAt == nil || !failed.CompletedAt.Equal(q.now) {
		t.Errorf("expired job completed_at = %v, want %v", failed.CompletedAt, q.now)
	}
	q.wantNoTask(t, expired.ID)

	if got := q.load(t, open.ID); got.Status != storage.JobCreated || got.EnqueuedAt != nil {
		t.Errorf("job inside its window = %s enqueued %v, want created and not enqueued", got.Status, got.EnqueuedAt)
	}
	q.wantNoTask(t, open.ID)

	if got := q.load(t, uploadedLate.ID); got.Status != storage.JobCreated || got.EnqueuedAt == nil {
		t.Errorf("uploaded job past its window = %s enqueued %v, want created and enqueued", got.Status, got.EnqueuedAt)
	}
	q.wantTask(t, uploadedLate.ID, asynq.TaskStatePending)

	// The failed job is not looked at again.
	q.now = q.now.Add(time.Hour)
	q.tick(t, r)
	if got := q.load(t, expired.ID); got.FailureReason != want || !got.UpdatedAt.Equal(failed.UpdatedAt) {
		t.Errorf("failed job changed by a later tick: %q at %v", got.FailureReason, got.UpdatedAt)
	}
}

func TestReconcilerInProgressJobs(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	ctx := t.Context()
	// Create all jobs first: a job in progress blocks creating its type.
	archived := q.job(t, storage.ComplianceTypeTweets, nil)
	lost := q.job(t, storage.ComplianceTypeUsers, nil)
	// At most one job of an app and type is in progress: the heartbeating
	// one belongs to another app.
	otherApp := factory.App(t, q.db, nil)
	alive := q.job(t, storage.ComplianceTypeTweets, func(j *storage.ComplianceJob) { j.AppID = otherApp.ID })

	task, err := tasks.NewComplianceProcess(archived.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.client.EnqueueContext(ctx, task); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if err := q.inspector.ArchiveTask(tasks.QueueCompliance, tasks.ComplianceTaskID(archived.ID)); err != nil {
		t.Fatalf("ArchiveTask: %v", err)
	}
	stale := q.now.Add(-5 * time.Minute)
	for _, s := range []struct {
		id int64
		at time.Time
	}{{archived.ID, stale}, {lost.ID, stale}, {alive.ID, q.now.Add(-time.Second)}} {
		if _, started, err := q.db.StartComplianceJob(ctx, s.id, s.at); err != nil || !started {
			t.Fatalf("StartComplianceJob(%d) = %v, %v", s.id, started, err)
		}
	}

	q.tick(t, r)

	got := q.load(t, archived.ID)
	if got.Status != storage.JobFailed || !strings.HasPrefix(got.FailureReason, "Processing failed after 1 attempts") {
		t.Errorf("job with an archived task = %s %q, want failed after 1 attempts", got.Status, got.FailureReason)
	}
	q.wantTask(t, archived.ID, asynq.TaskStateArchived)

	got = q.load(t, lost.ID)
	if got.Status != storage.JobInProgress {
		t.Errorf("stale job without a task = %s, want in_progress", got.Status)
	}
	wantEnqueuedAt(t, got, &q.now)
	q.wantTask(t, lost.ID, asynq.TaskStatePending)

	got = q.load(t, alive.ID)
	if got.Status != storage.JobInProgress || got.EnqueuedAt != nil {
		t.Errorf("heartbeating job = %s enqueued %v, want in_progress and left alone", got.Status, got.EnqueuedAt)
	}
	q.wantNoTask(t, alive.ID)
}

func TestReconcilerSkipsTickWhileLocked(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	j := q.job(t, storage.ComplianceTypeTweets, nil)
	q.put(t, j.UploadKey, "1\n")

	other := sweep.RedisLocker{Client: q.redis, Prefix: lockPrefix}
	release, ok, err := other.Acquire(t.Context(), "reconcile:compliance", time.Minute)
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	q.tick(t, r)
	q.wantNoTask(t, j.ID)
	wantEnqueuedAt(t, q.load(t, j.ID), nil)

	release()
	q.tick(t, r)
	q.wantTask(t, j.ID, asynq.TaskStatePending)
	// The tick released its lease when it was done.
	release, ok, err = other.Acquire(t.Context(), "reconcile:compliance", time.Minute)
	if err != nil || !ok {
		t.Errorf("Acquire after a tick = %v, %v; want the lock free", ok, err)
	} else {
		release()
	}
}

func TestReconcilerLockError(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	r.Locker = sweep.RedisLocker{Client: storagetest.DeadRedis(t), Prefix: lockPrefix}
	j := q.job(t, storage.ComplianceTypeTweets, nil)
	q.put(t, j.UploadKey, "1\n")
	if err := r.Tick(t.Context()); err == nil {
		t.Error("Tick with an unreachable lock server succeeded")
	}
	q.wantNoTask(t, j.ID)
}

// TestReconcilerUploadGrace: a created job whose upload URL expired less
// than UploadGrace ago is not failed yet (an upload begun before expiry may
// still be arriving).
func TestReconcilerUploadGrace(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler() // UploadGrace 30 s
	recent := q.job(t, storage.ComplianceTypeTweets, func(j *storage.ComplianceJob) {
		j.UploadExpiresAt = q.now.Add(-10 * time.Second)
	})
	q.tick(t, r)
	if got := q.load(t, recent.ID); got.Status != storage.JobCreated {
		t.Fatalf("job expired 10s ago = %s, want still created within the grace", got.Status)
	}
}

// TestReconcilerLeavesJobItsRunHolds: a job in progress whose progress
// heartbeat is old (a long batch) but whose run still holds its lease is
// not enqueued a second time; a killed run's job is, once its lease lapses.
func TestReconcilerLeavesJobItsRunHolds(t *testing.T) {
	t.Parallel()
	q := newQueueEnv(t)
	r := q.reconciler()
	r.Leases = q.db
	job := q.job(t, storage.ComplianceTypeTweets, nil)
	if _, started, err := q.db.StartComplianceJob(t.Context(), job.ID, q.now.Add(-5*time.Minute)); err != nil || !started {
		t.Fatalf("StartComplianceJob = %v, %v", started, err)
	}
	sweeptest.HeldWork(t, q.db, tasks.ComplianceTaskID(job.ID), func() { q.tick(t, r) }, func() bool { return q.task(t, job.ID) != nil })
}
