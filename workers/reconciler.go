package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
)

// ReconcileStore is the record access the reconciler needs.
type ReconcileStore interface {
	ComplianceJobsToReconcile(ctx context.Context, staleBefore time.Time, limit int) ([]storage.ComplianceJob, error)
	MarkComplianceChecked(ctx context.Context, ids []int64, at time.Time) error
	MarkComplianceEnqueued(ctx context.Context, id int64, at time.Time) error
	FailComplianceJob(ctx context.Context, id int64, reason string, at time.Time) error
}

// Enqueuer hands tasks to the queue (*asynq.Client).
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// TaskInspector reads and removes queued tasks (*asynq.Inspector).
type TaskInspector interface {
	GetTaskInfo(queue, id string) (*asynq.TaskInfo, error)
	DeleteTask(queue, id string) error
}

// Locker grants a short lease so only one reconciler of a fleet works per tick.
type Locker interface {
	Acquire(ctx context.Context, name string, ttl time.Duration) (release func(), ok bool, err error)
}

// Reconciler keeps compliance job records and queue tasks from diverging.
// Each tick it: notices uploads of created jobs (Stat on the upload key) and
// enqueues their task; fails created jobs whose upload window expired;
// re-enqueues open jobs whose task was lost (Redis down or wiped) or whose
// worker stopped heartbeating; fails jobs whose task was archived. Enqueueing
// uses the job id as task id, so running it on every worker replica is safe.
type Reconciler struct {
	Store      ReconcileStore
	Blobs      blob.Store
	Queue      Enqueuer
	Inspector  TaskInspector
	Locker     Locker
	Logger     *slog.Logger
	Clock      func() time.Time
	Interval   time.Duration // between ticks (default 2 s)
	StaleAfter time.Duration // heartbeat/enqueue age that counts as lost (default 60 s)
	BatchSize  int           // jobs examined per tick (default 500)
	// UploadGrace is how long after upload_expires_at a created job waits
	// before it fails: a PUT that began before expiry may still be arriving
	// (servers check the signature when a request starts). Default 15 min.
	UploadGrace time.Duration
	// TickTimeout bounds one tick, so a hung dependency cannot stall the
	// reconciler (default 30 s).
	TickTimeout time.Duration

	once  sync.Once
	nudge chan struct{}
}

// defaults fills unset fields once, before any goroutine uses them.
func (r *Reconciler) defaults() { r.once.Do(r.setDefaults) }

func (r *Reconciler) setDefaults() {
	if r.UploadGrace <= 0 {
		r.UploadGrace = 15 * time.Minute
	}
	if r.TickTimeout <= 0 {
		r.TickTimeout = 30 * time.Second
	}
	if r.Interval <= 0 {
		r.Interval = 2 * time.Second
	}
	if r.StaleAfter <= 0 {
		r.StaleAfter = 60 * time.Second
	}
	if r.BatchSize <= 0 {
		r.BatchSize = 500
	}
	if r.Clock == nil {
		r.Clock = time.Now
	}
	r.nudge = make(chan struct{}, 1)
}

// Nudge asks for a tick as soon as possible (an upload notification arrived).
func (r *Reconciler) Nudge() {
	r.defaults()
	select {
	case r.nudge <- struct{}{}:
	default:
	}
}

// Run ticks until ctx is done.
func (r *Reconciler) Run(ctx context.Context) {
	r.defaults()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastWarn time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-r.nudge:
		}
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil && time.Since(lastWarn) > 30*time.Second {
			lastWarn = time.Now()
			r.Logger.WarnContext(ctx, "compliance reconcile tick failed; retrying", "err", err)
		}
		timer.Reset(r.Interval)
	}
}

// Tick runs one reconciliation pass.
func (r *Reconciler) Tick(ctx context.Context) error {
	r.defaults()
	ctx, cancel := context.WithTimeout(ctx, r.TickTimeout)
	defer cancel()
	if r.Locker != nil {
		release, ok, err := r.Locker.Acquire(ctx, "reconcile:compliance", r.Interval*5+10*time.Second)
		if err != nil {
			return fmt.Errorf("acquire reconcile lock: %w", err)
		}
		if !ok {
			return nil
		}
		defer release()
	}
	now := r.Clock().UTC()
	jobs, err := r.Store.ComplianceJobsToReconcile(ctx, now.Add(-r.StaleAfter), r.BatchSize)
	if err != nil {
		return err
	}
	var firstErr error
	checked := make([]int64, 0, len(jobs))
	for _, job := range jobs {
		checked = append(checked, job.ID)
		if err := r.reconcile(ctx, job, now); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("reconcile job %d: %w", job.ID, err)
		}
	}
	if len(checked) > 0 {
		if err := r.Store.MarkComplianceChecked(ctx, checked, now); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

func (r *Reconciler) reconcile(ctx context.Context, job storage.ComplianceJob, now time.Time) error {
	if job.Status == storage.JobInProgress {
		return r.enqueue(ctx, job, now)
	}
	_, err := r.Blobs.Stat(ctx, job.UploadKey)
	switch {
	case err == nil:
		return r.enqueue(ctx, job, now)
	case !errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("look for upload: %w", err)
	case now.After(job.UploadExpiresAt.Add(r.UploadGrace)):
		reason := fmt.Sprintf("No file was uploaded before the upload URL expired at %s.", job.UploadExpiresAt.UTC().Format(time.RFC3339))
		failJob(ctx, r.Store, r.Blobs, r.Logger, job, reason, now)
		r.Logger.InfoContext(ctx, "compliance job failed: upload window expired", "job_id", job.ID)
	}
	return nil
}

// enqueue hands the job's task to the queue; a task that already exists is
// inspected instead (archived means it will never run again).
func (r *Reconciler) enqueue(ctx context.Context, job storage.ComplianceJob, now time.Time) error {
	task, err := tasks.NewComplianceProcess(job.ID)
	if err != nil {
		return err
	}
	_, err = r.Queue.EnqueueContext(ctx, task)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return r.existing(ctx, job, now)
	}
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	r.Logger.InfoContext(ctx, "compliance job enqueued", "job_id", job.ID, "status", job.Status)
	return r.Store.MarkComplianceEnqueued(ctx, job.ID, now)
}

func (r *Reconciler) existing(ctx context.Context, job storage.ComplianceJob, now time.Time) error {
	if r.Inspector == nil {
		return r.Store.MarkComplianceEnqueued(ctx, job.ID, now)
	}
	id := tasks.ComplianceTaskID(job.ID)
	info, err := r.Inspector.GetTaskInfo(tasks.QueueCompliance, id)
	if err != nil {
		return fmt.Errorf("inspect task %s: %w", id, err)
	}
	switch info.State {
	case asynq.TaskStateArchived:
		r.Logger.ErrorContext(ctx, "compliance task archived; failing job", "job_id", job.ID, "attempts", info.Retried+1, "last_err", info.LastErr)
		failJob(ctx, r.Store, r.Blobs, r.Logger, job, failedAfterRetries(job.ID, info.Retried+1), now)
		return nil
	case asynq.TaskStateCompleted:
		// The task ran but the job is still open (its final write was lost):
		// drop the finished task so the next tick enqueues a fresh one.
		return r.Inspector.DeleteTask(tasks.QueueCompliance, id)
	}
	return r.Store.MarkComplianceEnqueued(ctx, job.ID, now)
}
