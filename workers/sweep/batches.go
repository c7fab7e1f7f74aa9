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
	"github.com/aviary-dev/aviary/tasks"
)

// BatchStore is the batch table access of the sweep and the apply
// handlers (storage/postgres.DB): one implementation for every kind.
type BatchStore interface {
	// BatchesDue lists pending batches of kind old enough to be stuck,
	// least recently swept first.
	BatchesDue(ctx context.Context, kind storage.BatchKind, now time.Time, limit int) ([]storage.Batch, error)
	// MarkBatchesSwept records that the sweep looked at them.
	MarkBatchesSwept(ctx context.Context, kind storage.BatchKind, ids []string, now time.Time) error
	BatchFailer
}

// BatchFailer fails a pending batch (its task will not run again).
type BatchFailer interface {
	FailBatch(ctx context.Context, kind storage.BatchKind, id, reason string) error
}

// Batches is the sweep source of one kind of recorded batches
// (docs/architecture.md, "Batches: record, sweep, apply"): each tick it
// has the task of every batch still pending after the kind's grace
// enqueued again (the API's enqueue failed, or Redis lost the task), and
// fails a batch whose task was archived. Run its Sweeper with Leases so a
// batch whose run holds its task's lease is never enqueued twice.
type Batches struct {
	Kind storage.BatchKind
	// Task is the kind's apply task.
	Task   tasks.BatchTask
	Store  BatchStore
	Logger *slog.Logger
}

var _ Source[storage.Batch] = (*Batches)(nil)

// Name implements Source.
func (s *Batches) Name() string { return string(s.Kind) }

// Due implements Source.
func (s *Batches) Due(ctx context.Context, now time.Time, limit int) ([]storage.Batch, error) {
	return s.Store.BatchesDue(ctx, s.Kind, now, limit)
}

// Check implements Source: a pending batch needs its task.
func (s *Batches) Check(_ context.Context, b storage.Batch, _ time.Time) (*Work, error) {
	task, err := s.Task.New(b.ID)
	if err != nil {
		return nil, err
	}
	return &Work{Task: task, Queue: s.Task.Queue, TaskID: s.Task.TaskID(b.ID)}, nil
}

// Enqueued implements Source.
func (s *Batches) Enqueued(ctx context.Context, b storage.Batch, now time.Time) error {
	return s.Store.MarkBatchesSwept(ctx, s.Kind, []string{b.ID}, now)
}

// Abandoned implements Source: the batch fails as when its retries ran
// out.
func (s *Batches) Abandoned(ctx context.Context, b storage.Batch, info *asynq.TaskInfo, _ time.Time) error {
	logctx.OrDefault(s.Logger).ErrorContext(ctx, "batch task archived; failing the batch", "kind", s.Kind, "batch_id", b.ID, "owner", b.Owner,
		"attempts", info.Retried+1, "last_err", info.LastErr)
	return s.Store.FailBatch(ctx, s.Kind, b.ID, "task archived: "+info.LastErr)
}

// Swept implements Source.
func (s *Batches) Swept(ctx context.Context, items []storage.Batch, now time.Time) error {
	ids := make([]string, len(items))
	for i, b := range items {
		ids[i] = b.ID
	}
	return s.Store.MarkBatchesSwept(ctx, s.Kind, ids, now)
}

// BatchProcessor is the apply handler of one kind of batches
// (docs/architecture.md, "Batches: record, sweep, apply"): it runs Apply
// on the task's batch, one transaction of the store's that claims the
// batch, applies it and settles it; a batch gone (storage.ErrNotFound: its
// owner went with its account) ends the task, any other error is retried,
// and FinalFailure fails the batch once its task will not run again.
type BatchProcessor struct {
	Kind  storage.BatchKind
	Task  tasks.BatchTask
	Store BatchFailer
	// Apply applies batch id and returns what to log of it.
	Apply  func(ctx context.Context, id string) ([]any, error)
	Logger *slog.Logger
}

// ProcessTask implements asynq.Handler.
func (p *BatchProcessor) ProcessTask(ctx context.Context, t *asynq.Task) error {
	payload, err := p.Task.Parse(t)
	if err != nil {
		return err
	}
	start := time.Now()
	attrs, err := p.Apply(ctx, payload.BatchID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		logctx.OrDefault(p.Logger).WarnContext(ctx, "batch gone", "kind", p.Kind, "batch_id", payload.BatchID)
		return nil
	case err != nil:
		return fmt.Errorf("apply %s %s: %w", p.Kind, payload.BatchID, err)
	}
	logctx.OrDefault(p.Logger).InfoContext(ctx, "batch applied", append([]any{"kind", p.Kind, "batch_id", payload.BatchID, "took", time.Since(start)}, attrs...)...)
	return nil
}

// FinalFailure marks the task's batch FAILED once it will not run again
// (attempts runs, the last ending in err); a settled one stays as it is.
func (p *BatchProcessor) FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error) {
	payload, perr := p.Task.Parse(t)
	if perr != nil || t.Type() != p.Task.Type {
		return
	}
	reason := fmt.Sprintf("not applied after %d attempts: %v", attempts, err)
	if ferr := p.Store.FailBatch(ctx, p.Kind, payload.BatchID, reason); ferr != nil {
		logctx.OrDefault(p.Logger).ErrorContext(ctx, "mark batch failed after its last attempt", "kind", p.Kind, "batch_id", payload.BatchID, "err", ferr)
	}
}
