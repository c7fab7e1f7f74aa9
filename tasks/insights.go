package tasks

import (
	"time"

	"github.com/hibiken/asynq"
)

// TypeInsightsApply applies the insights change log (the posts that
// started or stopped counting) to the keyword insights aggregates, batch by
// batch, until the log is empty or the run's budget is spent. It has no
// payload: the log is the work (docs/insights.md).
const TypeInsightsApply = "insights:apply"

// InsightsApplyTaskID is the one task id of TypeInsightsApply: at most one
// is queued at a time.
const InsightsApplyTaskID = "insights-apply"

// InsightsApplyTimeout bounds one run; the handler stops taking batches
// well before it.
const InsightsApplyTimeout = 2 * time.Minute

// NewInsightsApply builds the task.
func NewInsightsApply() *asynq.Task {
	return asynq.NewTask(TypeInsightsApply, nil,
		asynq.TaskID(InsightsApplyTaskID),
		asynq.Queue(QueueInsights),
		asynq.MaxRetry(25),
		asynq.Timeout(InsightsApplyTimeout),
	)
}
