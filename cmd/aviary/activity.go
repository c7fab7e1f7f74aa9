package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/workers/activity"
	"github.com/aviary-dev/aviary/workers/dispatch"
)

// activityCursor is the cursor of the dispatcher that delivers activity
// events (docs/activity.md): its own position in the log, so activity
// rendering never holds back the filtered stream or the webhook links.
const activityCursor = "activity"

// startActivityDispatcher runs, in every worker, the "activity"
// dispatcher (one replica at a time under the cursor's lease) until ctx
// ends. Its webhook deliveries are sent by the webhooks' Deliverer.
func startActivityDispatcher(ctx context.Context, wg *sync.WaitGroup, b *backends, log *slog.Logger, reg prometheus.Registerer) {
	sink := &activity.Sink{Store: b.db, Posts: &render.Hydrator{Store: b.db}, Bus: bus.New(b.redis, eventBusPrefix),
		Logger: log.With("component", "activity")}
	d := &dispatch.Dispatcher{Log: b.db, Cursors: b.db, Listen: b.db, Sinks: []dispatch.Sink{sink}, Logger: log,
		Registerer: reg, Cursor: activityCursor}
	wg.Go(func() {
		if err := d.Run(ctx); err != nil {
			log.Error("activity dispatcher stopped", "err", err)
		}
	})
}
