package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aviary-dev/aviary/storage/blob/miniowatch"
	"github.com/aviary-dev/aviary/workers"
)

// uploadPrefix is where compliance uploads land (api.ComplianceUploadKey).
const uploadPrefix = "compliance/"

// startUploadWatch nudges the reconciler whenever MinIO announces a new
// object under the compliance prefix, so an upload is noticed at once
// instead of at the next poll. Polling stays on: notifications are hints,
// other S3 servers have none, and some MinIO builds never deliver them.
func startUploadWatch(ctx context.Context, wg *sync.WaitGroup, cfg *config, rec *workers.Reconciler, log *slog.Logger) {
	if cfg.blobDriver() != "s3" || !cfg.S3Watch || cfg.S3Endpoint == "" {
		return
	}
	keys, err := miniowatch.Watch(ctx, miniowatch.Options{
		Endpoint: cfg.S3Endpoint, Bucket: cfg.S3Bucket, Region: cfg.S3Region,
		AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey, Logger: log.With("component", "upload-watch"),
	}, uploadPrefix)
	if err != nil {
		log.Warn("upload notifications unavailable; polling only", "err", err)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range keys {
			rec.Nudge()
		}
	}()
}
