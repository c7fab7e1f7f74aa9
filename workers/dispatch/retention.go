package dispatch

import (
	"context"
	"log/slog"
	"time"
)

// DefaultRetention is how long events are kept (AVIARY_EVENTS_RETENTION):
// replay and backfill read them, and a dispatcher down longer than this
// loses the events it had not dispatched (docs/events.md).
const DefaultRetention = 7 * 24 * time.Hour

// DefaultConnectionsRetention is how long closed stream connection
// records are kept (AVIARY_STREAM_CONNECTIONS_RETENTION): GET
// /2/connections lists them as history (docs/streams.md).
const DefaultConnectionsRetention = 30 * 24 * time.Hour

// RetentionInterval is how often the retention sweep runs.
const RetentionInterval = 10 * time.Minute

// RetentionStore deletes old events, webhook deliveries and closed
// stream connections and leases the sweep's turn (storage/postgres.DB).
type RetentionStore interface {
	DeleteEventsOlderThan(ctx context.Context, age time.Duration, batch int) (int64, error)
	DeleteWebhookDeliveriesOlderThan(ctx context.Context, age time.Duration, batch int) (int64, error)
	DeleteStreamConnectionsClosedBefore(ctx context.Context, age time.Duration, batch int) (int64, error)
	ClaimTaskLease(ctx context.Context, taskID, holder string, ttl time.Duration) (bool, error)
}

// retentionTask is the task lease id of a sweep turn: one replica per
// Interval deletes.
const retentionTask = "events:retention"

// Retention deletes the events and webhook deliveries (any state, with
// their attempts) older than Age, and the stream connection records closed
// more than ConnectionsAge ago, every Interval, in batches.
type Retention struct {
	Store          RetentionStore
	Age            time.Duration // DefaultRetention when 0
	ConnectionsAge time.Duration // DefaultConnectionsRetention when 0
	Interval       time.Duration // RetentionInterval when 0
	Batch          int           // rows per statement (10,000 when 0)
	Logger         *slog.Logger
	Holder         string // random when empty
}

// Run sweeps until ctx ends, first at once.
func (r *Retention) Run(ctx context.Context) {
	r.defaults()
	log := r.Logger.With("component", "events-retention")
	for ctx.Err() == nil {
		n, err := r.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("delete old events, webhook deliveries and stream connections", "err", err)
		}
		if n.Events > 0 {
			log.Info("deleted old events", "count", n.Events, "older_than", r.Age)
		}
		if n.Deliveries > 0 {
			log.Info("deleted old webhook deliveries", "count", n.Deliveries, "older_than", r.Age)
		}
		if n.Connections > 0 {
			log.Info("deleted old stream connections", "count", n.Connections, "closed_before", r.ConnectionsAge)
		}
		sleep(ctx, r.Interval)
	}
}

func (r *Retention) defaults() {
	if r.Age <= 0 {
		r.Age = DefaultRetention
	}
	if r.ConnectionsAge <= 0 {
		r.ConnectionsAge = DefaultConnectionsRetention
	}
	if r.Interval <= 0 {
		r.Interval = RetentionInterval
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.Holder == "" {
		r.Holder = holderID()
	}
}

// Swept counts what a sweep deleted.
type Swept struct {
	Events      int64
	Deliveries  int64 // webhook deliveries
	Connections int64 // closed stream connection records
}

// Sweep deletes the old events and closed stream connections if no other
// replica took this interval's turn; it returns how many it deleted.
func (r *Retention) Sweep(ctx context.Context) (Swept, error) {
	r.defaults()
	var n Swept
	ok, err := r.Store.ClaimTaskLease(ctx, retentionTask, r.Holder, r.Interval)
	if err != nil || !ok {
		return n, err
	}
	n.Events, err = r.Store.DeleteEventsOlderThan(ctx, r.Age, r.Batch)
	if err != nil {
		return n, err
	}
	n.Deliveries, err = r.Store.DeleteWebhookDeliveriesOlderThan(ctx, r.Age, r.Batch)
	if err != nil {
		return n, err
	}
	n.Connections, err = r.Store.DeleteStreamConnectionsClosedBefore(ctx, r.ConnectionsAge, r.Batch)
	return n, err
}
