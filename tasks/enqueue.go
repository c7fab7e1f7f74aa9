package tasks

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
)

// Enqueuer hands tasks to the queue (*asynq.Client satisfies it): the one
// interface the API tier's features and the workers' sweepers enqueue
// through.
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// EnqueueTimeout bounds handing the task of committed work to Redis: the
// work is recorded, so a slow Redis only delays it until its sweeper
// picks it up.
const EnqueueTimeout = 2 * time.Second

// EnqueueRecorded is enqueue-after-commit (docs/architecture.md, "Batches:
// record, sweep, apply"): it hands q the task of work already committed
// (task builds it) so the work starts at once, within EnqueueTimeout and
// whether or not the request that recorded it is still there. The task id
// is the record's, so a task already queued (by a retry, or the sweeper)
// is a harmless conflict; any other failure is logged at Warn with what
// (the work, as "enqueue <what>") and attrs, and leaves the record to its
// kind's sweeper: nothing recorded is lost. A nil q enqueues nothing (the
// sweepers do).
func EnqueueRecorded(ctx context.Context, q Enqueuer, log *slog.Logger, what string, task func() (*asynq.Task, error), attrs ...any) {
	if q == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), EnqueueTimeout)
	defer cancel()
	t, err := task()
	if err == nil {
		_, err = q.EnqueueContext(ctx, t)
	}
	if err == nil || errors.Is(err, asynq.ErrTaskIDConflict) {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.WarnContext(ctx, "enqueue "+what+"; the sweeper will enqueue it", append(attrs, "err", err)...)
}
