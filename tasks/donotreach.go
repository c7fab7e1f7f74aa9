package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeDoNotReachApply applies one recorded do-not-reach users batch (and
// any unapplied batch of the same list recorded before it) to the list's
// entries. The task id names the batch.
const TypeDoNotReachApply = "donotreach:apply_batch"

// DoNotReachApply is the payload of TypeDoNotReachApply.
type DoNotReachApply struct {
	BatchID string `json:"batch_id"`
}

// DoNotReachTaskTimeout bounds one attempt (a batch of 2500 operations,
// about 5 MB of identifiers, in one transaction).
const DoNotReachTaskTimeout = 5 * time.Minute

// DoNotReachMaxRetry is how many times a failed attempt is retried.
const DoNotReachMaxRetry = 20

// NewDoNotReachApply builds the task of a recorded batch.
func NewDoNotReachApply(batchID string) (*asynq.Task, error) {
	payload, err := json.Marshal(DoNotReachApply{BatchID: batchID})
	if err != nil {
		return nil, fmt.Errorf("encode do-not-reach payload: %w", err)
	}
	return asynq.NewTask(TypeDoNotReachApply, payload,
		asynq.TaskID(DoNotReachTaskID(batchID)),
		asynq.Queue(QueueAudiences),
		asynq.MaxRetry(DoNotReachMaxRetry),
		asynq.Timeout(DoNotReachTaskTimeout),
		asynq.Retention(time.Hour),
	), nil
}

// DoNotReachTaskID is the asynq task id of a batch.
func DoNotReachTaskID(batchID string) string {
	return "donotreach-" + batchID
}

// ParseDoNotReachApply decodes a TypeDoNotReachApply payload.
func ParseDoNotReachApply(t *asynq.Task) (DoNotReachApply, error) {
	var p DoNotReachApply
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.BatchID == "" {
		return p, fmt.Errorf("do-not-reach payload without batch id: %w", asynq.SkipRetry)
	}
	return p, nil
}
