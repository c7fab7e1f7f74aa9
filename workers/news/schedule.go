package news

import (
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Interval is how often Schedule enqueues news:refresh: stories follow
// the aggregates about a minute behind.
const Interval = time.Minute

// Schedule is the sweep source that keeps news:refresh running: every
// tick it wants the task queued. The task id is fixed and the task keeps
// no retention, so a tick while a run is queued or active changes
// nothing, and the tick after a run enqueues the next one.
func Schedule(inspector sweep.TaskRemover, log *slog.Logger) *sweep.Singleton {
	return &sweep.Singleton{Label: "news", Tasks: inspector, Logger: log,
		Work: func(time.Time) *sweep.Work {
			return &sweep.Work{Task: tasks.NewNewsRefresh(), Queue: tasks.QueueInsights, TaskID: tasks.NewsRefreshTaskID}
		}}
}

// NewSweeper is the sweeper that runs Schedule every interval (Interval
// when 0), under the fleet's lease so one replica enqueues per tick. Its
// enqueues are routine (logged at debug).
func NewSweeper(queue tasks.Enqueuer, inspector sweep.Inspector, locker sweep.Locker, interval time.Duration, log *slog.Logger) *sweep.Sweeper[string] {
	if interval <= 0 {
		interval = Interval
	}
	return &sweep.Sweeper[string]{
		Source: Schedule(inspector, log),
		Queue:  queue, Inspector: inspector, Locker: locker,
		Logger: log, Interval: interval, Routine: true,
	}
}
