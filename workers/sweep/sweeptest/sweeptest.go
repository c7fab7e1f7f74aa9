// Package sweeptest checks sweep sources against the task leases their
// runs hold (sweep.Hold, docs/outages.md).
package sweeptest

import (
	"context"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/workers/sweep"
)

// LeaseTTL is the lease HeldWork gives its runs: long enough that its
// renewals (bounded by a heartbeat, a sixth of it) survive a loaded
// machine's slow statements; a run stops two heartbeats before a lapse.
const LeaseTTL = time.Second

// HeldWork checks the lease rule on one due record whose task is taskID
// (its queue emptied, as when Redis was wiped mid-run): tick, a sweep of
// the record's source with Leases set, enqueues nothing while a live run
// holds the lease (heartbeating past its TTL), and a second run started
// meanwhile does not run; nor while the lease of a run killed mid-way has
// not lapsed; and enqueues the task once it lapsed, so nothing accepted is
// lost. queued reports whether the task is in the queue.
func HeldWork(t *testing.T, leases sweep.Leases, taskID string, tick func(), queued func() bool) {
	t.Helper()
	ctx := t.Context()
	hold := &sweep.Hold{Leases: leases, TTL: LeaseTTL, Heartbeat: LeaseTTL / 6}
	running, finish, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- hold.Do(ctx, taskID, func(context.Context) error {
			close(running)
			<-finish
			return nil
		})
	}()
	<-running
	time.Sleep(2 * LeaseTTL) // the heartbeat keeps the lease past its TTL
	tick()
	if queued() {
		t.Errorf("task %s enqueued while a live run holds it", taskID)
	}
	ran := false
	if err := hold.Do(ctx, taskID, func(context.Context) error { ran = true; return nil }); err != nil || ran {
		t.Errorf("second run while the first lives: ran %v, %v", ran, err)
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatalf("first run: %v", err)
	}

	// A run killed mid-way: its lease is neither renewed nor released.
	if ok, err := leases.ClaimTaskLease(ctx, taskID, "killed-run", LeaseTTL); err != nil || !ok {
		t.Fatalf("claim for the killed run: %v, %v", ok, err)
	}
	tick()
	if queued() {
		t.Errorf("task %s enqueued before the killed run's lease lapsed", taskID)
	}
	time.Sleep(LeaseTTL + 100*time.Millisecond)
	tick()
	if !queued() {
		t.Errorf("task %s not enqueued after the killed run's lease lapsed", taskID)
	}
}
