package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
	"github.com/aviary-dev/aviary/workers/dispatch"
	workerhooks "github.com/aviary-dev/aviary/workers/webhooks"
)

// webhookAllow parses AVIARY_WEBHOOK_ALLOW.
func webhookAllow(cfg *config) (outbound.AllowList, error) {
	allow, err := outbound.ParseAllowList(cfg.WebhookAllow)
	if err != nil {
		return nil, fmt.Errorf("AVIARY_WEBHOOK_ALLOW: %w", err)
	}
	return allow, nil
}

// replayHorizon is how far back a replay may start: the events the
// deliveries were made of are kept AVIARY_EVENTS_RETENTION, and so are the
// deliveries (docs/webhooks.md, "Replay").
func (c *config) replayHorizon() time.Duration {
	return min(c.WebhookReplayMaxAge, c.EventsRetention)
}

// newWebhooks builds the webhooks feature; replay tasks go to queue.
func newWebhooks(cfg *config, b *backends, queue tasks.Enqueuer, val *validation.Validator, log *slog.Logger) (*webhooks.Module, error) {
	allow, err := webhookAllow(cfg)
	if err != nil {
		return nil, err
	}
	if len(allow) > 0 {
		log.Warn("AVIARY_WEBHOOK_ALLOW is set: webhook URLs of its hosts may use http and reach loopback or private addresses (development only)", "allow", cfg.WebhookAllow)
	}
	return webhooks.New(webhooks.Deps{Store: b.apiDB, Client: webhooks.NewClient(allow), Allow: allow, Faults: faultsStore(b),
		Validator: val, Logger: log, Max: cfg.WebhooksMax, Queue: queue, ReplayHorizon: cfg.replayHorizon()}), nil
}

// startWebhookCRC runs the CRC sweeper until ctx ends, in a worker that
// runs the sweepers (AVIARY_RECONCILE); claims keep each webhook's check to
// one replica.
func startWebhookCRC(ctx context.Context, wg *sync.WaitGroup, cfg *config, b *backends, log *slog.Logger) error {
	allow, err := webhookAllow(cfg)
	if err != nil {
		return err
	}
	if !cfg.Reconcile {
		return nil
	}
	s := &workerhooks.CRCSweeper{Store: b.db, Client: webhooks.NewClient(allow), Faults: faultsStore(b), Logger: log.With("component", "webhook-crc"),
		Interval: cfg.WebhookCRCInterval, Recheck: cfg.WebhookCRCRecheck}
	wg.Go(func() { s.Run(ctx) })
	return nil
}

// webhooksCursor is the cursor of the dispatcher that records webhook
// deliveries (its own position in the event log, so a slow receiver or a
// failing render never holds back the filtered stream's matcher).
const webhooksCursor = "webhooks"

// startWebhookDeliveries runs, in every worker, the "webhooks" dispatcher
// (its LinkSink records the deliveries of the stream links; one replica at
// a time under the cursor's lease) and the Deliverer (any number of
// replicas, one per webhook at a time under its delivery lease) until ctx
// ends (docs/webhooks.md, "Deliveries").
func startWebhookDeliveries(ctx context.Context, wg *sync.WaitGroup, cfg *config, b *backends, log *slog.Logger, reg prometheus.Registerer) error {
	allow, err := webhookAllow(cfg)
	if err != nil {
		return err
	}
	sink := workerhooks.NewLinkSink(b.db, b.db, render.Messages{Hydrator: &render.Hydrator{Store: b.db, MediaURLs: render.NewMediaURLs(cfg.PublicURL)}}, log.With("component", "webhook-links"))
	d := &dispatch.Dispatcher{Log: b.db, Cursors: b.db, Listen: b.db, Sinks: []dispatch.Sink{sink}, Logger: log,
		Registerer: reg, Cursor: webhooksCursor}
	wg.Go(func() {
		if err := d.Run(ctx); err != nil {
			log.Error("webhooks dispatcher stopped", "err", err)
		}
	})
	deliverer := &workerhooks.Deliverer{Store: b.db, Listen: b.db, Client: workerhooks.NewDeliveryClient(allow, cfg.WebhookDeliveryTimeout),
		Logger: log, Registerer: reg, Concurrency: cfg.WebhookDeliverers, Attempts: cfg.WebhookDeliveryAttempts,
		Backoff: cfg.WebhookRetryBackoff, ProbeInterval: cfg.WebhookProbeInterval, Timeout: cfg.WebhookDeliveryTimeout}
	wg.Go(func() {
		if err := deliverer.Run(ctx); err != nil {
			log.Error("webhook deliverer stopped", "err", err)
		}
	})
	return nil
}
