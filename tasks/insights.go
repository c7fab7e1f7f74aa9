package tasks

import (
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeInsightsApply applies the insights change log (the posts that
// started or stopped counting) to the keyword insights aggregates, batch by
// batch, until the log is empty or the run's budget is spent. It has no
// payload: the log is the work (docs/insights.md).
const TypeInsightsApply = "insights:apply"

// InsightsApplyTaskID is the task id of the TypeInsightsApply enqueued in
// the second of at: at most one per second. Runs never overlap in effect
// (one transaction applies at a time; another run finds the log busy and
// ends), and a run orphaned by a killed worker blocks no later one.
func InsightsApplyTaskID(at time.Time) string {
	return fmt.Sprintf("insights-apply-%d", at.Unix())
}

// InsightsApplyTimeout bounds one run; the handler stops taking batches
// well before it.
const InsightsApplyTimeout = 2 * time.Minute

// NewInsightsApply builds the task of the second of at.
func NewInsightsApply(at time.Time) *asynq.Task {
	return asynq.NewTask(TypeInsightsApply, nil,
		asynq.TaskID(InsightsApplyTaskID(at)),
		asynq.Queue(QueueInsights),
		asynq.MaxRetry(25),
		asynq.Timeout(InsightsApplyTimeout),
	)
}
