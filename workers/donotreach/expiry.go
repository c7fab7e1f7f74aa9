package donotreach

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

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

// Expiry is the scheduled cleanup of do-not-reach entries, a sweep source
// that enqueues nothing: each tick, for every list holding expired
// entries, it deletes them and lowers the list's list_size in the same
// transaction.
type Expiry struct {
	Store  ExpiryStore
	Logger *slog.Logger
}

var _ sweep.Source[string] = (*Expiry)(nil)

// Name implements sweep.Source.
func (e *Expiry) Name() string { return "donotreach-expiry" }

// Due implements sweep.Source: ids of lists with entries expired at now.
func (e *Expiry) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return e.Store.DoNotReachListsWithExpired(ctx, now, limit)
}

// Check implements sweep.Source: it removes the list's expired entries.
func (e *Expiry) Check(ctx context.Context, listID string, now time.Time) (*sweep.Work, error) {
	n, err := e.Store.RemoveExpiredDoNotReachEntries(ctx, listID, now, expiryChunk)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		e.logger().InfoContext(ctx, "expired do-not-reach entries removed", "list_id", listID, "count", n)
	}
	return nil, nil
}

// Enqueued implements sweep.Source; Expiry enqueues nothing.
func (e *Expiry) Enqueued(context.Context, string, time.Time) error { return nil }

// Abandoned implements sweep.Source; Expiry enqueues nothing.
func (e *Expiry) Abandoned(context.Context, string, *asynq.TaskInfo, time.Time) error { return nil }

// Swept implements sweep.Source: removing the entries took the lists out
// of Due.
func (e *Expiry) Swept(context.Context, []string, time.Time) error { return nil }

func (e *Expiry) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}
