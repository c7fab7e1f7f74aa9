package sweep

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// Lease timing of task runs (docs/outages.md): a run renews its lease
// every TaskHeartbeat, from a goroutine of its own (however slow the work,
// a long ffmpeg run say), and a lease not renewed for TaskLease lapses, so
// the work of a killed worker is rescued by the next lapsed-lease sweep
// after that (Rescue: at most TaskLease + RescueInterval after the kill,
// plus a worker's pick-up). A live run whose renewals fail stops itself
// at least a heartbeat before its lease can lapse: when it is two
// heartbeats from lapsing, after 9 s without a renewal.
const (
	TaskLease     = 15 * time.Second
	TaskHeartbeat = 3 * time.Second
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
	// ClaimTaskRun is ClaimTaskLease naming the run (queue, asynq task
	// id), so a lapse of it can be rescued.
	ClaimTaskRun(ctx context.Context, l storage.TaskLease, ttl time.Duration) (bool, error)
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

// Wrap returns next holding its task's lease for each run, keyed on the
// logical task id (a rescue's derived id counts as its original's, see
// LogicalTaskID). A task without an id (not run by asynq) runs as is.
func (h *Hold) Wrap(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		id, ok := asynq.GetTaskID(ctx)
		if !ok || h == nil || h.Leases == nil {
			return next.ProcessTask(ctx, t)
		}
		queue, _ := asynq.GetQueueName(ctx)
		run := storage.TaskLease{TaskID: LogicalTaskID(id), Queue: queue, RunID: id}
		return h.do(ctx, run, func(ctx context.Context) error { return next.ProcessTask(ctx, t) })
	})
}

// Do runs run while holding the lease of task id: it claims it (without
// running when another live run holds it), renews it every Heartbeat, and
// releases it when run returns. run's context is cancelled with
// ErrLeaseLost when the lease is lost, or is about to lapse because it
// could not be renewed. The lease names no asynq run, so a lapse of it is
// not rescued (Wrap's are).
func (h *Hold) Do(ctx context.Context, id string, run func(ctx context.Context) error) error {
	return h.do(ctx, storage.TaskLease{TaskID: id}, run)
}

func (h *Hold) do(ctx context.Context, lease storage.TaskLease, run func(ctx context.Context) error) error {
	h.runs.Add(1)
	defer h.runs.Done()
	id := lease.TaskID
	lease.Holder = newHolder()
	ttl, beat := h.timing()
	sent := time.Now()
	claimed, err := h.claim(ctx, lease, ttl)
	if err != nil {
		return fmt.Errorf("claim the lease of task %s: %w", id, err)
	}
	if !claimed {
		logctx.OrDefault(h.Logger).InfoContext(ctx, "task held by another live run; not running it twice", "task_id", id, "run_id", lease.RunID)
		return nil
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.heartbeat(runCtx, id, lease.Holder, sent.Add(ttl), ttl, beat, cancel)
	}()
	err = run(runCtx)
	cause := context.Cause(runCtx)
	cancel(nil)
	<-done
	release, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	if rerr := h.Leases.ReleaseTaskLease(release, id, lease.Holder); rerr != nil {
		logctx.OrDefault(h.Logger).WarnContext(ctx, "task lease not released; it lapses", "task_id", id, "err", rerr)
	}
	if errors.Is(cause, ErrLeaseLost) && err != nil {
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

func (h *Hold) claim(ctx context.Context, lease storage.TaskLease, ttl time.Duration) (bool, error) {
	if lease.RunID == "" {
		return h.Leases.ClaimTaskLease(ctx, lease.TaskID, lease.Holder, ttl)
	}
	return h.Leases.ClaimTaskRun(ctx, lease, ttl)
}

// heartbeat renews the lease every beat until ctx ends, each renewal
// bounded by one beat. It cancels the run when the lease is lost, or when
// it could not be renewed and is two beats from lapsing (at expires,
// counted from when the last successful renewal was sent): a renewal may
// take a whole beat and the next check may come a beat after it, so
// cancelling one beat out could land at the lapse itself under jitter;
// two beats out, the run stops at least a beat before another can take
// its lease over, never after.
func (h *Hold) heartbeat(ctx context.Context, id, holder string, expires time.Time, ttl, beat time.Duration, cancel context.CancelCauseFunc) {
	ticker := time.NewTicker(beat)
	defer ticker.Stop()
	log := logctx.OrDefault(h.Logger)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if time.Until(expires) <= 2*beat {
			log.ErrorContext(ctx, "task lease not renewed in time; stopping the run before it lapses", "task_id", id)
			cancel(ErrLeaseLost)
			return
		}
		sent := time.Now()
		rctx, stop := context.WithTimeout(ctx, beat)
		ok, err := h.Leases.RenewTaskLease(rctx, id, holder, ttl)
		stop()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && ok:
			expires = sent.Add(ttl)
		case err == nil:
			log.ErrorContext(ctx, "task lease taken by another run; stopping this one", "task_id", id)
			cancel(ErrLeaseLost)
			return
		default:
			log.WarnContext(ctx, "task lease renewal failed; retrying", "task_id", id, "err", err)
		}
	}
}

func (h *Hold) timing() (ttl, beat time.Duration) {
	ttl, beat = h.TTL, h.Heartbeat
	if ttl <= 0 {
		ttl = TaskLease
	}
	// Renewals that succeed must never look late: a beat after one, the
	// lease is ttl-beat from lapsing, more than the two beats that stop a run.
	if beat <= 0 || beat > ttl/4 {
		beat = min(TaskHeartbeat, ttl/5)
	}
	return ttl, beat
}

// newHolder names one run: the host and process running it (so an
// operator, or a test, can tell which worker holds a task) and a random
// part.
func newHolder() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// rescueMark separates a logical task id from the mark of a rescue.
const rescueMark = "~r"

// RescueTaskID is the task id of the rescue of the run of taskID whose
// lease holder died: unique per lapsed run (a digest of its holder), so
// one lapse is rescued once (its enqueue is idempotent), and never the id
// asynq still lists as active for the dead run.
func RescueTaskID(taskID, holder string) string {
	sum := sha256.Sum256([]byte(holder))
	return taskID + rescueMark + hex.EncodeToString(sum[:rescueTokenBytes])
}

// rescueTokenBytes is the size of a rescue's mark after rescueMark.
const rescueTokenBytes = 12

// LogicalTaskID is the task id a run's lease is keyed on: its own, or
// for a rescue (RescueTaskID) the original's.
func LogicalTaskID(id string) string {
	i := strings.LastIndex(id, rescueMark)
	if i < 0 {
		return id
	}
	token := id[i+len(rescueMark):]
	if _, err := hex.DecodeString(token); err != nil || len(token) != 2*rescueTokenBytes {
		return id
	}
	return id[:i]
}
