package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// BatchApply is the payload of a recorded batch's apply task (every
// kind's: docs/architecture.md, "Batches: record, sweep, apply").
type BatchApply struct {
	BatchID string `json:"batch_id"`
}

// BatchTask is one kind of batch's apply task: its type, the prefix of
// its task ids (kinds sharing a queue never collide), its queue, retries
// and timeout.
type BatchTask struct {
	Type     string
	IDPrefix string
	Queue    string
	MaxRetry int
	Timeout  time.Duration
}

// New builds the task of one recorded batch; its id is TaskID.
func (k BatchTask) New(batchID string) (*asynq.Task, error) {
	payload, err := json.Marshal(BatchApply{BatchID: batchID})
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", k.Type, err)
	}
	return asynq.NewTask(k.Type, payload,
		asynq.TaskID(k.TaskID(batchID)),
		asynq.Queue(k.Queue),
		asynq.MaxRetry(k.MaxRetry),
		asynq.Timeout(k.Timeout),
		asynq.Retention(time.Hour),
	), nil
}

// TaskID is the asynq task id of a batch: its record id, prefixed.
func (k BatchTask) TaskID(batchID string) string { return k.IDPrefix + batchID }

// Parse decodes the payload of one of k's tasks (SkipRetry when bad).
func (k BatchTask) Parse(t *asynq.Task) (BatchApply, error) {
	var p BatchApply
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.BatchID == "" {
		return p, fmt.Errorf("%s payload without batch id: %w", k.Type, asynq.SkipRetry)
	}
	return p, nil
}
