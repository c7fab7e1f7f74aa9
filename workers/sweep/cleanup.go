package sweep

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
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
