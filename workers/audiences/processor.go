// Package audiences applies custom audience users batches recorded by the
// API (tasks.TypeAudienceApplyBatch) through sweep.BatchProcessor;
// sweep.Batches is their sweep source and sweep.Expiry removes expired
// members (wired in cmd). See docs/ads-audiences.md.
package audiences

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Store is what the processor needs of storage (*postgres.DB).
type Store interface {
	// ApplyAudienceBatch applies a pending batch in one transaction (check
	// refusing it marks it failed instead).
	ApplyAudienceBatch(ctx context.Context, batchID string, check func([]storage.AudienceOperation) error) (storage.AudienceBatchResult, error)
	sweep.BatchFailer
}

// NewProcessor is the handler of TypeAudienceApplyBatch: it checks the
// batch's content (CheckContent) and applies it in one transaction. A
// batch whose content fails is marked FAILED and the task ends without
// retry; any other error is returned so asynq retries, and FinalFailure
// marks the batch FAILED when the retries are used up (its audience stops
// showing PROCESSING).
func NewProcessor(store Store, log *slog.Logger) *sweep.BatchProcessor {
	return &sweep.BatchProcessor{Kind: storage.AudienceBatches, Task: tasks.AudienceBatch, Store: store, Logger: log,
		Apply: func(ctx context.Context, id string) ([]any, error) {
			res, err := store.ApplyAudienceBatch(ctx, id, CheckContent)
			switch {
			case err != nil:
				return nil, err
			case res.Failed:
				return nil, fmt.Errorf("custom audience %s: refused by the content checks: %s: %w", res.Audience, res.Failure, tasks.ErrClientInput)
			}
			return []any{"custom_audience_id", res.Audience, "already_settled", res.Skipped, "added", res.Added, "removed", res.Removed,
				"merged", res.Merged, "audience_size", res.SizeNow}, nil
		}}
}
