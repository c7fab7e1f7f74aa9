package tasks

import "time"

// TypeAudienceApplyBatch applies one recorded custom audience users batch
// (custom_audience_batches) to the audience's members in one transaction.
// The task id is AudienceBatch.TaskID of the batch.
const TypeAudienceApplyBatch = "audiences:apply_batch"

// AudienceBatchTimeout bounds one attempt (a 5 MB batch takes seconds).
const AudienceBatchTimeout = 5 * time.Minute

// AudienceBatchMaxRetry is how many times a failed attempt is retried.
const AudienceBatchMaxRetry = 10

// AudienceBatch is the apply task of custom audience batches. Its task ids
// are prefixed so the do-not-reach batches on the same queue never
// collide.
var AudienceBatch = BatchTask{Type: TypeAudienceApplyBatch, IDPrefix: "custom-audience-batch-", Queue: QueueAudiences,
	MaxRetry: AudienceBatchMaxRetry, Timeout: AudienceBatchTimeout}
