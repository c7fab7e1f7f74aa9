package webhooks

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

// ReplayStore is the record access of replay jobs (storage/postgres.DB).
type ReplayStore interface {
	// RunWebhookReplay starts a queued job in one transaction: the copies
	// of the window's live post deliveries in event order, the status
	// delivery, the job running, pg_notify. ran is false for a job that
	// was not queued (a repeated run does nothing).
	RunWebhookReplay(ctx context.Context, id int64) (storage.WebhookReplayJob, bool, error)
	// AbandonWebhookReplay ends a job still queued as incomplete.
	AbandonWebhookReplay(ctx context.Context, id int64, now time.Time) (bool, error)
}

// Replayer handles tasks.TypeWebhookReplay (docs/webhooks.md, "Replay"):
// the deliverers then send the copies and the replay_job_status event in
// the webhook's queue order.
type Replayer struct {
	Store  ReplayStore
	Logger *slog.Logger
	Clock  func() time.Time
}

// ProcessTask implements asynq.Handler. A job that is gone (its webhook's
// app was removed) needs nothing.
func (r *Replayer) ProcessTask(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseWebhookReplay(t)
	if err != nil {
		return err
	}
	job, ran, err := r.Store.RunWebhookReplay(ctx, p.JobID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		logctx.OrDefault(r.Logger).InfoContext(ctx, "webhook replay job gone; nothing to run", "job_id", p.JobID)
		return nil
	case err != nil:
		return fmt.Errorf("run webhook replay job %d: %w", p.JobID, err)
	case ran:
		logctx.OrDefault(r.Logger).InfoContext(ctx, "webhook replay job queued its deliveries", "job_id", job.ID,
			"webhook_id", job.WebhookID, "events", job.Events, "from", job.From, "to", job.To)
	default:
		logctx.OrDefault(r.Logger).DebugContext(ctx, "webhook replay job already started", "job_id", job.ID, "state", job.State)
	}
	return nil
}

// FinalFailure implements workers.FinalFailer: a job whose task will not
// run again ends incomplete, so the webhook may have another.
func (r *Replayer) FinalFailure(ctx context.Context, t *asynq.Task, attempts int, err error) {
	p, perr := tasks.ParseWebhookReplay(t)
	if perr != nil {
		return
	}
	if _, aerr := r.Store.AbandonWebhookReplay(ctx, p.JobID, r.now()); aerr != nil {
		logctx.OrDefault(r.Logger).ErrorContext(ctx, "end failed webhook replay job", "job_id", p.JobID, "err", aerr)
		return
	}
	logctx.OrDefault(r.Logger).ErrorContext(ctx, "webhook replay job failed; ended incomplete", "job_id", p.JobID,
		"attempts", attempts, "err", err)
}

func (r *Replayer) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}
