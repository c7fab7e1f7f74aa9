package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// backends are the connections every long-running subcommand opens.
type backends struct {
	db      *postgres.DB
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
	return slog.New(api.LogHandler{Handler: h})
}

func openBackends(ctx context.Context, cfg *config, log *slog.Logger) (*backends, error) {
	b := &backends{}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	b.db = db
	b.closers = append(b.closers, db.Close)
	if b.asynqRC, err = asynq.ParseRedisURI(cfg.RedisURL); err != nil {
		b.Close()
		return nil, fmt.Errorf("parse AVIARY_REDIS_URL: %w", err)
	}
	ropts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("parse AVIARY_REDIS_URL: %w", err)
	}
	rc := redis.NewClient(ropts)
	b.redis = rc
	b.closers = append(b.closers, func() { rc.Close() })
	if err := b.openBlobs(ctx, cfg, log); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
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
