package insights

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access of the applier (storage/postgres.DB).
type Store interface {
	ApplyInsightChanges(ctx context.Context, a storage.InsightApply) (storage.InsightBatch, error)
	HasInsightChanges(ctx context.Context) (bool, error)
}

// Applier handles insights:apply: it applies the change log batch by
// batch until it is empty, another worker holds it, or Budget is spent
// (the sweeper enqueues the task again while the log holds rows).
type Applier struct {
	Store   Store
	Counter Counter
	// BatchSize is the most changes per transaction (default 2000).
	BatchSize int
	// Budget bounds one run (default 30 s).
	Budget time.Duration
	Logger *slog.Logger
	Clock  func() time.Time
	// afterWrite stands for a worker dying inside a batch, in tests.
	afterWrite func(ctx context.Context) error
}

// ProcessTask implements asynq.Handler.
func (a *Applier) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	_, err := a.Drain(ctx)
	return err
}

// Drain applies batches until the log is empty, another worker holds it,
// or the budget is spent, and says how many changes it applied.
func (a *Applier) Drain(ctx context.Context) (int, error) {
	start := a.now()
	total, batches := 0, 0
	var lag time.Duration
	defer func() {
		if total > 0 {
			logctx.OrDefault(a.Logger).InfoContext(ctx, "insights applied", "changes", total, "batches", batches,
				"lag", lag.Round(time.Millisecond), "took", a.now().Sub(start).Round(time.Millisecond))
		}
	}()
	for a.now().Sub(start) < a.budget() {
		b, err := a.Store.ApplyInsightChanges(ctx, storage.InsightApply{
			Limit: a.batchSize(), Compute: a.Counter.Deltas, AfterWrite: a.afterWrite,
		})
		if err != nil {
			return total, fmt.Errorf("apply insight changes after %d: %w", total, err)
		}
		if b.Busy || b.Changes == 0 {
			return total, nil
		}
		total += b.Changes
		batches++
		lag = max(lag, a.now().Sub(b.Oldest))
	}
	return total, nil
}

func (a *Applier) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

func (a *Applier) budget() time.Duration {
	if a.Budget > 0 {
		return a.Budget
	}
	return 30 * time.Second
}

func (a *Applier) batchSize() int {
	if a.BatchSize > 0 {
		return a.BatchSize
	}
	return 2000
}
