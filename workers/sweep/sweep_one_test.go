package sweep

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// heldLocker never grants the lease: SweepOne must not need it.
type heldLocker struct{}

func (heldLocker) Acquire(context.Context, string, time.Duration) (func(), bool, error) {
	return nil, false, nil
}

// TestSweepOne: one item is handled at once like a tick would (a completed
// task of its id is replaced), without the lease and without recording a
// sweep; an idle item enqueues nothing.
func TestSweepOne(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ctx := t.Context()
	done := asynq.NewTask("test:run", nil, asynq.TaskID("test-1"), asynq.Queue("test"), asynq.Retention(time.Hour))
	if _, err := q.client.EnqueueContext(ctx, done); err != nil {
		t.Fatal(err)
	}
	runAll(t, q)
	src := &rows{}
	s := &Sweeper[row]{Source: src, Queue: q.client, Inspector: q.inspector, Locker: heldLocker{}, Logger: slog.New(slog.DiscardHandler)}
	if err := s.SweepOne(ctx, row{id: 1}); err != nil {
		t.Fatalf("SweepOne: %v", err)
	}
	if err := s.SweepOne(ctx, row{id: 2, idle: true}); err != nil {
		t.Fatalf("SweepOne idle: %v", err)
	}
	if want := []int{1}; !slices.Equal(src.enqueued, want) {
		t.Errorf("enqueued %v, want %v", src.enqueued, want)
	}
	if len(src.swept) != 0 {
		t.Errorf("swept %v, want nothing recorded", src.swept)
	}
	for id, want := range map[int]string{1: "pending", 2: "none"} {
		if got := q.state(t, id); got != want {
			t.Errorf("task %d is %s, want %s", id, got, want)
		}
	}
}
