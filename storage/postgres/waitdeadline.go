package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// waitDeadlines hands out shared deadlines for waits bounded by bound: a
// wait that starts at t gets a context that expires between t+bound and
// t+bound+step, shared with every wait that starts in the same step, so a
// busy pool makes one timer per step instead of one per wait.
type waitDeadlines struct {
	bound, step time.Duration
	mu          sync.Mutex // serialises making a new deadline
	current     atomic.Pointer[sharedDeadline]
}

type sharedDeadline struct {
	ctx      context.Context
	deadline time.Time
	// cancel is never called: waits may still hold ctx until the deadline,
	// when its own timer cancels it.
	cancel context.CancelFunc
}

// minWaitStep is the least step between shared deadlines.
const minWaitStep = 10 * time.Millisecond

func newWaitDeadlines(bound time.Duration) *waitDeadlines {
	return &waitDeadlines{bound: bound, step: max(bound/16, minWaitStep)}
}

// at is the context of a wait that starts at now: done at least bound after
// now, and at most bound+step after.
func (w *waitDeadlines) at(now time.Time) context.Context {
	earliest := now.Add(w.bound)
	if d := w.current.Load(); d != nil && !d.deadline.Before(earliest) {
		return d.ctx
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := w.current.Load(); d != nil && !d.deadline.Before(earliest) {
		return d.ctx
	}
	deadline := earliest.Add(w.step)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	w.current.Store(&sharedDeadline{ctx: ctx, deadline: deadline, cancel: cancel})
	return ctx
}

// sharedWait is a wait for a connection: the caller's values, the shared
// deadline's cancellation (see boundTracer). context.Cause of it reports
// the caller's cause, not the deadline's: pgx and puddle do not ask.
type sharedWait struct {
	context.Context
	wait context.Context
}

func (s sharedWait) Deadline() (time.Time, bool) { return s.wait.Deadline() }
func (s sharedWait) Done() <-chan struct{}       { return s.wait.Done() }
func (s sharedWait) Err() error                  { return s.wait.Err() }
