package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynq/x/metrics"
	"github.com/hibiken/asynqmon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/workers"
)

func migrate(ctx context.Context, cfg *config, report func([]string)) error {
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	report(applied)
	return nil
}

// startCommand parses a long-running subcommand's flags, builds its logger,
// migrates first if asked (the one-machine dev mode) and opens its
// backends; the caller closes them.
func startCommand(ctx context.Context, name string, args []string, stderr io.Writer, migrateFirst bool) (*config, *slog.Logger, *backends, error) {
	cfg, _, err := parseFlags(name, args, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	log := newLogger(cfg, stderr)
	if migrateFirst {
		if err := migrate(ctx, cfg, func(applied []string) { log.Info("migrations applied", "count", len(applied)) }); err != nil {
			return nil, nil, nil, err
		}
	}
	b, err := openBackends(ctx, cfg, log)
	return cfg, log, b, err
}

func runAPI(ctx context.Context, args []string, stderr io.Writer) error {
	return serve(ctx, "api", args, stderr, false)
}

// runDev is the one-machine mode: migrate, then API, workers and reconciler
// in one process.
func runDev(ctx context.Context, args []string, stderr io.Writer) error {
	return serve(ctx, "dev", args, stderr, true)
}

func runWorker(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, log, b, err := startCommand(ctx, "worker", args, stderr, false)
	if err != nil {
		return err
	}
	defer b.Close()
	return runWorkers(ctx, cfg, b, log)
}

// serve runs the HTTP API, and with withWorkers (dev mode, which also
// migrates first) the workers beside it, until ctx ends or one of them fails.
func serve(ctx context.Context, name string, args []string, stderr io.Writer, withWorkers bool) error {
	cfg, log, b, err := startCommand(ctx, name, args, stderr, withWorkers)
	if err != nil {
		return err
	}
	defer b.Close()
	handler, err := newAPIHandler(ctx, cfg, b, log)
	if err != nil {
		return err
	}
	if !withWorkers {
		return serveHTTP(ctx, cfg, handler, log)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, fn := range []func() error{
		func() error { return serveHTTP(ctx, cfg, handler, log) },
		func() error { return runWorkers(ctx, cfg, b, log) },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// newAPIHandler assembles the API handler with its middleware and mounts.
func newAPIHandler(ctx context.Context, cfg *config, b *backends, log *slog.Logger) (*api.Server, error) {
	errWriter := apierr.Writer{ProblemsBase: cfg.ProblemsBase, Logger: log}
	authn, err := auth.New(b.db, auth.NewRedisNonceStore(b.redis, "aviary:nonce:"), cfg.PublicURL, time.Now, errWriter)
	if err != nil {
		return nil, fmt.Errorf("configure authentication: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	inspector := asynq.NewInspector(b.asynqRC)
	reg.MustRegister(metrics.NewQueueMetricsCollector(inspector))
	queue := asynq.NewClient(b.asynqRC)
	b.closers = append(b.closers, func() { queue.Close(); inspector.Close() })
	mounts := map[string]http.Handler{}
	if b.local != nil {
		mounts["/blobs/"] = b.local.Handler()
	}
	if cfg.AdminPassword != "" {
		mon := asynqmon.New(asynqmon.Options{RootPath: "/admin/queues", RedisConnOpt: b.asynqRC, ReadOnly: false})
		mounts["/admin/queues/"] = basicAuth(cfg.AdminUser, cfg.AdminPassword, mon)
		b.closers = append(b.closers, func() { mon.Close() })
	}
	return api.New(api.Deps{
		Store: b.db, Blobs: b.blobs, Queue: queue, Auth: authn,
		Limiter: ratelimit.NewLimiter(b.redis, "aviary:", time.Now, errWriter),
		Errors:  errWriter, Logger: log, Registerer: reg, Gatherer: reg, Mounts: mounts,
		RateLimitScale: cfg.RateLimitScale,
		Ready: []api.Check{
			{Name: "database", Check: b.db.Ping},
			{Name: "redis", Check: func(ctx context.Context) error { return b.redis.Ping(ctx).Err() }},
			{Name: "blobs", Check: b.blobs.Ping},
		},
	}), nil
}

// Connection timeouts of the API listener; the whole-request read timeout
// is AVIARY_HTTP_READ_TIMEOUT.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
)

// newHTTPServer is the API listener serving handler.
func newHTTPServer(cfg *config, handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Addr: cfg.HTTPAddr, Handler: handler,
		ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: cfg.HTTPReadTimeout, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// basicAuth guards the queue dashboard with the admin credential.
func basicAuth(user, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="aviary admin"`)
			http.Error(w, "admin credentials required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveHTTP serves handler until ctx ends, then marks it draining (/readyz
// answers 503) and drains in-flight requests.
func serveHTTP(ctx context.Context, cfg *config, handler *api.Server, log *slog.Logger) error {
	srv := newHTTPServer(cfg, handler, log)
	errs := make(chan error, 1)
	go func() {
		log.Info("api listening", "addr", srv.Addr, "public_url", cfg.PublicURL, "tls", cfg.TLSCert != "")
		if cfg.TLSCert != "" && cfg.TLSKey != "" {
			errs <- srv.ListenAndServeTLS(cfg.TLSCert, cfg.TLSKey)
		} else {
			errs <- srv.ListenAndServe()
		}
	}()
	select {
	case err := <-errs:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	log.Info("api shutting down", "grace", cfg.ShutdownTimeout)
	handler.SetDraining()
	if cfg.DrainDelay > 0 {
		log.Info("draining before closing the listener", "delay", cfg.DrainDelay)
		time.Sleep(cfg.DrainDelay) // keep serving while load balancers see /readyz 503
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown http: %w", err)
	}
	if err := <-errs; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// runWorkers runs the asynq server and, if enabled, the reconciler until
// ctx ends; in-flight tasks get the shutdown grace, then return to the queue.
func runWorkers(ctx context.Context, cfg *config, b *backends, log *slog.Logger) error {
	queues, err := cfg.queues()
	if err != nil {
		return err
	}
	comp := &workers.Compliance{Store: b.db, Blobs: b.blobs, Logger: log}
	srv := workers.NewServer(b.asynqRC, workers.ServerConfig{
		Queues: queues, Concurrency: cfg.WorkerConcurrency, ShutdownTimeout: cfg.ShutdownTimeout,
		Logger: log, ErrorHandler: comp.HandleError,
	})
	if err := srv.Start(workers.NewMux(workers.Handlers{Compliance: comp})); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	log.Info("worker started", "queues", queues, "concurrency", cfg.WorkerConcurrency)
	var wg sync.WaitGroup
	rctx, cancel := context.WithCancel(ctx)
	if cfg.Reconcile {
		startReconciler(rctx, &wg, cfg, b, log)
	}
	<-ctx.Done()
	log.Info("worker shutting down", "grace", cfg.ShutdownTimeout)
	cancel()
	wg.Wait()
	srv.Shutdown()
	return nil
}

func startReconciler(ctx context.Context, wg *sync.WaitGroup, cfg *config, b *backends, log *slog.Logger) {
	queue := asynq.NewClient(b.asynqRC)
	inspector := asynq.NewInspector(b.asynqRC)
	rec := &workers.Reconciler{
		Store: b.db, Blobs: b.blobs, Queue: queue, Inspector: inspector,
		Locker: workers.RedisLocker{Client: b.redis, Prefix: "aviary:lock:"},
		Logger: log.With("component", "reconciler"), Interval: cfg.ReconcileInterval,
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer queue.Close()
		defer inspector.Close()
		rec.Run(ctx)
	}()
	startUploadWatch(ctx, wg, cfg, rec, log)
}
