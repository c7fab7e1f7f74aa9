package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers"
	"github.com/aviary-dev/aviary/workers/audiences"
	"github.com/aviary-dev/aviary/workers/catalogs"
	"github.com/aviary-dev/aviary/workers/compliance"
	"github.com/aviary-dev/aviary/workers/dispatch"
	"github.com/aviary-dev/aviary/workers/donotreach"
	"github.com/aviary-dev/aviary/workers/insights"
	"github.com/aviary-dev/aviary/workers/media"
	"github.com/aviary-dev/aviary/workers/news"
	"github.com/aviary-dev/aviary/workers/sweep"
	workerhooks "github.com/aviary-dev/aviary/workers/webhooks"
)

// sweeper is a sweep.Sweeper of any record type.
type sweeper interface {
	Run(ctx context.Context)
	Nudge()
}

// runWorkers runs the asynq server and, if enabled, the sweepers until ctx
// ends; in-flight tasks get the shutdown grace, then return to the queue.
// reg receives the task metrics.
func runWorkers(ctx context.Context, cfg *config, b *backends, log *slog.Logger, reg prometheus.Registerer) error {
	queues, err := cfg.queues()
	if err != nil {
		return err
	}
	srv := workers.NewServer(b.asynqRC, workers.ServerConfig{
		TaskCheckInterval: cfg.TaskCheckInterval,
		Queues:            queues, Concurrency: cfg.WorkerConcurrency, ShutdownTimeout: cfg.ShutdownTimeout, Logger: log,
	})
	processor := &compliance.Processor{Store: b.db, Blobs: b.blobs, Logger: log}
	var wg sync.WaitGroup
	sctx, cancel := context.WithCancel(ctx)
	// Keep asynq's queue list whole even if Redis lost its data while API
	// processes (whose clients list a queue only once) kept running.
	wg.Go(func() {
		workers.KeepQueuesListed(sctx, b.redis, slices.Sorted(maps.Keys(queues)), workers.QueueListInterval, log)
	})
	if cfg.Reconcile {
		// A finished job hands the next one of its app and type straight
		// to the uploads sweeper instead of waiting for its tick.
		processor.Next = startSweepers(sctx, &wg, cfg, b, log)
	}
	videoSlots, imageSlots := cfg.mediaSlots()
	mediaProcessor := &media.Processor{Store: b.db, Blobs: b.blobs, Logger: log, Faults: faultsStore(b),
		VideoMaxPixelRate: cfg.MediaVideoMaxPixelRate, VideoMaxPixels: cfg.MediaVideoMaxPixels,
		Slots: media.Slots{Video: videoSlots, Image: imageSlots}}
	if tasks.MediaTranscodeTimeout(cfg.MediaVideoMaxPixels) > tasks.MediaTaskTimeout {
		log.Warn("AVIARY_MEDIA_VIDEO_MAX_PIXELS allows transcodes longer than the media task timeout: such videos time out and are retried",
			"transcode", tasks.MediaTranscodeTimeout(cfg.MediaVideoMaxPixels), "task_timeout", tasks.MediaTaskTimeout)
	}
	// Working files of a worker killed mid-task on this machine.
	if n, err := mediaProcessor.RemoveStale(tasks.MediaTaskTimeout + 10*time.Minute); err != nil {
		log.Warn("remove stale media working directories", "err", err)
	} else if n > 0 {
		log.Info("removed stale media working directories", "count", n)
	}
	doNotReach := donotreach.NewProcessor(b.db, log)
	imageChecks, err := newImageChecks(cfg, b, log)
	if err != nil {
		cancel()
		wg.Wait()
		return err
	}
	audienceBatches := audiences.NewProcessor(b.db, log)
	insightsApplier := &insights.Applier{Store: b.db, Logger: log,
		Counter: insights.Counter{PairSample: uint64(cfg.InsightsPairSample)}}
	hold := &sweep.Hold{Leases: b.db, Logger: log}
	_, jobs := startOpsRecorder(b, log)
	mux := workers.NewMux(workers.Deps{Catalogs: imageChecks, Compliance: processor, Media: mediaProcessor, DoNotReach: doNotReach,
		Audiences: audienceBatches, Insights: insightsApplier,
		News: &news.Refresher{Store: b.db, Logger: log}, WebhookReplay: &workerhooks.Replayer{Store: b.db, Logger: log},
		Logger: log, Registerer: reg, Hold: hold, Jobs: jobs})
	if err := srv.Start(mux); err != nil {
		cancel()
		wg.Wait()
		return fmt.Errorf("start worker: %w", err)
	}
	startDispatcher(sctx, &wg, b, log, reg)
	startActivityDispatchers(sctx, cfg, &wg, b, log, reg)
	if err := startWebhookDeliveries(sctx, &wg, cfg, b, log, reg); err != nil {
		cancel()
		wg.Wait()
		srv.Shutdown()
		return err
	}
	if err := startWebhookCRC(sctx, &wg, cfg, b, log); err != nil {
		cancel()
		wg.Wait()
		srv.Shutdown()
		return err
	}
	log.Info("worker started", "queues", queues, "concurrency", cfg.WorkerConcurrency)
	<-ctx.Done()
	log.Info("worker shutting down", "grace", cfg.ShutdownTimeout)
	cancel()
	wg.Wait()
	srv.Shutdown()
	// The runs asynq stopped release their task leases before the process
	// exits, so their tasks run again at once elsewhere (docs/outages.md).
	released, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if err := hold.Wait(released); err != nil {
		log.Warn("task leases left to lapse", "err", err)
	}
	return nil
}

// startSweepers runs one sweeper per domain, all on one queue client, and
// returns the compliance uploads sweeper.
func startSweepers(ctx context.Context, wg *sync.WaitGroup, cfg *config, b *backends, log *slog.Logger) *sweep.Sweeper[storage.ComplianceJob] {
	queue := asynq.NewClient(b.asynqRC)
	inspector := asynq.NewInspector(b.asynqRC)
	locker := sweep.RedisLocker{Client: b.redis, Prefix: "aviary:lock:"}
	uploads := &sweep.Sweeper[storage.ComplianceJob]{
		Source: &compliance.Uploads{Store: b.db, Blobs: b.blobs, Logger: log.With("component", "sweep")},
		Queue:  queue, Inspector: inspector, Locker: locker, Leases: b.db,
		Logger: log.With("component", "sweep"), Interval: cfg.ReconcileInterval,
	}
	// Retention deletes finished jobs' blobs after their retention
	// (docs/compliance-lifecycle.md): a sweep source like uploads, so one
	// replica per tick does it under the same kind of Redis lease.
	retention := &sweep.Sweeper[storage.ComplianceJob]{
		Source: &compliance.Retention{Store: b.db, Blobs: b.blobs, Logger: log.With("component", "retention")},
		Queue:  queue, Locker: locker,
		Logger: log.With("component", "retention"), Interval: cfg.ReconcileInterval,
	}
	// Media: re-enqueue finalized media whose task was lost, remove
	// uploads that expired unfinalized (docs/media-upload.md).
	mediaSweep := &sweep.Sweeper[storage.Media]{
		Source: &media.Sweep{Store: b.db, Blobs: b.blobs, Logger: log.With("component", "sweep")},
		Queue:  queue, Inspector: inspector, Locker: locker, Leases: b.db,
		Logger: log.With("component", "sweep"), Interval: cfg.ReconcileInterval,
	}
	// Do-not-reach: re-enqueue recorded batches whose task was lost; remove
	// expired entries on their own interval (docs/ads-do-not-reach.md).
	doNotReachBatches := &sweep.Sweeper[storage.Batch]{
		Source: &sweep.Batches{Kind: storage.DoNotReachBatches, Task: tasks.DoNotReachBatch, Store: b.db, Logger: log.With("component", "sweep")},
		Queue:  queue, Inspector: inspector, Locker: locker, Leases: b.db,
		Logger: log.With("component", "sweep"), Interval: cfg.ReconcileInterval,
	}
	doNotReachExpiry := &sweep.Sweeper[string]{
		Source: sweep.Expiry(storage.DoNotReachBatches, b.db, log.With("component", "expiry")),
		Queue:  queue, Locker: locker,
		Logger: log.With("component", "expiry"), Interval: sweep.ExpiryInterval,
	}
	// Killed runs: a lapsed task lease whose task asynq still lists active
	// is rescued under a derived id within seconds, instead of after
	// asynq's own lease recovery (docs/outages.md).
	rescue := &sweep.Sweeper[storage.TaskLease]{
		Source: &sweep.Rescue{Store: b.db, Tasks: inspector, Logger: log.With("component", "rescue")},
		Queue:  queue, Inspector: inspector, Locker: locker,
		Logger: log.With("component", "rescue"), Interval: min(cfg.ReconcileInterval, sweep.RescueInterval),
		// A replica that dies holding the tick's lock delays rescues by no
		// more than this; two ticks at once are harmless (derived ids).
		LockTTL: 3 * time.Second, TickTimeout: 3 * time.Second,
	}
	sweepers := []sweeper{uploads, retention, mediaSweep, doNotReachBatches, doNotReachExpiry, rescue}
	// Catalogs: enqueue image checks of product versions whose task was
	// lost (docs/ads-catalog-images.md).
	catalogImages := &sweep.Sweeper[storage.Product]{
		Source: &catalogs.Sweep{Store: b.db, Tasks: inspector, Logger: log.With("component", "sweep")},
		Queue:  queue, Inspector: inspector, Locker: locker, Leases: b.db,
		Logger: log.With("component", "sweep"), Interval: cfg.ReconcileInterval,
	}
	sweepers = append(sweepers, catalogImages)
	// Custom audiences: re-enqueue recorded users batches whose task was
	// lost; remove expired members on their own interval
	// (docs/ads-audiences.md).
	sweepers = append(sweepers, &sweep.Sweeper[storage.Batch]{
		Source: &sweep.Batches{Kind: storage.AudienceBatches, Task: tasks.AudienceBatch, Store: b.db, Logger: log.With("component", "sweep")},
		Queue:  queue, Inspector: inspector, Locker: locker, Leases: b.db,
		Logger: log.With("component", "sweep"), Interval: cfg.ReconcileInterval,
	}, &sweep.Sweeper[string]{
		Source: sweep.Expiry(storage.AudienceBatches, b.db, log.With("component", "expiry")),
		Queue:  queue, Locker: locker,
		Logger: log.With("component", "expiry"), Interval: sweep.ExpiryInterval,
	})
	// Keyword insights: keep insights:apply queued while the change log
	// holds rows (docs/insights.md).
	sweepers = append(sweepers, &sweep.Sweeper[string]{
		Source: insights.Sweep(b.db, inspector, log.With("component", "sweep")),
		Queue:  queue, Inspector: inspector, Locker: locker,
		Logger: log.With("component", "sweep"), Interval: insights.Interval, Routine: true,
	})
	// Webhook replays: re-enqueue jobs still queued whose task was lost,
	// end those whose task was archived (docs/webhooks.md, "Replay").
	sweepers = append(sweepers, &sweep.Sweeper[storage.WebhookReplayJob]{
		Source: &workerhooks.ReplaySweep{Store: b.db, Logger: log.With("component", "sweep")},
		Queue:  queue, Inspector: inspector, Locker: locker, Leases: b.db,
		Logger: log.With("component", "sweep"), Interval: cfg.ReconcileInterval,
	})
	// News: enqueue news:refresh every AVIARY_NEWS_INTERVAL (docs/news.md).
	// Its runs hold the task's lease (workers.NewMux): a tick never enqueues
	// the refresh while a live run (or a rescue of a killed one) holds it.
	newsSweep := news.NewSweeper(queue, inspector, locker, cfg.NewsInterval, log.With("component", "sweep"))
	newsSweep.Leases = b.db
	sweepers = append(sweepers, newsSweep)
	// Events: delete the events older than AVIARY_EVENTS_RETENTION and the
	// stream connections closed before AVIARY_STREAM_CONNECTIONS_RETENTION,
	// one replica per turn (docs/events.md, docs/streams.md).
	eventsRetention := &dispatch.Retention{Store: b.db, Age: cfg.EventsRetention,
		ConnectionsAge: cfg.StreamConnectionsRetention, Logger: log}
	wg.Go(func() { eventsRetention.Run(ctx) })
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer queue.Close()
		defer inspector.Close()
		var inner sync.WaitGroup
		for _, s := range sweepers {
			inner.Go(func() { s.Run(ctx) })
		}
		inner.Wait()
	}()
	startUploadWatch(ctx, wg, cfg, uploads, log)
	return uploads
}

// eventSinks are the dispatcher's sinks, in the order each batch reaches
// them (docs/events.md).
func eventSinks(b *backends, log *slog.Logger) []dispatch.Sink {
	// Webhook deliveries and activity join the filtered stream's matcher.
	return []dispatch.Sink{dispatch.NewStreamMatcher(b.db, bus.New(b.redis, eventBusPrefix), log)}
}

// eventBusPrefix starts the Redis keys of the event half's bus: the
// dispatcher publishes and every API replica reads under it.
const eventBusPrefix = "aviary:"

// startDispatcher runs the event dispatcher until ctx ends: every worker
// replica runs one, the cursor's lease lets one dispatch at a time, and a
// stopped replica releases it so another takes over at once. Without
// sinks there is nothing to dispatch to: the cursor stays put, so the
// events wait for the sinks that come.
func startDispatcher(ctx context.Context, wg *sync.WaitGroup, b *backends, log *slog.Logger, reg prometheus.Registerer) {
	sinks := eventSinks(b, log)
	if len(sinks) == 0 {
		log.Info("event dispatcher not started: no sinks")
		return
	}
	d := &dispatch.Dispatcher{Log: b.db, Cursors: b.db, Listen: b.db, Sinks: sinks, Logger: log, Registerer: reg}
	wg.Go(func() {
		if err := d.Run(ctx); err != nil {
			log.Error("event dispatcher stopped", "err", err)
		}
	})
}

// newImageChecks builds the product image check processor; its fetches
// reach public addresses only, plus AVIARY_FETCH_ALLOWLIST.
func newImageChecks(cfg *config, b *backends, log *slog.Logger) (*catalogs.Processor, error) {
	allow, err := outbound.ParseAllowList(cfg.FetchAllowlist)
	if err != nil {
		return nil, fmt.Errorf("AVIARY_FETCH_ALLOWLIST: %w", err)
	}
	fetcher := outbound.New(outbound.Config{Allow: allow})
	return &catalogs.Processor{Store: b.db, Checker: &catalogs.Checker{Fetcher: fetcher}, Logger: log}, nil
}

// serveWorkerMetrics serves reg (plus Go and process metrics) at /metrics on
// addr for a standalone worker; stop closes the listener.
func serveWorkerMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (stop func(), err error) {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for worker metrics on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("worker metrics listener stopped", "err", err)
		}
	}()
	log.Info("worker metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
