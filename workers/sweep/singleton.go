package sweep

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
)

// TaskRemover deletes a queued task (*asynq.Inspector).
type TaskRemover interface {
	DeleteTask(queue, id string) error
}

// Singleton is a Source that keeps a task queued while Pending says there
// is work (always, when Pending is nil: a scheduled task); Work names the
// task, with a fixed id (one at a time) or one per time slot. The work's record is elsewhere (a log, the aggregates), so a task
// lost with Redis is simply enqueued again, and one archived after its
// retries is removed so that the next tick enqueues a fresh one. The task
// should keep no retention: the tick after a run then enqueues the next.
type Singleton struct {
	// Label is the source's name (lease and logs).
	Label string
	// Pending reports whether there is work; nil: always.
	Pending func(ctx context.Context) (bool, error)
	// Work is the task to keep queued at now.
	Work   func(now time.Time) *Work
	Tasks  TaskRemover
	Logger *slog.Logger
}

var _ Source[string] = (*Singleton)(nil)

// Name implements Source.
func (s *Singleton) Name() string { return s.Label }

// Due implements Source: the one item, when there is work.
func (s *Singleton) Due(ctx context.Context, _ time.Time, _ int) ([]string, error) {
	if s.Pending != nil {
		ok, err := s.Pending(ctx)
		if err != nil || !ok {
			return nil, err
		}
	}
	return []string{s.Label}, nil
}

// Check implements Source.
func (s *Singleton) Check(_ context.Context, _ string, now time.Time) (*Work, error) {
	return s.Work(now), nil
}

// Enqueued implements Source.
func (s *Singleton) Enqueued(context.Context, string, time.Time) error { return nil }

// Abandoned implements Source: the archived task is removed, so the next
// tick enqueues a fresh one.
func (s *Singleton) Abandoned(ctx context.Context, _ string, info *asynq.TaskInfo, _ time.Time) error {
	logctx.OrDefault(s.Logger).WarnContext(ctx, "task archived; enqueueing a new one", "source", s.Label, "task_id", info.ID, "last_err", info.LastErr)
	if s.Tasks == nil {
		return nil
	}
	return s.Tasks.DeleteTask(info.Queue, info.ID)
}

// Swept implements Source.
func (s *Singleton) Swept(context.Context, []string, time.Time) error { return nil }
