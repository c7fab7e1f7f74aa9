package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeWebhookReplay runs one webhook replay job (webhook_replay_jobs,
// docs/webhooks.md): it queues copies of the webhook's deliveries of the
// job's window, then the replay_job_status event, on the webhook's
// delivery queue. The task id is WebhookReplayTaskID of the job.
const TypeWebhookReplay = "webhooks:replay"

// WebhookReplayTimeout bounds one attempt (one INSERT ... SELECT).
const WebhookReplayTimeout = 5 * time.Minute

// WebhookReplayMaxRetry is how many times a failed attempt is retried.
const WebhookReplayMaxRetry = 10

// WebhookReplay is the payload of TypeWebhookReplay.
type WebhookReplay struct {
	JobID int64 `json:"job_id"`
}

// NewWebhookReplay builds the task of one replay job.
func NewWebhookReplay(jobID int64) (*asynq.Task, error) {
	payload, err := json.Marshal(WebhookReplay{JobID: jobID})
	if err != nil {
		return nil, fmt.Errorf("encode webhook replay payload: %w", err)
	}
	return asynq.NewTask(TypeWebhookReplay, payload,
		asynq.TaskID(WebhookReplayTaskID(jobID)),
		asynq.Queue(QueueWebhooks),
		asynq.MaxRetry(WebhookReplayMaxRetry),
		asynq.Timeout(WebhookReplayTimeout),
		asynq.Retention(24*time.Hour),
	), nil
}

// WebhookReplayTaskID is the asynq task id of a replay job.
func WebhookReplayTaskID(jobID int64) string {
	return fmt.Sprintf("webhook-replay-%d", jobID)
}

// ParseWebhookReplay decodes a TypeWebhookReplay payload.
func ParseWebhookReplay(t *asynq.Task) (WebhookReplay, error) {
	var p WebhookReplay
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.JobID <= 0 {
		return p, fmt.Errorf("webhook replay payload without job id: %w", asynq.SkipRetry)
	}
	return p, nil
}
