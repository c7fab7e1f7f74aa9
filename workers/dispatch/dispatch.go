// Package dispatch reads the event log in order from a committed cursor
// and hands each batch to its sinks (docs/events.md): stream matching now,
// webhook deliveries and activity next. Delivery is at-least-once: the
// cursor moves only after every sink took the batch, and receivers
// de-duplicate on the event's Seq. One worker replica at a time
// dispatches per cursor name, under the cursor's lease.
package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/events"
)

// Sink takes the events a dispatcher reads, batch by batch, in Seq order.
// An error makes the dispatcher offer the same batch again later (after
// a backoff, or from another replica): Handle must tolerate seeing events
// twice.
type Sink interface {
	Name() string
	Handle(ctx context.Context, batch []events.Event) error
}

// Cursors keep dispatchers' committed positions under a lease
// (storage/postgres.DB).
type Cursors interface {
	ClaimEventCursor(ctx context.Context, name, holder string, ttl time.Duration) (int64, bool, error)
	RenewEventCursor(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	CommitEventCursor(ctx context.Context, name, holder string, seq int64, ttl time.Duration) (bool, error)
	ReleaseEventCursor(ctx context.Context, name, holder string) error
}

// Listener wakes a dispatcher when events are appended
// (storage/postgres.DB: LISTEN aviary_events on a dedicated connection).
type Listener interface {
	ListenEvents(ctx context.Context) (wait func(ctx context.Context) error, close func(), err error)
}

// Defaults of a Dispatcher's zero fields.
const (
	DefaultCursor     = "dispatch"
	DefaultBatch      = 500
	DefaultPoll       = time.Second
	DefaultLease      = 15 * time.Second
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
	// DefaultCommitEvery: while batches come full, the cursor is committed
	// this often rather than after each one. A commit waits for the WAL's
	// flush (a few ms: with one per batch of 500 the dispatcher ran at
	// about half the rate of a bare read-and-publish loop); a crash
	// offers again at most this much, which at-least-once allows.
	DefaultCommitEvery = 100 * time.Millisecond
	// DefaultPoisonAfter failures (about 3 s of backoff from
	// DefaultMinBackoff) before a batch is taken apart.
	DefaultPoisonAfter = 5
)

// Dispatcher reads Log after its cursor and calls every Sink in order on
// each batch, then commits the cursor.
type Dispatcher struct {
	Log     events.Log
	Cursors Cursors
	// Listen wakes the dispatcher at once on an append; nil: it polls
	// only. It polls every Poll anyway, so a lost notification (or
	// listening connection) costs at most Poll.
	Listen Listener
	Sinks  []Sink
	Logger *slog.Logger
	// Registerer receives the metrics (nil: a private registry).
	Registerer prometheus.Registerer

	Cursor     string        // cursor name (DefaultCursor)
	Holder     string        // this replica's lease holder id (random)
	Batch      int           // events per read (DefaultBatch)
	Poll       time.Duration // (DefaultPoll)
	Lease      time.Duration // lease length, renewed at a third (DefaultLease)
	MinBackoff time.Duration // first wait after a failure (DefaultMinBackoff)
	MaxBackoff time.Duration // longest wait (DefaultMaxBackoff)
	// CommitEvery is how often the cursor is committed while batches come
	// full (DefaultCommitEvery); a batch that is not full (caught up) is
	// committed at once.
	CommitEvery time.Duration
	// PoisonAfter is how many times a sink fails a batch before its events
	// are handed over one at a time, and one event before it may be
	// skipped as a poison event (DefaultPoisonAfter; see deliverSingly).
	PoisonAfter int

	metrics *metrics
	wake    chan struct{}
	// leaseEnd is when the lease lapses, by this process's clock, counted
	// from before the statement that took or renewed it (so never later
	// than the database's).
	leaseEnd time.Time
}

func (d *Dispatcher) defaults() {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Cursor == "" {
		d.Cursor = DefaultCursor
	}
	if d.Holder == "" {
		d.Holder = holderID()
	}
	if d.Batch <= 0 {
		d.Batch = DefaultBatch
	}
	if d.Poll <= 0 {
		d.Poll = DefaultPoll
	}
	if d.Lease <= 0 {
		d.Lease = DefaultLease
	}
	if d.MinBackoff <= 0 {
		d.MinBackoff = DefaultMinBackoff
	}
	if d.CommitEvery <= 0 {
		d.CommitEvery = DefaultCommitEvery
	}
	if d.PoisonAfter <= 0 {
		d.PoisonAfter = DefaultPoisonAfter
	}
	if d.MaxBackoff < d.MinBackoff {
		d.MaxBackoff = max(DefaultMaxBackoff, d.MinBackoff)
	}
	if d.Registerer == nil {
		d.Registerer = prometheus.NewRegistry()
	}
	d.metrics = newMetrics(d.Registerer)
	d.wake = make(chan struct{}, 1)
	d.Logger = d.Logger.With("component", "dispatch", "cursor", d.Cursor)
}

// holderID names this process: host, pid and a random suffix.
func holderID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Run dispatches until ctx ends, then releases the lease so another
// replica takes over at once. It returns nil when ctx ended.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.defaults()
	d.Logger.Info("dispatcher started", "holder", d.Holder, "sinks", len(d.Sinks))
	done := make(chan struct{})
	if d.Listen != nil {
		go func() { defer close(done); d.listen(ctx) }()
	} else {
		close(done)
	}
	for ctx.Err() == nil {
		cursor, ok := d.claim(ctx)
		if !ok {
			continue
		}
		d.Logger.Info("dispatcher holds the cursor", "seq", cursor)
		d.metrics.held.With(d.labels()).Set(1)
		d.dispatch(ctx, cursor)
		d.metrics.held.With(d.labels()).Set(0)
	}
	release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.Cursors.ReleaseEventCursor(release, d.Cursor, d.Holder); err != nil {
		d.Logger.Warn("release event cursor", "err", err)
	}
	<-done
	d.Logger.Info("dispatcher stopped")
	return nil
}

func (d *Dispatcher) labels() prometheus.Labels { return prometheus.Labels{"cursor": d.Cursor} }

// claim waits until this replica holds the cursor's lease (or ctx ends)
// and returns the committed cursor.
func (d *Dispatcher) claim(ctx context.Context) (int64, bool) {
	start := time.Now()
	cursor, ok, err := d.Cursors.ClaimEventCursor(ctx, d.Cursor, d.Holder, d.Lease)
	if err != nil && ctx.Err() == nil {
		d.Logger.Warn("claim event cursor", "err", err)
	}
	if err != nil || !ok {
		sleep(ctx, d.Lease/3)
		return 0, false
	}
	d.leaseEnd = start.Add(d.Lease)
	return cursor, true
}

// dispatch delivers batches after cursor while the lease holds. The
// cursor is committed after a batch that is not full, before waiting, and
// at least every CommitEvery; when ctx ends, what was delivered is
// committed on the way out.
func (d *Dispatcher) dispatch(ctx context.Context, cursor int64) {
	lagAt := time.Time{}
	committed, committedAt := cursor, time.Now()
	for ctx.Err() == nil {
		if !d.keepLease(ctx) {
			return
		}
		batch, err := d.Log.EventsAfter(ctx, cursor, d.Batch)
		if err != nil {
			if ctx.Err() == nil {
				d.Logger.Warn("read events", "after", cursor, "err", err)
				sleep(ctx, d.MinBackoff)
			}
			continue
		}
		if time.Since(lagAt) >= d.Poll || len(batch) == 0 {
			d.observeLag(ctx, cursor, batch)
			lagAt = time.Now()
		}
		if len(batch) == 0 {
			if cursor > committed {
				if !d.commit(ctx, cursor) {
					return
				}
				committed, committedAt = cursor, time.Now()
			}
			d.idle(ctx)
			continue
		}
		if !d.deliver(ctx, batch) {
			return
		}
		cursor = batch[len(batch)-1].Seq
		d.metrics.dispatched.With(d.labels()).Add(float64(len(batch)))
		if len(batch) == d.Batch && time.Since(committedAt) < d.CommitEvery {
			continue // more is coming: commit once per CommitEvery
		}
		if !d.commit(ctx, cursor) {
			return
		}
		committed, committedAt = cursor, time.Now()
	}
	if cursor > committed {
		final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		d.commit(final, cursor)
	}
}

// idle waits for a notification, the poll interval or the lease's renewal
// time, whichever comes first.
func (d *Dispatcher) idle(ctx context.Context) {
	wait := min(d.Poll, time.Until(d.leaseEnd)-2*d.Lease/3)
	t := time.NewTimer(max(wait, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-d.wake:
	case <-t.C:
	}
}

// keepLease renews the lease once a third of it passed; false when it is
// lost (another replica may hold it now).
func (d *Dispatcher) keepLease(ctx context.Context) bool {
	if time.Until(d.leaseEnd) > 2*d.Lease/3 {
		return true
	}
	for ctx.Err() == nil {
		start := time.Now()
		ok, err := d.Cursors.RenewEventCursor(ctx, d.Cursor, d.Holder, d.Lease)
		if err == nil {
			if !ok {
				d.Logger.Warn("event cursor lease lost")
				return false
			}
			d.leaseEnd = start.Add(d.Lease)
			return true
		}
		if ctx.Err() != nil || time.Now().After(d.leaseEnd) {
			return false
		}
		d.Logger.Warn("renew event cursor lease", "err", err)
		sleep(ctx, d.MinBackoff)
	}
	return false
}

// deliver hands batch to every sink in order, retrying a failing sink
// with backoff (from that sink on) while the lease holds; false when the
// lease was lost or ctx ended first.
func (d *Dispatcher) deliver(ctx context.Context, batch []events.Event) bool {
	for _, s := range d.Sinks {
		if !d.deliverTo(ctx, s, batch) {
			return false
		}
	}
	return ctx.Err() == nil
}

// deliverTo hands batch to s until it takes it. After PoisonAfter failures
// it hands its events over one at a time (deliverSingly), so that one
// event the sink can never take does not hold every later event back;
// a batch of one event too (the usual batch of a quiet log), which
// deliverSingly probes with the events after it.
func (d *Dispatcher) deliverTo(ctx context.Context, s Sink, batch []events.Event) bool {
	backoff := d.MinBackoff
	for attempt := 1; ; attempt++ {
		err := d.handle(ctx, s, batch)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		d.Logger.Warn("sink failed; the batch is offered again", "sink", s.Name(),
			"from", batch[0].Seq, "to", batch[len(batch)-1].Seq, "retry_in", backoff, "err", err)
		if attempt >= d.PoisonAfter {
			return d.deliverSingly(ctx, s, batch)
		}
		if !d.backoff(ctx, &backoff) {
			return false
		}
	}
}

// deliverSingly hands the events of batch to s one at a time. An event
// that fails PoisonAfter times is a poison event, and skipped (logged as
// an error and counted), only when the sink then takes a later event and
// still fails it once more (poison): a sink that takes nothing (its
// database or Redis down) never loses an event, it is retried with backoff
// like a batch. Events after the batch are read from the log for that
// probe; with none yet, the last event is retried until one comes.
func (d *Dispatcher) deliverSingly(ctx context.Context, s Sink, batch []events.Event) bool {
	for i := 0; i < len(batch); i++ {
		one := batch[i : i+1]
		backoff := d.MinBackoff
		for attempt := 1; ; attempt++ {
			err := d.handle(ctx, s, one)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return false
			}
			if attempt >= d.PoisonAfter && d.poison(ctx, s, batch, i, err) {
				break
			}
			if !d.backoff(ctx, &backoff) {
				return false
			}
		}
	}
	return true
}

// poisonProbes is how many of the events after a failing one poison tries
// (stopping at the first the sink takes) before it calls it an outage.
const poisonProbes = 16

// poison reports whether batch[i], which s failed with err, is a poison
// event: s takes one of the (up to poisonProbes) events after it,
// delivering it (at-least-once allows twice), and fails batch[i] once
// more. It logs and counts a skip.
func (d *Dispatcher) poison(ctx context.Context, s Sink, batch []events.Event, i int, err error) bool {
	next := batch[i+1:]
	if len(next) < poisonProbes {
		after := batch[len(batch)-1].Seq
		read, rerr := d.Log.EventsAfter(ctx, after, poisonProbes-len(next))
		if rerr == nil {
			next = append(slices.Clip(next), read...)
		}
	}
	taken := false
	for _, e := range next[:min(len(next), poisonProbes)] {
		if d.handle(ctx, s, []events.Event{e}) == nil {
			taken = true
			break
		}
	}
	if !taken {
		return false // the sink takes nothing: an outage, not this event
	}
	if d.handle(ctx, s, batch[i:i+1]) == nil {
		return false // it went through after all
	}
	d.metrics.poisoned.WithLabelValues(d.Cursor, s.Name()).Inc()
	d.Logger.Error("poison event skipped: the sink fails it and takes a later one", "sink", s.Name(),
		"seq", batch[i].Seq, "type", string(batch[i].Type), "err", err)
	return true
}

// handle calls s on batch, timing it and counting a failure.
func (d *Dispatcher) handle(ctx context.Context, s Sink, batch []events.Event) error {
	start := time.Now()
	err := s.Handle(ctx, batch)
	d.metrics.handle.WithLabelValues(d.Cursor, s.Name()).Observe(time.Since(start).Seconds())
	if err != nil && ctx.Err() == nil {
		d.metrics.failures.WithLabelValues(d.Cursor, s.Name()).Inc()
	}
	return err
}

// backoff sleeps *wait, doubles it up to MaxBackoff and renews the lease;
// false when the lease was lost or ctx ended.
func (d *Dispatcher) backoff(ctx context.Context, wait *time.Duration) bool {
	sleep(ctx, *wait)
	*wait = min(2**wait, d.MaxBackoff)
	return ctx.Err() == nil && d.keepLease(ctx)
}

// commit moves the cursor to seq (and renews the lease); false when the
// lease was lost.
func (d *Dispatcher) commit(ctx context.Context, seq int64) bool {
	for {
		start := time.Now()
		ok, err := d.Cursors.CommitEventCursor(ctx, d.Cursor, d.Holder, seq, d.Lease)
		if err == nil {
			if ok {
				d.leaseEnd = start.Add(d.Lease)
			} else {
				d.Logger.Warn("event cursor lease lost before the commit; the batch will be offered again", "seq", seq)
			}
			return ok
		}
		if ctx.Err() != nil || time.Now().After(d.leaseEnd) {
			return false
		}
		d.Logger.Warn("commit event cursor", "seq", seq, "err", err)
		sleep(ctx, d.MinBackoff)
	}
}

// observeLag sets the lag gauge: events appended and not yet dispatched.
func (d *Dispatcher) observeLag(ctx context.Context, cursor int64, batch []events.Event) {
	head, err := d.Log.EventHead(ctx)
	if err != nil {
		return
	}
	if len(batch) > 0 {
		head = max(head, batch[len(batch)-1].Seq)
	}
	d.metrics.lag.With(d.labels()).Set(float64(max(head-cursor, 0)))
}

// listen turns notifications into wake-ups; the connection is opened
// again (after a backoff) whenever it fails.
func (d *Dispatcher) listen(ctx context.Context) {
	backoff := d.MinBackoff
	for ctx.Err() == nil {
		wait, closeConn, err := d.Listen.ListenEvents(ctx)
		if err != nil {
			if ctx.Err() == nil {
				d.Logger.Warn("listen for events; polling meanwhile", "retry_in", backoff, "err", err)
			}
			sleep(ctx, backoff)
			backoff = min(2*backoff, d.MaxBackoff)
			continue
		}
		backoff = d.MinBackoff
		d.poke() // anything appended while not listening
		for {
			if err := wait(ctx); err != nil {
				if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					d.Logger.Warn("event notifications lost; listening again", "err", err)
				}
				break
			}
			d.poke()
		}
		closeConn()
	}
}

func (d *Dispatcher) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// sleep waits for dt or until ctx ends.
func sleep(ctx context.Context, dt time.Duration) {
	t := time.NewTimer(dt)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
