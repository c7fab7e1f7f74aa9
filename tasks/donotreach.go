package tasks

import "time"

// TypeDoNotReachApply applies one recorded do-not-reach users batch (and
// any unapplied batch of the same list recorded before it) to the list's
// entries. The task id names the batch.
const TypeDoNotReachApply = "donotreach:apply_batch"

// DoNotReachTaskTimeout bounds one attempt (a batch of 2500 operations,
// about 5 MB of identifiers, in one transaction).
const DoNotReachTaskTimeout = 5 * time.Minute

// DoNotReachMaxRetry is how many times a failed attempt is retried.
const DoNotReachMaxRetry = 20

// DoNotReachBatch is the apply task of do-not-reach batches.
var DoNotReachBatch = BatchTask{Type: TypeDoNotReachApply, IDPrefix: "donotreach-", Queue: QueueAudiences,
	MaxRetry: DoNotReachMaxRetry, Timeout: DoNotReachTaskTimeout}
