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

// startActivityDispatchers runs, in every worker, the two activity
// dispatchers (docs/activity.md), each on its own cursor in the log (one
// replica at a time under the cursor's lease) until ctx ends: "activity"
// records webhook deliveries (sent by the webhooks' Deliverer) and
// "activity-stream" publishes to the Redis activity stream, so a Redis
// outage never stops the webhooks, nor a PostgreSQL write error the
// stream, and neither holds back the filtered stream or the webhook links.
func startActivityDispatchers(ctx context.Context, cfg *config, wg *sync.WaitGroup, b *backends, log *slog.Logger, reg prometheus.Registerer) {
	posts := &render.Hydrator{Store: b.db, MediaURLs: render.NewMediaURLs(cfg.PublicURL)}
	sinks := []*activity.Sink{
		{Mode: activity.Webhooks, Store: b.db, Posts: posts, Logger: log.With("component", activity.WebhooksCursor)},
		{Mode: activity.Stream, Store: b.db, Posts: posts, Logger: log.With("component", activity.StreamCursor),
			Bus: &bus.ActivityPublisher{Bus: bus.New(b.redis, eventBusPrefix), Logger: log.With("component", activity.StreamCursor)}},
	}
	for _, sink := range sinks {
		d := &dispatch.Dispatcher{Log: b.db, Cursors: b.db, Listen: b.db, Sinks: []dispatch.Sink{sink}, Logger: log,
			Registerer: reg, Cursor: sink.Name()}
		wg.Go(func() {
			if err := d.Run(ctx); err != nil {
				log.Error("activity dispatcher stopped", "cursor", sink.Name(), "err", err)
			}
		})
	}
}
