// Package sweep is the one loop that keeps records and queue tasks from
// diverging. The API tier (or a reconciler) records work in PostgreSQL and
// enqueues a task whose id is the record's; Redis can lose that enqueue (it
// was down, wiped, or the process died in between), and a worker can die
// holding a task. A Sweeper asks its Source every Interval for the rows that
// look stuck, asks the source what task each needs, and enqueues it again,
// idempotently (the task id is the record id). A task already queued is
// inspected instead: an archived one (retries exhausted) is handed back to
// the source, a completed one whose record is still open is dropped so the
// next tick enqueues it afresh.
//
// Every worker replica runs every sweeper; a Redis lease makes one of them
// do each tick.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/tasks"
)

// Work is a task a source wants (re-)enqueued, with the queue and task id it
// is known by (asynq does not expose them from the task).
type Work struct {
	Task   *asynq.Task
	Queue  string
	TaskID string
}

// Source is one domain's view of its stuck rows.
type Source[T any] interface {
	// Name identifies the source in the lock and in logs.
	Name() string
	// Due returns up to limit rows that may need attention at now, least
	// recently swept first.
	Due(ctx context.Context, now time.Time, limit int) ([]T, error)
	// Check decides what item needs: a task to enqueue, or nil for nothing
	// this tick (the source may also settle the row itself, for example
	// fail an expired one).
	Check(ctx context.Context, item T, now time.Time) (*Work, error)
	// Enqueued records that item's task is queued (new or found queued).
	Enqueued(ctx context.Context, item T, now time.Time) error
	// Abandoned settles item whose task was archived: asynq will not run
	// it again.
	Abandoned(ctx context.Context, item T, info *asynq.TaskInfo, now time.Time) error
	// Swept records that the items were looked at (fairness across ticks).
	Swept(ctx context.Context, items []T, now time.Time) error
}

// Inspector reads and removes queued tasks (*asynq.Inspector).
type Inspector interface {
	GetTaskInfo(queue, id string) (*asynq.TaskInfo, error)
	DeleteTask(queue, id string) error
}

// Locker grants a short lease so only one sweeper of a fleet works per tick.
type Locker interface {
	Acquire(ctx context.Context, name string, ttl time.Duration) (release func(), ok bool, err error)
}

// Sweeper runs one Source.
type Sweeper[T any] struct {
	Source    Source[T]
	Queue     tasks.Enqueuer
	Inspector Inspector // nil: a task found queued is taken as healthy
	Locker    Locker    // nil: no lease (a single process)
	Logger    *slog.Logger
	Clock     func() time.Time
	Interval  time.Duration // between ticks (default 2 s)
	BatchSize int           // rows examined per tick (default 500)
	// TickTimeout bounds one tick, so a hung dependency cannot stall the
	// sweeper (default 30 s).
	TickTimeout time.Duration
	// LockTTL is how long a tick's fleet-wide lock outlives a replica that
	// died holding it (default 5 intervals + 10 s).
	LockTTL time.Duration
	// Routine marks a source whose enqueues are its normal course (a
	// scheduled task, not recovery): they are logged at debug level.
	Routine bool
	// Leases, when set, are the task leases of the source's runs (Hold):
	// a task id a live run holds is never enqueued again, even when the
	// queue lost the task (Redis wiped while it ran).
	Leases LeaseReader

	once  sync.Once
	nudge chan struct{}
}

// defaults fills unset fields once, before any goroutine uses them.
func (s *Sweeper[T]) defaults() { s.once.Do(s.setDefaults) }

func (s *Sweeper[T]) setDefaults() {
	if s.Interval <= 0 {
		s.Interval = 2 * time.Second
	}
	if s.BatchSize <= 0 {
		s.BatchSize = 500
	}
	if s.TickTimeout <= 0 {
		s.TickTimeout = 30 * time.Second
	}
	if s.LockTTL <= 0 {
		s.LockTTL = s.Interval*5 + 10*time.Second
	}
	if s.Clock == nil {
		s.Clock = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	s.nudge = make(chan struct{}, 1)
}

// Nudge asks for a tick as soon as possible (an upload notification
// arrived, say).
func (s *Sweeper[T]) Nudge() {
	s.defaults()
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Run ticks until ctx is done; failures are logged at most every 30 s.
func (s *Sweeper[T]) Run(ctx context.Context) {
	s.defaults()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastWarn time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.nudge:
		}
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil && time.Since(lastWarn) > 30*time.Second {
			lastWarn = time.Now()
			s.Logger.WarnContext(ctx, "sweep tick failed; retrying", "source", s.Source.Name(), "err", err)
		}
		timer.Reset(s.Interval)
	}
}

// Tick runs one pass: take the lease, look at the due rows, enqueue what
// they need, record that they were swept.
func (s *Sweeper[T]) Tick(ctx context.Context) error {
	s.defaults()
	ctx, cancel := context.WithTimeout(ctx, s.TickTimeout)
	defer cancel()
	release, ok, err := s.lease(ctx)
	if err != nil || !ok {
		return err
	}
	defer release()
	now := s.Clock().UTC()
	items, err := s.Source.Due(ctx, now, s.BatchSize)
	if err != nil {
		return fmt.Errorf("sweep %s: %w", s.Source.Name(), err)
	}
	var firstErr error
	for _, item := range items {
		if err := s.sweep(ctx, item, now); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("sweep %s: %w", s.Source.Name(), err)
		}
	}
	if len(items) > 0 {
		if err := s.Source.Swept(ctx, items, now); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// SweepOne looks at one item at once, outside the ticks, because its record
// just changed (a job ahead of it finished, say): it enqueues what the item
// needs exactly as a tick would, replacing a completed task of the same id.
// It takes no lease: enqueueing is idempotent by task id, and the ticks
// remain the fallback if it fails.
func (s *Sweeper[T]) SweepOne(ctx context.Context, item T) error {
	s.defaults()
	ctx, cancel := context.WithTimeout(ctx, s.TickTimeout)
	defer cancel()
	if err := s.sweep(ctx, item, s.Clock().UTC()); err != nil {
		return fmt.Errorf("sweep %s: %w", s.Source.Name(), err)
	}
	return nil
}

func (s *Sweeper[T]) lease(ctx context.Context) (func(), bool, error) {
	if s.Locker == nil {
		return func() {}, true, nil
	}
	release, ok, err := s.Locker.Acquire(ctx, "reconcile:"+s.Source.Name(), s.LockTTL)
	if err != nil {
		return nil, false, fmt.Errorf("acquire %s sweep lock: %w", s.Source.Name(), err)
	}
	return release, ok, nil
}

func (s *Sweeper[T]) sweep(ctx context.Context, item T, now time.Time) error {
	work, err := s.Source.Check(ctx, item, now)
	if err != nil || work == nil {
		return err
	}
	if held, err := s.held(ctx, work); err != nil || held {
		return err
	}
	_, err = s.Queue.EnqueueContext(ctx, work.Task)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return s.existing(ctx, item, work, now)
	}
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", work.TaskID, err)
	}
	s.Logger.Log(ctx, s.enqueueLevel(), "task enqueued", "source", s.Source.Name(), "task_id", work.TaskID, "queue", work.Queue)
	return s.Source.Enqueued(ctx, item, now)
}

// held reports whether a live run holds work's task id: it is running,
// whatever the queue says, and settles the record itself (or its lease
// lapses and a later tick enqueues the work again). Not marked enqueued,
// so the item stays due.
func (s *Sweeper[T]) held(ctx context.Context, work *Work) (bool, error) {
	if s.Leases == nil {
		return false, nil
	}
	held, err := s.Leases.TaskLeaseHeld(ctx, work.TaskID)
	if err != nil {
		return false, fmt.Errorf("read the lease of %s: %w", work.TaskID, err)
	}
	if held {
		s.Logger.DebugContext(ctx, "task held by a live run; not enqueued", "source", s.Source.Name(), "task_id", work.TaskID)
	}
	return held, nil
}

func (s *Sweeper[T]) enqueueLevel() slog.Level {
	if s.Routine {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// existing inspects a task that is already queued.
func (s *Sweeper[T]) existing(ctx context.Context, item T, work *Work, now time.Time) error {
	if s.Inspector == nil {
		return s.Source.Enqueued(ctx, item, now)
	}
	info, err := s.Inspector.GetTaskInfo(work.Queue, work.TaskID)
	if err != nil {
		return fmt.Errorf("inspect task %s: %w", work.TaskID, err)
	}
	switch info.State {
	case asynq.TaskStateArchived:
		return s.Source.Abandoned(ctx, item, info, now)
	case asynq.TaskStateActive:
		// A worker runs it right now; it settles the record, or the next
		// tick looks again (not marked enqueued, so a run that ends without
		// settling, like a job not yet its turn, is not left waiting).
		return nil
	case asynq.TaskStateCompleted:
		// The task ran but the record is still open (its final write was
		// lost, or the run found the record not ready yet): drop the
		// finished task and enqueue afresh.
		return s.replace(ctx, item, work, now)
	}
	return s.Source.Enqueued(ctx, item, now)
}

// replace deletes a completed task and enqueues its work again.
func (s *Sweeper[T]) replace(ctx context.Context, item T, work *Work, now time.Time) error {
	if err := s.Inspector.DeleteTask(work.Queue, work.TaskID); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
		return fmt.Errorf("delete completed task %s: %w", work.TaskID, err)
	}
	if _, err := s.Queue.EnqueueContext(ctx, work.Task); err != nil {
		return fmt.Errorf("enqueue %s again: %w", work.TaskID, err)
	}
	s.Logger.Log(ctx, s.enqueueLevel(), "task enqueued again", "source", s.Source.Name(), "task_id", work.TaskID, "queue", work.Queue)
	return s.Source.Enqueued(ctx, item, now)
}
