package postgres

import (
	"testing"
	"time"
)

// TestWaitDeadlines: a wait that starts at t gets a deadline between
// t+bound and t+bound+step, shared with the waits that start soon after,
// and a new one once the shared deadline would be too early.
func TestWaitDeadlines(t *testing.T) {
	const bound = 800 * time.Millisecond
	w := newWaitDeadlines(bound)
	if w.step != 50*time.Millisecond {
		t.Fatalf("step %v; want bound/16 = 50ms", w.step)
	}
	if small := newWaitDeadlines(time.Millisecond); small.step != minWaitStep {
		t.Errorf("step for a 1ms bound %v; want %v", small.step, minWaitStep)
	}
	t0 := time.Now()
	first := w.at(t0)
	for _, tc := range []struct {
		name  string
		after time.Duration
		same  bool
	}{
		{"same instant", 0, true},
		{"within the step", 30 * time.Millisecond, true},
		{"at the end of the step", 50 * time.Millisecond, true},
		{"past the step", 51 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := t0.Add(tc.after)
			ctx := w.at(start)
			deadline, ok := ctx.Deadline()
			if !ok || deadline.Before(start.Add(bound)) || deadline.After(start.Add(bound+w.step)) {
				t.Errorf("deadline %v after the start; want between %v and %v", deadline.Sub(start), bound, bound+w.step)
			}
			if same := ctx == first; same != tc.same {
				t.Errorf("shares the first deadline: %v; want %v", same, tc.same)
			}
		})
	}
}
