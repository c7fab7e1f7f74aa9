package sweep_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// frozenLeases is the database as a run whose process died sees it: while
// dead is set its renewals "succeed" without reaching the database, so its
// lease lapses while asynq, whose server stays up here, still lists its
// task active (a kill -9 seen from PostgreSQL).
type frozenLeases struct {
	*postgres.DB
	dead atomic.Bool
}

func (f *frozenLeases) RenewTaskLease(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	if f.dead.Load() {
		return true, nil
	}
	return f.DB.RenewTaskLease(ctx, id, holder, ttl)
}

// rescueRig is an asynq server running a leased handler whose run of
// "work-1" never finishes and whose lease lapses as a killed worker's
// does; any other run (a rescue) completes at once.
type rescueRig struct {
	db              *postgres.DB
	inspector       *asynq.Inspector
	tick            func()
	mu              sync.Mutex
	runs            []string
	completed       atomic.Int32
	originalStopped chan error
}

func newRescueRig(t *testing.T, maxRetry int) *rescueRig {
	t.Helper()
	db, _ := storagetest.NewDB(t)
	addr, rdb := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: rdb}
	client, inspector := asynq.NewClient(opt), asynq.NewInspector(opt)
	t.Cleanup(func() { client.Close(); inspector.Close() })
	rig := &rescueRig{db: db, inspector: inspector, originalStopped: make(chan error, 1)}

	const ttl = 600 * time.Millisecond
	leases := &frozenLeases{DB: db}
	leases.dead.Store(true)
	hold := &sweep.Hold{Leases: leases, TTL: ttl, Heartbeat: ttl / 6}
	handler := hold.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		rig.mu.Lock()
		rig.runs = append(rig.runs, id)
		rig.mu.Unlock()
		if id == "work-1" { // the run that "dies": it never finishes
			<-ctx.Done()
			rig.originalStopped <- context.Cause(ctx)
			return ctx.Err()
		}
		leases.dead.Store(false)
		rig.completed.Add(1)
		return nil
	}))
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 2, Queues: map[string]int{"test": 1}, LogLevel: asynq.FatalLevel,
		TaskCheckInterval: 20 * time.Millisecond})
	if err := srv.Start(handler); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	if _, err := client.Enqueue(asynq.NewTask("test:work", []byte("p"), asynq.TaskID("work-1"), asynq.Queue("test"), asynq.MaxRetry(maxRetry), asynq.Retention(time.Hour))); err != nil {
		t.Fatal(err)
	}
	rescue := &sweep.Sweeper[storage.TaskLease]{Source: &sweep.Rescue{Store: db, Tasks: inspector}, Queue: client, Inspector: inspector}
	rig.tick = func() {
		t.Helper()
		if err := rescue.Tick(t.Context()); err != nil {
			t.Fatalf("tick: %v", err)
		}
	}
	return rig
}

// TestRescueKilledRun: a run whose lease lapsed while asynq still lists its
// task active is rescued under a derived id at the next tick; the rescue
// holds the lease of the same logical id, runs the work once with one
// retry fewer, and the original, once alive again, loses its lease and
// stops; later ticks rescue nothing more.
func TestRescueKilledRun(t *testing.T) {
	t.Parallel()
	rig := newRescueRig(t, 3)
	db, inspector, tick, completed := rig.db, rig.inspector, rig.tick, &rig.completed
	originalStopped, mu := rig.originalStopped, &rig.mu
	waitFor(t, "the original to hold its lease", func() bool { held, _ := db.TaskLeaseHeld(t.Context(), "work-1"); return held })
	tick()
	if n := completed.Load(); n != 0 {
		t.Fatalf("rescued while the lease was held")
	}
	waitFor(t, "the rescue to complete", func() bool { tick(); return completed.Load() == 1 })

	select {
	case cause := <-originalStopped:
		if !errors.Is(cause, sweep.ErrLeaseLost) {
			t.Errorf("original stopped with %v, want ErrLeaseLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the original kept running after the rescue took its lease")
	}
	for range 3 {
		tick()
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	runs := rig.runs
	if len(runs) != 2 || runs[0] != "work-1" || sweep.LogicalTaskID(runs[1]) != "work-1" || runs[1] == "work-1" {
		t.Fatalf("runs %v; want work-1 then one rescue of it", runs)
	}
	info, err := inspector.GetTaskInfo("test", runs[1])
	if err != nil || info.Type != "test:work" || string(info.Payload) != "p" || info.MaxRetry != 2 || info.Retention != time.Hour {
		t.Fatalf("rescue task %+v, %v: want a copy of the original", info, err)
	}
	if got, err := db.LapsedTaskLeases(t.Context(), 10); err != nil || len(got) != 0 {
		t.Fatalf("lapsed leases left: %v, %v", got, err)
	}
}

// TestRescueSpendsRetries: a killed run of a task with no retry left is
// not rescued (a task that kills its worker every run is not rescued
// forever): its lapsed lease is forgotten and asynq's own recovery
// archives the task, for the record's sweeper to settle.
func TestRescueSpendsRetries(t *testing.T) {
	t.Parallel()
	rig := newRescueRig(t, 0)
	waitFor(t, "the original to hold its lease", func() bool { held, _ := rig.db.TaskLeaseHeld(t.Context(), "work-1"); return held })
	waitFor(t, "its lapsed lease to be forgotten", func() bool {
		rig.tick()
		held, _ := rig.db.TaskLeaseHeld(t.Context(), "work-1")
		lapsed, _ := rig.db.LapsedTaskLeases(t.Context(), 10)
		return !held && len(lapsed) == 0
	})
	rig.tick()
	time.Sleep(100 * time.Millisecond)
	rig.mu.Lock()
	defer rig.mu.Unlock()
	if len(rig.runs) != 1 || rig.completed.Load() != 0 {
		t.Fatalf("runs %v, %d completed; want only the original, no rescue", rig.runs, rig.completed.Load())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
