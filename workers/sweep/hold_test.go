package sweep_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// leases is an in-memory lease table whose renewals can fail or be lost.
type leases struct {
	mu       sync.Mutex
	holder   map[string]string
	renewErr error
	lost     bool
	renewals int
	released []string
}

func (l *leases) ClaimTaskLease(_ context.Context, id, holder string, _ time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder == nil {
		l.holder = map[string]string{}
	}
	if h, ok := l.holder[id]; ok && h != holder {
		return false, nil
	}
	l.holder[id] = holder
	return true, nil
}

func (l *leases) ClaimTaskRun(ctx context.Context, run storage.TaskLease, ttl time.Duration) (bool, error) {
	return l.ClaimTaskLease(ctx, run.TaskID, run.Holder, ttl)
}

func (l *leases) RenewTaskLease(_ context.Context, id, holder string, _ time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.renewals++
	if l.renewErr != nil {
		return false, l.renewErr
	}
	return !l.lost && l.holder[id] == holder, nil
}

func (l *leases) ReleaseTaskLease(_ context.Context, id, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder[id] == holder {
		delete(l.holder, id)
		l.released = append(l.released, id)
	}
	return nil
}

func (l *leases) TaskLeaseHeld(_ context.Context, id string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.holder[id]
	return ok, nil
}

// TestHoldStopsARunThatLostItsLease: a run whose lease was taken, or could
// not be renewed and is two heartbeats from lapsing, is cancelled
// with ErrLeaseLost (another run may start); a failed renewal is retried
// while the lease has time left.
func TestHoldStopsARunThatLostItsLease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		leases   *leases
		lostHold bool
	}{
		{"taken", &leases{lost: true}, true},
		{"not renewed for a ttl", &leases{renewErr: errors.New("database down")}, true},
		{"renewed", &leases{}, false},
	} {
		hold := &sweep.Hold{Leases: tc.leases, TTL: 300 * time.Millisecond, Heartbeat: 30 * time.Millisecond}
		err := hold.Do(t.Context(), "task-1", func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(600 * time.Millisecond):
				return nil
			}
		})
		if got := errors.Is(err, sweep.ErrLeaseLost); got != tc.lostHold {
			t.Errorf("%s: run = %v, want lease lost %v", tc.name, err, tc.lostHold)
		}
		if tc.leases.renewals == 0 || len(tc.leases.released) != 1 {
			t.Errorf("%s: %d renewals, released %v", tc.name, tc.leases.renewals, tc.leases.released)
		}
	}
}

// TestHoldWaitsForRunsToRelease: Wait returns once every run returned and
// released its lease (a worker's shutdown), and gives up at its context's
// end while one still runs.
func TestHoldWaitsForRunsToRelease(t *testing.T) {
	t.Parallel()
	l := &leases{}
	hold := &sweep.Hold{Leases: l, TTL: time.Second, Heartbeat: 100 * time.Millisecond}
	ctx, stop := context.WithCancel(t.Context())
	started, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- hold.Do(ctx, "task-1", func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			time.Sleep(50 * time.Millisecond) // winding down
			return ctx.Err()
		})
	}()
	<-started
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := hold.Wait(short); err == nil {
		t.Errorf("Wait returned while a run holds its lease")
	}
	stop() // asynq's shutdown cancels the run
	if err := hold.Wait(t.Context()); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if held, _ := l.TaskLeaseHeld(t.Context(), "task-1"); held || len(l.released) != 1 {
		t.Errorf("after Wait: held %v, released %v", held, l.released)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("run = %v", err)
	}
}

// TestRescueTaskIDs: a rescue's task id is unique per dead run and keyed,
// for its lease, on the original's; ids that merely look alike are their
// own.
func TestRescueTaskIDs(t *testing.T) {
	t.Parallel()
	a, b := sweep.RescueTaskID("media-7", "host:1:aa"), sweep.RescueTaskID("media-7", "host:2:bb")
	if a == b || a == "media-7" {
		t.Fatalf("rescue ids %q, %q: want distinct and not the original", a, b)
	}
	for _, tc := range []struct{ id, want string }{
		{a, "media-7"},
		{sweep.RescueTaskID("custom-audience-batch-x~r1", "h"), "custom-audience-batch-x~r1"},
		{"media-7", "media-7"},
		{"media-7~r1", "media-7~r1"},
		{"media-7~rzzzzzzzzzzzzzzzzzzzzzzzz", "media-7~rzzzzzzzzzzzzzzzzzzzzzzzz"},
	} {
		if got := sweep.LogicalTaskID(tc.id); got != tc.want {
			t.Errorf("LogicalTaskID(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
