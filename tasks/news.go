package tasks

import (
	"time"

	"github.com/hibiken/asynq"
)

// TypeNewsRefresh builds and refreshes the news stories from the terms
// spiking in the keyword insights aggregates (docs/news.md). It has no
// payload: every run looks at the present.
const TypeNewsRefresh = "news:refresh"

// NewsRefreshTaskID is the one task id of TypeNewsRefresh: at most one is
// queued or running at a time. The task keeps no retention, so the id is
// free again as soon as a run ends.
const NewsRefreshTaskID = "news-refresh"

// NewsRefreshTimeout bounds one run.
const NewsRefreshTimeout = 2 * time.Minute

// NewNewsRefresh builds the task. Few retries: the schedule enqueues a
// fresh one every minute anyway.
func NewNewsRefresh() *asynq.Task {
	return asynq.NewTask(TypeNewsRefresh, nil,
		asynq.TaskID(NewsRefreshTaskID),
		asynq.Queue(QueueInsights),
		asynq.MaxRetry(2),
		asynq.Timeout(NewsRefreshTimeout),
	)
}
