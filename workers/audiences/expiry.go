package audiences

import (
	"context"
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/workers/sweep"
)

// ExpiryInterval is how often Expiry runs: readers never count an expired
// member, so removing them is housekeeping, not correctness.
const ExpiryInterval = time.Minute

// expiryChunk bounds the members one audience loses in one transaction;
// an audience with more is finished on the next ticks.
const expiryChunk = 50_000

// ExpiryStore is what Expiry needs of storage (*postgres.DB).
type ExpiryStore interface {
	// AudiencesWithExpiredMembers lists audiences holding members expired
	// at now.
	AudiencesWithExpiredMembers(ctx context.Context, now time.Time, limit int) ([]string, error)
	// RemoveExpiredAudienceMembers deletes expired members and lowers
	// audience_size in one transaction.
	RemoveExpiredAudienceMembers(ctx context.Context, audienceID string, now time.Time, limit int) (int64, error)
}

// Expiry is the scheduled cleanup of expired custom audience members: each
// tick, for every audience whose earliest member expiry passed, it deletes
// the expired members and lowers audience_size in the same transaction.
func Expiry(store ExpiryStore, log *slog.Logger) *sweep.Cleanup {
	return &sweep.Cleanup{Label: "audiences-expiry", Pending: store.AudiencesWithExpiredMembers, Logger: log,
		Clean: func(ctx context.Context, id string, now time.Time) (int64, error) {
			return store.RemoveExpiredAudienceMembers(ctx, id, now, expiryChunk)
		}}
}
