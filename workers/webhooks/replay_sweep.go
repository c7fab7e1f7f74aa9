package webhooks

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

// ReplaySweepStore is the record access of the replay sweep source.
type ReplaySweepStore interface {
	WebhookReplaysDue(ctx context.Context, createdBefore time.Time, limit int) ([]storage.WebhookReplayJob, error)
	MarkWebhookReplaysSwept(ctx context.Context, ids []int64, now time.Time) error
	AbandonWebhookReplay(ctx context.Context, id int64, now time.Time) (bool, error)
}

// ReplayGrace is how old a queued job is before the sweep enqueues its
// task again: the API enqueues it at once after the commit.
const ReplayGrace = 10 * time.Second

// ReplaySweep is the sweep source of replay jobs still queued: the API's
// enqueue failed or Redis lost the task; a job whose task was archived
// ends incomplete.
type ReplaySweep struct {
	Store ReplaySweepStore
	// Grace is ReplayGrace when 0.
	Grace  time.Duration
	Logger *slog.Logger
}

var _ sweep.Source[storage.WebhookReplayJob] = (*ReplaySweep)(nil)

// Name implements sweep.Source.
func (s *ReplaySweep) Name() string { return "webhook-replays" }

// Due implements sweep.Source: queued jobs older than the grace, least
// recently swept first.
func (s *ReplaySweep) Due(ctx context.Context, now time.Time, limit int) ([]storage.WebhookReplayJob, error) {
	grace := s.Grace
	if grace <= 0 {
		grace = ReplayGrace
	}
	return s.Store.WebhookReplaysDue(ctx, now.Add(-grace), limit)
}

// Check implements sweep.Source: a queued job needs its task.
func (s *ReplaySweep) Check(_ context.Context, j storage.WebhookReplayJob, _ time.Time) (*sweep.Work, error) {
	task, err := tasks.NewWebhookReplay(j.ID)
	if err != nil {
		return nil, err
	}
	return &sweep.Work{Task: task, Queue: tasks.QueueWebhooks, TaskID: tasks.WebhookReplayTaskID(j.ID)}, nil
}

// Enqueued implements sweep.Source.
func (s *ReplaySweep) Enqueued(ctx context.Context, j storage.WebhookReplayJob, now time.Time) error {
	return s.Store.MarkWebhookReplaysSwept(ctx, []int64{j.ID}, now)
}

// Abandoned implements sweep.Source: the job ends incomplete.
func (s *ReplaySweep) Abandoned(ctx context.Context, j storage.WebhookReplayJob, info *asynq.TaskInfo, now time.Time) error {
	logctx.OrDefault(s.Logger).ErrorContext(ctx, "webhook replay task archived; ending the job incomplete", "job_id", j.ID,
		"attempts", info.Retried+1, "last_err", info.LastErr)
	_, err := s.Store.AbandonWebhookReplay(ctx, j.ID, now)
	return err
}

// Swept implements sweep.Source.
func (s *ReplaySweep) Swept(ctx context.Context, items []storage.WebhookReplayJob, now time.Time) error {
	ids := make([]int64, len(items))
	for i, j := range items {
		ids[i] = j.ID
	}
	return s.Store.MarkWebhookReplaysSwept(ctx, ids, now)
}
