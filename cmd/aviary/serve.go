package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/internal/logbuf"
	"github.com/aviary-dev/aviary/storage/postgres"
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
// backends; the caller closes them, which flushes the log last.
func startCommand(ctx context.Context, name string, args []string, stderr io.Writer, migrateFirst bool) (*config, *slog.Logger, *backends, error) {
	cfg, _, err := parseFlags(name, args, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	out, flush := logOutput(cfg, stderr)
	log := newLogger(cfg, out)
	if migrateFirst {
		if err := migrate(ctx, cfg, func(applied []string) { log.Info("migrations applied", "count", len(applied)) }); err != nil {
			flush()
			return nil, nil, nil, err
		}
	}
	b, err := openBackends(ctx, cfg, log)
	if err != nil {
		flush()
		return nil, nil, nil, err
	}
	b.closers = append([]func(){flush}, b.closers...) // closers run last to first
	return cfg, log, b, nil
}

// logOutput is where a long-running command's log lines go: stderr, in
// batches every AVIARY_LOG_FLUSH_INTERVAL (a line per request otherwise
// costs a write(2) each), and the func that writes what is left.
func logOutput(cfg *config, stderr io.Writer) (io.Writer, func()) {
	if cfg.LogFlushInterval <= 0 {
		return stderr, func() {}
	}
	w := logbuf.New(stderr, 64<<10, cfg.LogFlushInterval)
	return w, w.Close
}

func runAPI(ctx context.Context, args []string, stderr io.Writer) error {
	return serve(ctx, "api", args, stderr, false)
}

// runDev is the one-machine mode: migrate, then API, workers and sweepers
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
	reg := prometheus.NewRegistry()
	if cfg.WorkerMetricsAddr != "" {
		stop, err := serveWorkerMetrics(cfg.WorkerMetricsAddr, reg, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	return runWorkers(ctx, cfg, b, log, reg)
}

// serve runs the HTTP API, and with withWorkers (dev mode, which also
// migrates first) the workers beside it, until ctx ends or one of them fails.
func serve(ctx context.Context, name string, args []string, stderr io.Writer, withWorkers bool) error {
	cfg, log, b, err := startCommand(ctx, name, args, stderr, withWorkers)
	if err != nil {
		return err
	}
	defer b.Close()
	cfg.dev = name == "dev"
	if err := applySeedDir(ctx, b.db, b.blobs, cfg.SeedDir, log); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	listeners, err := newAPIListeners(cfg, b, log, reg)
	if err != nil {
		return err
	}
	var jobs []func(context.Context) error
	for _, l := range listeners {
		jobs = append(jobs, func(ctx context.Context) error { return serveHTTP(ctx, cfg, l, log) })
	}
	if withWorkers {
		jobs = append(jobs, func(ctx context.Context) error { return runWorkers(ctx, cfg, b, log, reg) })
	}
	return runAll(ctx, jobs)
}

// runAll runs jobs until each returns; the first failure cancels the rest
// and is returned.
func runAll(ctx context.Context, jobs []func(context.Context) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, fn := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// Connection timeouts of the API listener; the whole-request read timeout
// is AVIARY_HTTP_READ_TIMEOUT.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
)

// newHTTPServer is an API listener on addr serving handler.
func newHTTPServer(cfg *config, addr string, handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Addr: addr, Handler: handler,
		ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: cfg.HTTPReadTimeout, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// connStates follows a server's connections, to tell a shutdown that
// timed out on running requests from one held up by connections that
// never sent one.
type connStates struct {
	mu     sync.Mutex
	states map[net.Conn]http.ConnState
}

// track is the server's ConnState hook.
func (c *connStates) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if state == http.StateClosed || state == http.StateHijacked {
		delete(c.states, conn)
		return
	}
	c.states[conn] = state
}

// active counts the connections with a request running.
func (c *connStates) active() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, st := range c.states {
		if st == http.StateActive {
			n++
		}
	}
	return n
}

// serveHTTP serves handler until ctx ends, then marks it draining (/readyz
// answers 503) and drains in-flight requests.
func serveHTTP(ctx context.Context, cfg *config, l listener, log *slog.Logger) error {
	handler := l.handler
	srv := newHTTPServer(cfg, l.addr, handler, log)
	busy := &connStates{states: map[net.Conn]http.ConnState{}}
	srv.ConnState = busy.track
	if l.connState != nil {
		srv.ConnState = func(c net.Conn, st http.ConnState) {
			busy.track(c, st)
			l.connState(c, st)
		}
	}
	errs := make(chan error, 1)
	go func() {
		log.Info(l.name+" listening", "addr", srv.Addr, "tls", cfg.TLSCert != "")
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
	if l.beforeShutdown != nil {
		l.beforeShutdown(sctx) // streams end with operational-disconnect
	}
	if err := srv.Shutdown(sctx); err != nil {
		if n := busy.active(); n > 0 {
			return fmt.Errorf("shutdown http: %d requests still running: %w", n, err)
		}
		// Only connections that never sent a request were left (Shutdown
		// waits 5 s before it counts such a connection idle): nothing is
		// lost by closing them.
		log.Info("closing connections that sent no request", "listener", l.name)
		_ = srv.Close()
	}
	if err := <-errs; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
