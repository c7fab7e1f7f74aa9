package storage

import (
	"slices"
	"testing"
)

// TestBatchTransitions: the batch state machine, per kind.
func TestBatchTransitions(t *testing.T) {
	tests := []struct {
		kind     BatchKind
		from, to BatchState
		want     bool
	}{
		{AudienceBatches, BatchPending, BatchApplied, true},
		{AudienceBatches, BatchPending, BatchFailed, true},
		{AudienceBatches, BatchFailed, BatchApplied, false},
		{AudienceBatches, BatchApplied, BatchFailed, false},
		{AudienceBatches, BatchPending, BatchPending, false},
		{DoNotReachBatches, BatchPending, BatchApplied, true},
		{DoNotReachBatches, BatchPending, BatchFailed, true},
		{DoNotReachBatches, BatchFailed, BatchApplied, true},
		{DoNotReachBatches, BatchApplied, BatchFailed, false},
		{DoNotReachBatches, BatchApplied, BatchPending, false},
	}
	for _, tc := range tests {
		if got := tc.kind.CanBecome(tc.from, tc.to); got != tc.want {
			t.Errorf("%s: %s -> %s = %v, want %v", tc.kind, tc.from, tc.to, got, tc.want)
		}
	}
	if got := DoNotReachBatches.From(BatchApplied); !slices.Equal(got, []BatchState{BatchPending, BatchFailed}) {
		t.Errorf("do-not-reach batches become APPLIED from %v", got)
	}
	if got := AudienceBatches.From(BatchFailed); !slices.Equal(got, []BatchState{BatchPending}) {
		t.Errorf("audience batches become FAILED from %v", got)
	}
	if BatchPending.Settled() || !BatchFailed.Settled() || !BatchApplied.Settled() {
		t.Error("only PENDING is unsettled")
	}
}
