package donotreach

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// SweepStore is the record access Batches needs.
type SweepStore interface {
	DoNotReachBatchesDue(ctx context.Context, now time.Time, limit int) ([]storage.DoNotReachBatch, error)
	MarkDoNotReachBatchesSwept(ctx context.Context, ids []string, now time.Time) error
	FailDoNotReachBatch(ctx context.Context, id string, now time.Time) error
}

// Batches is the sweep source of recorded batches: each tick it has the
// task of every batch not applied yet enqueued again (the API's enqueue
// failed, or Redis lost the task), so nothing recorded is lost.
type Batches struct {
	Store  SweepStore
	Logger *slog.Logger
}

var _ sweep.Source[storage.DoNotReachBatch] = (*Batches)(nil)

// Name implements sweep.Source.
func (s *Batches) Name() string { return "donotreach-batches" }

// Due implements sweep.Source: unapplied batches, least recently swept
// first.
func (s *Batches) Due(ctx context.Context, now time.Time, limit int) ([]storage.DoNotReachBatch, error) {
	return s.Store.DoNotReachBatchesDue(ctx, now, limit)
}

// Check implements sweep.Source: every due batch needs its task.
func (s *Batches) Check(_ context.Context, b storage.DoNotReachBatch, _ time.Time) (*sweep.Work, error) {
	task, err := tasks.NewDoNotReachApply(b.ID)
	if err != nil {
		return nil, err
	}
	return &sweep.Work{Task: task, Queue: tasks.QueueAudiences, TaskID: tasks.DoNotReachTaskID(b.ID)}, nil
}

// Enqueued implements sweep.Source.
func (s *Batches) Enqueued(ctx context.Context, b storage.DoNotReachBatch, now time.Time) error {
	return s.Store.MarkDoNotReachBatchesSwept(ctx, []string{b.ID}, now)
}

// Abandoned implements sweep.Source: a batch whose retries ran out is
// recorded failed and no longer swept; its list stays PROCESSING until a
// later batch of the list applies it (batches apply in order).
func (s *Batches) Abandoned(ctx context.Context, b storage.DoNotReachBatch, info *asynq.TaskInfo, now time.Time) error {
	logctx.OrDefault(s.Logger).ErrorContext(ctx, "do-not-reach batch task archived", "batch_id", b.ID, "list_id", b.ListID,
		"attempts", info.Retried+1, "last_err", info.LastErr)
	return s.Store.FailDoNotReachBatch(ctx, b.ID, now)
}

// Swept implements sweep.Source.
func (s *Batches) Swept(ctx context.Context, items []storage.DoNotReachBatch, now time.Time) error {
	ids := make([]string, len(items))
	for i, b := range items {
		ids[i] = b.ID
	}
	return s.Store.MarkDoNotReachBatchesSwept(ctx, ids, now)
}
