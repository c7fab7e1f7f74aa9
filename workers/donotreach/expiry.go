package donotreach

import (
	"context"
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/workers/sweep"
)

// ExpiryInterval is how often Expiry runs: list_size never counts an
// expired entry, so removing them is housekeeping, not correctness.
const ExpiryInterval = time.Minute

// expiryChunk bounds the entries one list loses in one transaction; a
// list with more is finished on the next ticks.
const expiryChunk = 10_000

// ExpiryStore is the record access Expiry needs.
type ExpiryStore interface {
	DoNotReachListsWithExpired(ctx context.Context, now time.Time, limit int) ([]string, error)
	RemoveExpiredDoNotReachEntries(ctx context.Context, listID string, now time.Time, limit int) (int64, error)
}

// Expiry is the scheduled cleanup of do-not-reach entries: each tick, for
// every list holding expired entries, it deletes them and lowers the
// list's list_size in the same transaction.
func Expiry(store ExpiryStore, log *slog.Logger) *sweep.Cleanup {
	return &sweep.Cleanup{Label: "donotreach-expiry", Pending: store.DoNotReachListsWithExpired, Logger: log,
		Clean: func(ctx context.Context, id string, now time.Time) (int64, error) {
			return store.RemoveExpiredDoNotReachEntries(ctx, id, now, expiryChunk)
		}}
}
