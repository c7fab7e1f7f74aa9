package news

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Interval is how often Schedule enqueues news:refresh: stories follow
// the aggregates about a minute behind.
const Interval = time.Minute

// TaskRemover deletes an archived task (*asynq.Inspector).
type TaskRemover interface {
	DeleteTask(queue, id string) error
}

// Schedule is the sweep source that keeps news:refresh running: every
// tick it wants the task queued. The task id is fixed and the task keeps
// no retention, so a tick while a run is queued or active changes
// nothing, and the tick after a run enqueues the next one.
type Schedule struct {
	Tasks  TaskRemover
	Logger *slog.Logger
}

var _ sweep.Source[string] = (*Schedule)(nil)

// NewSweeper is the sweeper that runs Schedule every interval (Interval
// when 0), under the fleet's lease so one replica enqueues per tick. Its
// enqueues are routine (logged at debug).
func NewSweeper(queue sweep.Enqueuer, inspector sweep.Inspector, locker sweep.Locker, interval time.Duration, log *slog.Logger) *sweep.Sweeper[string] {
	if interval <= 0 {
		interval = Interval
	}
	return &sweep.Sweeper[string]{
		Source: &Schedule{Tasks: inspector, Logger: log},
		Queue:  queue, Inspector: inspector, Locker: locker,
		Logger: log, Interval: interval, Routine: true,
	}
}

// Name implements sweep.Source.
func (s *Schedule) Name() string { return "news" }

// Due implements sweep.Source: the refresh is always due.
func (s *Schedule) Due(context.Context, time.Time, int) ([]string, error) {
	return []string{"news-refresh"}, nil
}

// Check implements sweep.Source.
func (s *Schedule) Check(context.Context, string, time.Time) (*sweep.Work, error) {
	return &sweep.Work{Task: tasks.NewNewsRefresh(), Queue: tasks.QueueInsights, TaskID: tasks.NewsRefreshTaskID}, nil
}

// Enqueued implements sweep.Source.
func (s *Schedule) Enqueued(context.Context, string, time.Time) error { return nil }

// Abandoned implements sweep.Source: a run whose retries ran out is
// removed, so the next tick enqueues a fresh one.
func (s *Schedule) Abandoned(ctx context.Context, _ string, info *asynq.TaskInfo, _ time.Time) error {
	s.logger().WarnContext(ctx, "news refresh task archived; enqueueing a new one", "last_err", info.LastErr)
	if s.Tasks == nil {
		return nil
	}
	return s.Tasks.DeleteTask(info.Queue, info.ID)
}

// Swept implements sweep.Source.
func (s *Schedule) Swept(context.Context, []string, time.Time) error { return nil }

func (s *Schedule) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
