package sweep

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// Cleanup is a Source that enqueues nothing: scheduled housekeeping. Each
// tick it asks Due for the records holding something to remove (expired
// members of an audience, say) and calls Clean on each, which removes it
// in one transaction of the store's.
type Cleanup struct {
	// Label is the source's name; its log lines say it too.
	Label string
	// Pending lists up to limit records with something to remove at now.
	Pending func(ctx context.Context, now time.Time, limit int) ([]string, error)
	// Clean removes what a record holds to remove at now and says how much.
	Clean  func(ctx context.Context, id string, now time.Time) (int64, error)
	Logger *slog.Logger
}

var _ Source[string] = (*Cleanup)(nil)

// Name implements Source.
func (c *Cleanup) Name() string { return c.Label }

// Due implements Source: the records Pending lists.
func (c *Cleanup) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return c.Pending(ctx, now, limit)
}

// Check implements Source: it cleans the record.
func (c *Cleanup) Check(ctx context.Context, id string, now time.Time) (*Work, error) {
	n, err := c.Clean(ctx, id, now)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		logctx.OrDefault(c.Logger).InfoContext(ctx, "cleaned up", "source", c.Label, "id", id, "count", n)
	}
	return nil, nil
}

// Enqueued implements Source; a Cleanup enqueues nothing.
func (c *Cleanup) Enqueued(context.Context, string, time.Time) error { return nil }

// Abandoned implements Source; a Cleanup enqueues nothing.
func (c *Cleanup) Abandoned(context.Context, string, *asynq.TaskInfo, time.Time) error { return nil }

// Swept implements Source: cleaning took the records out of Due.
func (c *Cleanup) Swept(context.Context, []string, time.Time) error { return nil }

// ExpiryStore removes what expires in the owners of a kind of batches:
// custom audience members, do-not-reach entries (storage/postgres.DB).
type ExpiryStore interface {
	// ExpiredOwners lists owners holding something expired at now.
	ExpiredOwners(ctx context.Context, kind storage.BatchKind, now time.Time, limit int) ([]string, error)
	// RemoveExpired removes a chunk of it and lowers the owner's size in
	// one transaction.
	RemoveExpired(ctx context.Context, kind storage.BatchKind, owner string, now time.Time) (int64, error)
}

// ExpiryInterval is how often an Expiry runs: readers never count an
// expired member or entry, so removing them is housekeeping, not
// correctness.
const ExpiryInterval = time.Minute

// Expiry is the scheduled cleanup of what expires in the owners of kind's
// batches: each tick, for every owner holding something expired, it
// deletes it and lowers the owner's size in the same transaction.
func Expiry(kind storage.BatchKind, store ExpiryStore, log *slog.Logger) *Cleanup {
	return &Cleanup{Label: string(kind) + "-expiry", Logger: log,
		Pending: func(ctx context.Context, now time.Time, limit int) ([]string, error) {
			return store.ExpiredOwners(ctx, kind, now, limit)
		},
		Clean: func(ctx context.Context, id string, now time.Time) (int64, error) {
			return store.RemoveExpired(ctx, kind, id, now)
		}}
}
