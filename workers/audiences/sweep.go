package audiences

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

// SweepStore is what the sweep needs of storage (*postgres.DB).
type SweepStore interface {
	// AudienceBatchesDue lists pending batches old enough to be stuck.
	AudienceBatchesDue(ctx context.Context, now time.Time, limit int) ([]storage.AudienceBatch, error)
	// MarkAudienceBatchesSwept records that the sweep looked at them.
	MarkAudienceBatchesSwept(ctx context.Context, ids []string, now time.Time) error
	// FailAudienceBatch marks a pending batch failed.
	FailAudienceBatch(ctx context.Context, batchID, reason string) error
}

// Sweep is the batches' sweep source: each tick it has the task of every
// batch still pending a few seconds after it was recorded enqueued again
// (the API's enqueue failed, or Redis lost the task), and fails a batch
// whose task was archived.
type Sweep struct {
	Store  SweepStore
	Logger *slog.Logger
}

var _ sweep.Source[storage.AudienceBatch] = (*Sweep)(nil)

// Name implements sweep.Source.
func (s *Sweep) Name() string { return "custom-audience-batches" }

// Due implements sweep.Source.
func (s *Sweep) Due(ctx context.Context, now time.Time, limit int) ([]storage.AudienceBatch, error) {
	return s.Store.AudienceBatchesDue(ctx, now, limit)
}

// Check implements sweep.Source: a pending batch needs its task.
func (s *Sweep) Check(_ context.Context, b storage.AudienceBatch, _ time.Time) (*sweep.Work, error) {
	task, err := tasks.NewAudienceApplyBatch(b.ID)
	if err != nil {
		return nil, err
	}
	return &sweep.Work{Task: task, Queue: tasks.QueueAudiences, TaskID: tasks.AudienceBatchTaskID(b.ID)}, nil
}

// Enqueued implements sweep.Source.
func (s *Sweep) Enqueued(ctx context.Context, b storage.AudienceBatch, now time.Time) error {
	return s.Store.MarkAudienceBatchesSwept(ctx, []string{b.ID}, now)
}

// Abandoned implements sweep.Source: the batch fails as when its retries
// ran out.
func (s *Sweep) Abandoned(ctx context.Context, b storage.AudienceBatch, info *asynq.TaskInfo, _ time.Time) error {
	logctx.OrDefault(s.Logger).ErrorContext(ctx, "audience batch task archived; failing batch", "batch_id", b.ID, "last_err", info.LastErr)
	return s.Store.FailAudienceBatch(ctx, b.ID, "task archived: "+info.LastErr)
}

// Swept implements sweep.Source.
func (s *Sweep) Swept(ctx context.Context, items []storage.AudienceBatch, now time.Time) error {
	ids := make([]string, len(items))
	for i, b := range items {
		ids[i] = b.ID
	}
	return s.Store.MarkAudienceBatchesSwept(ctx, ids, now)
}
