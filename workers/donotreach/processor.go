// Package donotreach is the worker side of do-not-reach lists
// (docs/ads-do-not-reach.md): Processor applies recorded users batches
// (donotreach:apply_batch), Batches (a sweep source) re-enqueues batches
// whose task was lost, and Expiry (a sweep source that enqueues nothing)
// removes expired entries on its interval.
package donotreach

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

// Store is the record access the Processor needs (storage/postgres.DB
// satisfies it).
type Store interface {
	// ApplyDoNotReachBatch applies a batch, and the unapplied batches of
	// its list recorded before it, in one transaction.
	ApplyDoNotReachBatch(ctx context.Context, id string) (storage.DoNotReachApplied, error)
}

// Processor handles TypeDoNotReachApply tasks. Applying is one
// transaction that skips a batch already applied, so a retry, a duplicate
// task or a worker killed mid-batch never counts an entry twice.
type Processor struct {
	Store  Store
	Logger *slog.Logger
}

// ProcessTask implements asynq.Handler.
func (p *Processor) ProcessTask(ctx context.Context, t *asynq.Task) error {
	payload, err := tasks.ParseDoNotReachApply(t)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := p.Store.ApplyDoNotReachBatch(ctx, payload.BatchID)
	if errors.Is(err, storage.ErrNotFound) {
		// The list (and its batches) went with its account.
		logctx.OrDefault(p.Logger).WarnContext(ctx, "do-not-reach batch no longer exists", "batch_id", payload.BatchID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("apply do-not-reach batch %s: %w", payload.BatchID, err)
	}
	logctx.OrDefault(p.Logger).InfoContext(ctx, "do-not-reach batch applied", "batch_id", payload.BatchID, "batches", res.Batches,
		"added", res.Added, "removed", res.Removed, "elapsed", time.Since(start))
	return nil
}
