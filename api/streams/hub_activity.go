package streams

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
)

// activityLoop reads the activity stream (the activity sink's rendered
// events, docs/activity.md) after its newest entry at start and hands each
// to the local activity streams of its app. Entries arrive in (seq,
// subscription) order; a re-offered batch's repeats are skipped by that
// pair. After a Redis error it retries from the last id it read (the
// stream keeps about bus.DefaultMaxLen entries, so a short outage loses
// nothing; an emptied Redis loses what it held: the log is matched by the
// worker, not here).
func (h *Hub) activityLoop(ctx context.Context) {
	after, backoff, failing := "", 100*time.Millisecond, false
	var last [2]int64 // (seq, subscription) of the newest routed
	for ctx.Err() == nil {
		var ds []bus.ActivityDelivery
		var err error
		if after == "" {
			after, err = h.Bus.LastActivityID(ctx)
		} else {
			ds, err = h.Bus.ReadActivity(ctx, after, h.Block, readCount)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
				h.Logger.Warn("stream hub: reading activity failed; retrying", "err", err)
			}
			failing = true
			sleep(ctx, backoff)
			backoff = min(backoff*2, maxBackoff)
			continue
		}
		failing, backoff = false, 100*time.Millisecond
		for _, d := range ds {
			after = d.StreamID
			a := d.Activity
			if a.Seq == 0 || !beyond(last, a.Seq, a.SubscriptionID) {
				continue
			}
			last = [2]int64{a.Seq, a.SubscriptionID}
			h.routeActivity(a)
		}
	}
}

// routeActivity hands a to the local activity streams of its app; a
// stream too far behind is ended.
func (h *Hub) routeActivity(a events.Activity) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := Delivery{Seq: a.Seq, Body: a.Body, SubscriptionID: a.SubscriptionID}
	for _, c := range h.byApp[a.AppID] {
		if c.Endpoint != storage.EndpointActivityStream {
			continue
		}
		if !c.push(d) {
			c.finish(storage.DisconnectSlowClient)
		}
	}
}
