package audiences

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

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

// Expiry is the scheduled cleanup of expired custom audience members, a
// sweep source that enqueues nothing: each tick, for every audience
// holding members whose expires_at passed, it deletes them and lowers the
// audience's audience_size in the same transaction.
type Expiry struct {
	Store  ExpiryStore
	Logger *slog.Logger
}

var _ sweep.Source[string] = (*Expiry)(nil)

// Name implements sweep.Source.
func (e *Expiry) Name() string { return "audiences-expiry" }

// Due implements sweep.Source: ids of audiences with members expired at now.
func (e *Expiry) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return e.Store.AudiencesWithExpiredMembers(ctx, now, limit)
}

// Check implements sweep.Source: it removes the audience's expired members.
func (e *Expiry) Check(ctx context.Context, audienceID string, now time.Time) (*sweep.Work, error) {
	n, err := e.Store.RemoveExpiredAudienceMembers(ctx, audienceID, now, expiryChunk)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		e.logger().InfoContext(ctx, "expired custom audience members removed", "custom_audience_id", audienceID, "count", n)
	}
	return nil, nil
}

// Enqueued implements sweep.Source; Expiry enqueues nothing.
func (e *Expiry) Enqueued(context.Context, string, time.Time) error { return nil }

// Abandoned implements sweep.Source; Expiry enqueues nothing.
func (e *Expiry) Abandoned(context.Context, string, *asynq.TaskInfo, time.Time) error { return nil }

// Swept implements sweep.Source: removing the members took the audiences
// out of Due.
func (e *Expiry) Swept(context.Context, []string, time.Time) error { return nil }

func (e *Expiry) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}
