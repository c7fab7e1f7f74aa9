package insights

import (
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// Interval is how often the sweeper looks at the change log: the lag of
// the aggregates behind the posts is about one interval plus a batch.
const Interval = time.Second

// Sweep is the sweep source of the change log: while it holds rows, it
// enqueues an insights:apply each tick (one task id per second, so a run
// orphaned by a killed worker, still "active" until asynq recovers it,
// never holds the next back; a run that finds another applying ends at
// once). The log is the record: a task lost with Redis, or archived after
// its retries, is simply enqueued again.
func Sweep(store Store, inspector sweep.TaskRemover, log *slog.Logger) *sweep.Singleton {
	return &sweep.Singleton{Label: "insights", Pending: store.HasInsightChanges, Tasks: inspector, Logger: log,
		Work: func(now time.Time) *sweep.Work {
			return &sweep.Work{Task: tasks.NewInsightsApply(now), Queue: tasks.QueueInsights, TaskID: tasks.InsightsApplyTaskID(now)}
		}}
}
