package insights

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Interval is how often the sweeper looks at the change log: the lag of
// the aggregates behind the posts is about one interval plus a batch.
const Interval = time.Second

// TaskRemover deletes an archived task (*asynq.Inspector).
type TaskRemover interface {
	DeleteTask(queue, id string) error
}

// Sweep is the sweep source of the change log: while it holds rows, it
// wants insights:apply queued. The log is the record: a task lost with
// Redis, or archived after its retries, is simply enqueued again.
type Sweep struct {
	Store  Store
	Tasks  TaskRemover
	Logger *slog.Logger
}

var _ sweep.Source[string] = (*Sweep)(nil)

// Name implements sweep.Source.
func (s *Sweep) Name() string { return "insights" }

// Due implements sweep.Source: the log, when it holds a row.
func (s *Sweep) Due(ctx context.Context, _ time.Time, _ int) ([]string, error) {
	ok, err := s.Store.HasInsightChanges(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return []string{"insight_changes"}, nil
}

// Check implements sweep.Source.
func (s *Sweep) Check(context.Context, string, time.Time) (*sweep.Work, error) {
	return &sweep.Work{Task: tasks.NewInsightsApply(), Queue: tasks.QueueInsights, TaskID: tasks.InsightsApplyTaskID}, nil
}

// Enqueued implements sweep.Source.
func (s *Sweep) Enqueued(context.Context, string, time.Time) error { return nil }

// Abandoned implements sweep.Source: the archived task is removed, so the
// next tick enqueues a fresh one (the rows are still in the log).
func (s *Sweep) Abandoned(ctx context.Context, _ string, info *asynq.TaskInfo, _ time.Time) error {
	s.logger().ErrorContext(ctx, "insights task archived; enqueueing it again", "last_err", info.LastErr)
	if s.Tasks == nil {
		return nil
	}
	return s.Tasks.DeleteTask(info.Queue, info.ID)
}

// Swept implements sweep.Source.
func (s *Sweep) Swept(context.Context, []string, time.Time) error { return nil }

func (s *Sweep) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
