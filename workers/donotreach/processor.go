// Package donotreach is the worker side of do-not-reach lists
// (docs/ads-do-not-reach.md): NewProcessor applies recorded users batches
// (donotreach:apply_batch) through sweep.BatchProcessor; sweep.Batches is
// their sweep source and sweep.Expiry removes expired entries (wired in
// cmd).
package donotreach

import (
	"context"
	"log/slog"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Store is the record access the Processor needs (storage/postgres.DB
// satisfies it).
type Store interface {
	// ApplyDoNotReachBatch applies a batch, and the unapplied batches of
	// its list recorded before it, in one transaction.
	ApplyDoNotReachBatch(ctx context.Context, id string) (storage.DoNotReachApplied, error)
	sweep.BatchFailer
}

// NewProcessor is the handler of TypeDoNotReachApply tasks. Applying is
// one transaction that skips a batch already applied, so a retry, a
// duplicate task or a worker killed mid-batch never counts an entry twice.
// A batch whose task will not run again is FAILED: no longer swept, its
// list PROCESSING until a later batch of the list applies it (batches
// apply in order).
func NewProcessor(store Store, log *slog.Logger) *sweep.BatchProcessor {
	return &sweep.BatchProcessor{Kind: storage.DoNotReachBatches, Task: tasks.DoNotReachBatch, Store: store, Logger: log,
		Apply: func(ctx context.Context, id string) ([]any, error) {
			res, err := store.ApplyDoNotReachBatch(ctx, id)
			return []any{"batches", res.Batches, "added", res.Added, "removed", res.Removed}, err
		}}
}
