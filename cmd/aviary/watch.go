package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/miniowatch"
)

// startUploadWatch nudges the compliance upload sweeper whenever MinIO announces a new
// object under the compliance prefix, so an upload is noticed at once
// instead of at the next poll. Polling stays on: notifications are hints,
// other S3 servers have none, and some MinIO builds never deliver them.
func startUploadWatch(ctx context.Context, wg *sync.WaitGroup, cfg *config, uploads sweeper, log *slog.Logger) {
	if cfg.blobDriver() != "s3" || !cfg.S3Watch || cfg.S3Endpoint == "" {
		return
	}
	keys, err := miniowatch.Watch(ctx, miniowatch.Options{
		Endpoint: cfg.S3Endpoint, Bucket: cfg.S3Bucket, Region: cfg.S3Region,
		AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey, Logger: log.With("component", "upload-watch"),
	}, storage.ComplianceBlobPrefix)
	if err != nil {
		log.Warn("upload notifications unavailable; polling only", "err", err)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range keys {
			uploads.Nudge()
		}
	}()
}
