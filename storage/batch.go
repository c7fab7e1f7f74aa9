package storage

import (
	"errors"
	"time"
)

// Recorded batches (docs/architecture.md, "Batches: record, sweep,
// apply"): the API records a request's work as one row of its kind's
// table, under an idempotency key, and enqueues its task after the
// commit; the worker applies it in one transaction; the kind's sweep
// source enqueues the task of a batch still pending (the enqueue was lost)
// and fails one whose task was archived.

// ErrRequestKeyReused is an Idempotency-Key sent again with another body.
var ErrRequestKeyReused = errors.New("storage: idempotency key reused with another body")

// BatchKind names a family of batches: their table (the postgres driver
// maps it), their task type and their sweep source.
type BatchKind string

// The kinds of batches.
const (
	// AudienceBatches are custom audience users batches
	// (custom_audience_batches, docs/ads-audiences.md).
	AudienceBatches BatchKind = "custom-audience-batches"
	// DoNotReachBatches are do-not-reach users batches
	// (do_not_reach_batches, docs/ads-do-not-reach.md).
	DoNotReachBatches BatchKind = "donotreach-batches"
)

// BatchState is where a batch is in its life: recorded PENDING, then
// APPLIED by its task or FAILED (its content refused, its task's retries
// used up or its task archived). See CanBecome.
type BatchState string

// The batch states (the CHECK of the tables' state column).
const (
	BatchPending BatchState = "PENDING"
	BatchApplied BatchState = "APPLIED"
	BatchFailed  BatchState = "FAILED"
)

// BatchStates are every state, in the order of a batch's life.
var BatchStates = []BatchState{BatchPending, BatchApplied, BatchFailed}

// BatchStateNames are the BatchStates as strings (the column's CHECK).
func BatchStateNames() []string {
	out := make([]string, len(BatchStates))
	for i, s := range BatchStates {
		out[i] = string(s)
	}
	return out
}

// Settled reports a batch its task no longer works on: it is not due.
func (s BatchState) Settled() bool { return s != BatchPending }

// CanBecome reports whether a batch of kind k in state s may move to
// next: PENDING -> APPLIED | FAILED, and for a kind applied in order
// (k.InOrder) also FAILED -> APPLIED: a later batch of the same owner
// applies the earlier ones first, a failed one included.
func (k BatchKind) CanBecome(s, next BatchState) bool {
	switch s {
	case BatchPending:
		return next == BatchApplied || next == BatchFailed
	case BatchFailed:
		return next == BatchApplied && k.InOrder()
	}
	return false
}

// From lists the states a batch of kind k moves to next from.
func (k BatchKind) From(next BatchState) []BatchState {
	var out []BatchState
	for _, s := range BatchStates {
		if k.CanBecome(s, next) {
			out = append(out, s)
		}
	}
	return out
}

// InOrder reports a kind whose batches apply in the order they were
// recorded per owner: applying one applies every unapplied one of its
// owner recorded before it.
func (k BatchKind) InOrder() bool { return k == DoNotReachBatches }

// Batch is a recorded batch as the sweep sees it.
type Batch struct {
	Kind BatchKind
	ID   string
	// Owner is the audience or list the batch changes.
	Owner     string
	State     BatchState
	CreatedAt time.Time
}
