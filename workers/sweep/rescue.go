package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// RescueInterval is how often a fleet looks for lapsed task leases (one
// small query on a table of one row per running task).
const RescueInterval = time.Second

// RescueStore lists and forgets lapsed task leases (storage/postgres.DB).
type RescueStore interface {
	LapsedTaskLeases(ctx context.Context, limit int) ([]storage.TaskLease, error)
	ForgetTaskLease(ctx context.Context, taskID, holder string) error
}

// Rescue is the sweep source of killed runs (docs/outages.md, "A killed
// worker's task comes back within seconds"). A run of a leased task (Hold)
// renews its lease every TaskHeartbeat; a lease that lapsed without a
// release is a run whose worker died. asynq still lists that task active
// and hands it back only when its own lease recovery gets to it, a minute
// or two later, and until then an enqueue of its id conflicts. So Rescue
// enqueues a copy of the dead run's task (type, payload, queue, retry and
// timeout options, read from asynq) under a derived id, RescueTaskID: the
// copy's run holds the lease of the same logical task id, so the original,
// when asynq runs it again, finds the lease held or the work done and does
// nothing twice.
//
// A lapsed run whose task asynq no longer lists as active (it was handed
// back, it ended, or Redis lost it) is forgotten: asynq runs it again by
// itself, or the record's own sweeper enqueues it.
type Rescue struct {
	Store  RescueStore
	Tasks  Inspector
	Logger *slog.Logger
}

var _ Source[storage.TaskLease] = (*Rescue)(nil)

// Name implements Source.
func (r *Rescue) Name() string { return "task-leases" }

// Due implements Source: lapsed leases of runs, longest lapsed first.
func (r *Rescue) Due(ctx context.Context, _ time.Time, limit int) ([]storage.TaskLease, error) {
	return r.Store.LapsedTaskLeases(ctx, limit)
}

// Check implements Source: the rescue of a run asynq still lists active.
func (r *Rescue) Check(ctx context.Context, l storage.TaskLease, _ time.Time) (*Work, error) {
	info, err := r.Tasks.GetTaskInfo(l.Queue, l.RunID)
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		return nil, r.forget(ctx, l, "its task is gone")
	case err != nil:
		return nil, fmt.Errorf("inspect task %s of lapsed lease %s: %w", l.RunID, l.TaskID, err)
	case info.State != asynq.TaskStateActive:
		return nil, r.forget(ctx, l, "its task is "+info.State.String())
	}
	// Each rescue spends an attempt of the task's retry budget, as asynq's
	// own lease recovery would: a task that kills its worker every run is
	// not rescued forever; once spent, asynq's recovery archives it and
	// the record's sweeper settles it (Abandoned).
	left := info.MaxRetry - info.Retried - 1
	if left < 0 {
		return nil, r.forget(ctx, l, "its retries are spent")
	}
	id := RescueTaskID(l.TaskID, l.Holder)
	logctx.OrDefault(r.Logger).DebugContext(ctx, "task run lost its worker; rescuing it", "task_id", l.TaskID,
		"run_id", l.RunID, "holder", l.Holder, "lapsed_at", l.ExpiresAt, "rescue_id", id)
	return &Work{Task: rescueTask(info, id, left), Queue: info.Queue, TaskID: id}, nil
}

// rescueTask is a copy of info's task under id with maxRetry retries
// left.
func rescueTask(info *asynq.TaskInfo, id string, maxRetry int) *asynq.Task {
	opts := []asynq.Option{asynq.Queue(info.Queue), asynq.TaskID(id), asynq.MaxRetry(maxRetry)}
	if info.Timeout > 0 {
		opts = append(opts, asynq.Timeout(info.Timeout))
	}
	if !info.Deadline.IsZero() {
		opts = append(opts, asynq.Deadline(info.Deadline))
	}
	if info.Retention > 0 {
		opts = append(opts, asynq.Retention(info.Retention))
	}
	return asynq.NewTaskWithHeaders(info.Type, info.Payload, info.Headers, opts...)
}

// forget deletes a lapsed lease that needs no rescue (a lapsed lease is as
// free as none), so it is not looked at again.
func (r *Rescue) forget(ctx context.Context, l storage.TaskLease, why string) error {
	logctx.OrDefault(r.Logger).DebugContext(ctx, "lapsed task lease forgotten", "task_id", l.TaskID, "run_id", l.RunID, "why", why)
	return r.Store.ForgetTaskLease(ctx, l.TaskID, l.Holder)
}

// Enqueued implements Source: the lease stays lapsed until the rescue's
// run claims it; the rescue's id makes a later enqueue of it a no-op.
func (r *Rescue) Enqueued(context.Context, storage.TaskLease, time.Time) error { return nil }

// Abandoned implements Source: the rescue itself ran out of retries
// without ever claiming the lease; the record's own sweeper settles it.
func (r *Rescue) Abandoned(ctx context.Context, l storage.TaskLease, info *asynq.TaskInfo, _ time.Time) error {
	logctx.OrDefault(r.Logger).ErrorContext(ctx, "task rescue archived", "task_id", l.TaskID, "rescue_id", info.ID, "last_err", info.LastErr)
	return r.Store.ForgetTaskLease(ctx, l.TaskID, l.Holder)
}

// Swept implements Source.
func (r *Rescue) Swept(context.Context, []storage.TaskLease, time.Time) error { return nil }
