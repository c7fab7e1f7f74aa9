package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeAudienceApplyBatch applies one recorded custom audience users batch
// (custom_audience_batches) to the audience's members in one transaction.
// The task id is AudienceBatchTaskID of the batch.
const TypeAudienceApplyBatch = "audiences:apply_batch"

// AudienceApplyBatch is the payload of TypeAudienceApplyBatch.
type AudienceApplyBatch struct {
	BatchID string `json:"batch_id"`
}

// AudienceBatchTimeout bounds one attempt (a 5 MB batch takes seconds).
const AudienceBatchTimeout = 5 * time.Minute

// AudienceBatchMaxRetry is how many times a failed attempt is retried.
const AudienceBatchMaxRetry = 10

// NewAudienceApplyBatch builds the task of one recorded batch.
func NewAudienceApplyBatch(batchID string) (*asynq.Task, error) {
	payload, err := json.Marshal(AudienceApplyBatch{BatchID: batchID})
	if err != nil {
		return nil, fmt.Errorf("encode audience batch payload: %w", err)
	}
	return asynq.NewTask(TypeAudienceApplyBatch, payload,
		asynq.TaskID(AudienceBatchTaskID(batchID)),
		asynq.Queue(QueueAudiences),
		asynq.MaxRetry(AudienceBatchMaxRetry),
		asynq.Timeout(AudienceBatchTimeout),
		asynq.Retention(time.Hour),
	), nil
}

// AudienceBatchTaskID is the asynq task id of a batch: its record id,
// prefixed so the do-not-reach batches on the same queue never collide.
func AudienceBatchTaskID(batchID string) string {
	return "custom-audience-batch-" + batchID
}

// ParseAudienceApplyBatch decodes a TypeAudienceApplyBatch payload.
func ParseAudienceApplyBatch(t *asynq.Task) (AudienceApplyBatch, error) {
	var p AudienceApplyBatch
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.BatchID == "" {
		return p, fmt.Errorf("audience batch payload without batch id: %w", asynq.SkipRetry)
	}
	return p, nil
}
