// Package audiences applies custom audience users batches recorded by the
// API (tasks.TypeAudienceApplyBatch) and sweeps the batches whose task was
// lost. See docs/ads-audiences.md.
package audiences

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

// Store is what the processor needs of storage (*postgres.DB).
type Store interface {
	// ApplyAudienceBatch applies a pending batch in one transaction (check
	// refusing it marks it failed instead).
	ApplyAudienceBatch(ctx context.Context, batchID string, check func([]storage.AudienceOperation) error) (storage.AudienceBatchResult, error)
	// FailAudienceBatch marks a pending batch failed.
	FailAudienceBatch(ctx context.Context, batchID, reason string) error
}

// Processor handles TypeAudienceApplyBatch: it checks the batch's content
// (CheckContent) and applies it in one transaction. A batch whose content
// fails is marked FAILED and the task ends without retry; any other error
// is returned so asynq retries, and FinalFailure marks the batch FAILED
// when the retries are used up (its audience stops showing PROCESSING).
type Processor struct {
	Store  Store
	Logger *slog.Logger
}

// ProcessTask implements asynq.Handler.
func (p *Processor) ProcessTask(ctx context.Context, t *asynq.Task) error {
	payload, err := tasks.ParseAudienceApplyBatch(t)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := p.Store.ApplyAudienceBatch(ctx, payload.BatchID, CheckContent)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		logctx.OrDefault(p.Logger).WarnContext(ctx, "audience batch gone", "batch_id", payload.BatchID)
		return nil
	case err != nil:
		return fmt.Errorf("apply audience batch %s: %w", payload.BatchID, err)
	case res.Skipped:
		logctx.OrDefault(p.Logger).InfoContext(ctx, "audience batch already settled", "batch_id", payload.BatchID)
	case res.Failed:
		logctx.OrDefault(p.Logger).WarnContext(ctx, "audience batch refused by the content checks", "batch_id", payload.BatchID,
			"custom_audience_id", res.Audience, "reason", res.Failure)
		return fmt.Errorf("audience batch %s: %s: %w", payload.BatchID, res.Failure, tasks.ErrClientInput)
	default:
		logctx.OrDefault(p.Logger).InfoContext(ctx, "audience batch applied", "batch_id", payload.BatchID, "custom_audience_id", res.Audience,
			"added", res.Added, "removed", res.Removed, "merged", res.Merged, "audience_size", res.SizeNow, "took", time.Since(start))
	}
	return nil
}

// FinalFailure marks the task's batch FAILED once it will not run again.
// A batch already settled (applied, or failed by its checks) stays.
func (p *Processor) FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error) {
	if t.Type() != tasks.TypeAudienceApplyBatch {
		return
	}
	payload, perr := tasks.ParseAudienceApplyBatch(t)
	if perr != nil {
		return
	}
	reason := fmt.Sprintf("not applied after %d attempts: %v", attempts, err)
	if ferr := p.Store.FailAudienceBatch(ctx, payload.BatchID, reason); ferr != nil {
		logctx.OrDefault(p.Logger).ErrorContext(ctx, "mark audience batch failed after its last attempt", "batch_id", payload.BatchID, "err", ferr)
	}
}
