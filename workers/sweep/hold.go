package sweep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
)

// Lease timing of task runs (docs/outages.md): a run renews its lease
// every TaskHeartbeat, and a lease not renewed for TaskLease lapses, so
// the work of a killed worker is enqueued again by the next sweep tick
// after that (at most TaskLease + the sweep interval), while a live run
// may miss two heartbeats in a row (a slow database) without losing it.
const (
	TaskLease     = 30 * time.Second
	TaskHeartbeat = 10 * time.Second
)

// LeaseReader tells whether a live run holds a task id
// (storage/postgres.DB).
type LeaseReader interface {
	TaskLeaseHeld(ctx context.Context, taskID string) (bool, error)
}

// Leases are the task leases a run takes, renews and releases
// (storage/postgres.DB).
type Leases interface {
	LeaseReader
	ClaimTaskLease(ctx context.Context, taskID, holder string, ttl time.Duration) (bool, error)
	RenewTaskLease(ctx context.Context, taskID, holder string, ttl time.Duration) (bool, error)
	ReleaseTaskLease(ctx context.Context, taskID, holder string) error
}

// ErrLeaseLost cancels a run whose lease lapsed or was taken: another run
// may have started, so this one stops rather than overlap it.
var ErrLeaseLost = errors.New("task lease lost")

// Hold makes every run of a task hold its task id in PostgreSQL for as long
// as it runs, so a sweeper never enqueues the task again while the run
// lives, even when Redis lost the task (a Sweeper with Leases set skips
// held ids). A run that finds its id held by another live run does
// nothing (it returns nil: the holder settles the record, or its lease
// lapses and the sweeper enqueues the work again).
type Hold struct {
	Leases Leases
	Logger *slog.Logger
	// TTL and Heartbeat default to TaskLease and TaskHeartbeat.
	TTL       time.Duration
	Heartbeat time.Duration

	runs sync.WaitGroup
}

// Wait waits until every run of h has returned and released its lease, or
// ctx ends. A worker calls it after asynq's shutdown, which puts the tasks
// of runs it stopped back in the queue and cancels them but does not wait
// for them: without it the process could exit holding leases, and the
// replacement run would wait for them to lapse.
func (h *Hold) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.runs.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for task runs to release their leases: %w", ctx.Err())
	}
}

// Wrap returns next holding its task's lease for each run. A task without
// an id (not run by asynq) runs as is.
func (h *Hold) Wrap(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		id, ok := asynq.GetTaskID(ctx)
		if !ok || h == nil || h.Leases == nil {
			return next.ProcessTask(ctx, t)
		}
		return h.Do(ctx, id, func(ctx context.Context) error { return next.ProcessTask(ctx, t) })
	})
}

// Do runs run while holding the lease of task id: it claims it (without
// running when another live run holds it), renews it every Heartbeat, and
// releases it when run returns. run's context is cancelled with
// ErrLeaseLost when the lease is lost.
func (h *Hold) Do(ctx context.Context, id string, run func(ctx context.Context) error) error {
	h.runs.Add(1)
	defer h.runs.Done()
	holder := newHolder()
	ttl, beat := h.timing()
	claimed, err := h.Leases.ClaimTaskLease(ctx, id, holder, ttl)
	if err != nil {
		return fmt.Errorf("claim the lease of task %s: %w", id, err)
	}
	if !claimed {
		logctx.OrDefault(h.Logger).InfoContext(ctx, "task held by another live run; not running it twice", "task_id", id)
		return nil
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.heartbeat(runCtx, id, holder, ttl, beat, cancel)
	}()
	err = run(runCtx)
	cause := context.Cause(runCtx)
	cancel(nil)
	<-done
	release, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	if rerr := h.Leases.ReleaseTaskLease(release, id, holder); rerr != nil {
		logctx.OrDefault(h.Logger).WarnContext(ctx, "task lease not released; it lapses", "task_id", id, "err", rerr)
	}
	if errors.Is(cause, ErrLeaseLost) && err != nil {
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

// heartbeat renews the lease every beat until ctx ends, cancelling the run
// when the lease is lost or could not be renewed for a whole ttl.
func (h *Hold) heartbeat(ctx context.Context, id, holder string, ttl, beat time.Duration, cancel context.CancelCauseFunc) {
	ticker := time.NewTicker(beat)
	defer ticker.Stop()
	renewed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		ok, err := h.Leases.RenewTaskLease(ctx, id, holder, ttl)
		switch {
		case err == nil && ok:
			renewed = time.Now()
		case err == nil:
			logctx.OrDefault(h.Logger).ErrorContext(ctx, "task lease taken by another run; stopping this one", "task_id", id)
			cancel(ErrLeaseLost)
			return
		case time.Since(renewed) >= ttl:
			logctx.OrDefault(h.Logger).ErrorContext(ctx, "task lease not renewed in time; stopping the run", "task_id", id, "err", err)
			cancel(ErrLeaseLost)
			return
		default:
			logctx.OrDefault(h.Logger).WarnContext(ctx, "task lease renewal failed; retrying", "task_id", id, "err", err)
		}
	}
}

func (h *Hold) timing() (ttl, beat time.Duration) {
	ttl, beat = h.TTL, h.Heartbeat
	if ttl <= 0 {
		ttl = TaskLease
	}
	if beat <= 0 {
		beat = TaskHeartbeat
	}
	return ttl, beat
}

// newHolder names one run.
func newHolder() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
