package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// backends are the connections every long-running subcommand opens.
//
// The API tier bounds every dependency call by AVIARY_DEPENDENCY_TIMEOUT
// (docs/outages.md): apiDB bounds each statement and pool wait, and the
// Redis client honours context deadlines (ContextTimeoutEnabled) with dial,
// read, write and pool timeouts of the same bound per attempt. db, for the
// workers and start-up work, keeps only the connect bound: a task's batch
// may take longer than a request may wait.
type backends struct {
	db      *postgres.DB
	apiDB   *postgres.DB
	redis   redis.UniversalClient
	asynqRC asynq.RedisConnOpt
	blobs   blob.Store
	local   *local.Store // non-nil with the local driver: serves presigned URLs
	closers []func()
}

func (b *backends) Close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

func newLogger(cfg *config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if strings.EqualFold(cfg.LogFormat, "text") {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(logctx.Handler{Handler: h})
}

func openBackends(ctx context.Context, cfg *config, log *slog.Logger) (*backends, error) {
	b := &backends{}
	if err := b.openDatabases(ctx, cfg); err != nil {
		b.Close()
		return nil, err
	}
	conn, err := parseRedisURL(cfg.RedisURL)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.asynqRC = conn.asynq
	conn.bound(cfg.DependencyTimeout)
	rc := conn.client()
	b.redis = rc
	b.closers = append(b.closers, func() { rc.Close() })
	if err := b.openBlobs(ctx, cfg, log); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// openDatabases opens the two pools on AVIARY_DATABASE_URL: db (connect
// bound only) and apiDB (every call bound), both by AVIARY_DEPENDENCY_TIMEOUT.
func (b *backends) openDatabases(ctx context.Context, cfg *config) error {
	for _, p := range []struct {
		db   **postgres.DB
		opts postgres.Options
	}{
		{&b.db, postgres.Options{ConnectTimeout: cfg.DependencyTimeout}},
		{&b.apiDB, postgres.Options{ConnectTimeout: cfg.DependencyTimeout, CallTimeout: cfg.DependencyTimeout}},
	} {
		db, err := openDatabase(ctx, cfg.DatabaseURL, p.opts, databaseStartupWait)
		if err != nil {
			return err
		}
		*p.db = db
		b.closers = append(b.closers, db.Close)
	}
	return nil
}

// databaseStartupWait is how long a process waits at start for a database
// that does not answer yet (a container still starting, a machine under
// load whose connections time out) before it gives up.
const databaseStartupWait = 30 * time.Second

// openDatabase opens a pool, retrying with backoff while the database is
// unavailable (storage.ErrUnavailable), for up to wait; any other error
// (a wrong URL, a refused login) ends it at once.
func openDatabase(ctx context.Context, url string, opts postgres.Options, wait time.Duration) (*postgres.DB, error) {
	deadline, backoff := time.Now().Add(wait), 100*time.Millisecond
	for {
		db, err := postgres.OpenWith(ctx, url, opts)
		if err == nil || !errors.Is(err, storage.ErrUnavailable) || time.Now().Add(backoff).After(deadline) {
			return db, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (b *backends) openBlobs(ctx context.Context, cfg *config, log *slog.Logger) error {
	switch cfg.blobDriver() {
	case "local":
		st, err := local.New(local.Options{Dir: cfg.BlobDir, BaseURL: cfg.PublicURL, Logger: log})
		if err != nil {
			return fmt.Errorf("open local blob store: %w", err)
		}
		b.blobs, b.local = st, st
	case "s3":
		st, err := s3.New(ctx, s3Options(cfg))
		if err != nil {
			return fmt.Errorf("open s3 blob store: %w", err)
		}
		if err := st.EnsureBucket(ctx); err != nil {
			return fmt.Errorf("ensure bucket %s: %w", cfg.S3Bucket, err)
		}
		b.blobs = st
	default:
		return fmt.Errorf("AVIARY_BLOB_DRIVER %q: want local or s3", cfg.BlobDriver)
	}
	return nil
}

func s3Options(cfg *config) s3.Options {
	return s3.Options{
		Endpoint: cfg.S3Endpoint, PublicEndpoint: cfg.S3PublicEndpoint, Bucket: cfg.S3Bucket,
		Region: cfg.S3Region, AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey, PathStyle: cfg.S3Endpoint != "",
	}
}
