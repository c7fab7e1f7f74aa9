package catalogs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// DefaultSweepMinAge is how long a pending version is left to the task the
// API enqueued before the sweep enqueues it again.
const DefaultSweepMinAge = 10 * time.Second

// TaskDeleter removes a queued task (*asynq.Inspector).
type TaskDeleter interface {
	DeleteTask(queue, id string) error
}

// Sweep is the catalogs sweep source: each tick it has the image check of
// every product version pending for longer than MinAge enqueued again (the
// API's enqueue failed, or Redis lost the task). Enqueueing is idempotent
// by task id (product key and version), so a version whose task is still
// queued is left alone.
type Sweep struct {
	Store SweepStore
	// Tasks deletes a check archived after its retries (the store was
	// down throughout), so the next tick enqueues it afresh: a pending
	// version is never left unchecked (nil: archived checks stay).
	Tasks  TaskDeleter
	Logger *slog.Logger
	// MinAge defaults to DefaultSweepMinAge.
	MinAge time.Duration
}

var _ sweep.Source[storage.Product] = (*Sweep)(nil)

// Name implements sweep.Source.
func (s *Sweep) Name() string { return "catalog-images" }

// Due implements sweep.Source: pending versions written more than MinAge
// ago, least recently swept first (then oldest first).
func (s *Sweep) Due(ctx context.Context, now time.Time, limit int) ([]storage.Product, error) {
	minAge := s.MinAge
	if minAge <= 0 {
		minAge = DefaultSweepMinAge
	}
	return s.Store.ProductsAwaitingImages(ctx, now.Add(-minAge), limit)
}

// Check implements sweep.Source.
func (s *Sweep) Check(_ context.Context, p storage.Product, _ time.Time) (*sweep.Work, error) {
	task, err := tasks.NewCatalogImages(p.Key, checkPayload(p))
	if err != nil {
		return nil, fmt.Errorf("image check task of product %s: %w", p.Key, err)
	}
	return &sweep.Work{Task: task, Queue: tasks.QueueCatalogs, TaskID: tasks.CatalogImagesTaskID(p.Key, p.Version)}, nil
}

func checkPayload(p storage.Product) tasks.CatalogImages {
	return tasks.CatalogImages{CatalogID: p.CatalogID, ProductID: p.Fields.ID, Version: p.Version}
}

// Enqueued implements sweep.Source (nothing to record: the pending version
// itself is the record).
func (s *Sweep) Enqueued(context.Context, storage.Product, time.Time) error { return nil }

// Abandoned implements sweep.Source: the archived task is deleted so the
// next tick enqueues the check again.
func (s *Sweep) Abandoned(ctx context.Context, p storage.Product, info *asynq.TaskInfo, _ time.Time) error {
	logctx.OrDefault(s.Logger).WarnContext(ctx, "image check archived after its retries; enqueueing it again",
		"product_key", p.Key, "version", p.Version, "attempts", info.Retried+1, "last_err", info.LastErr)
	if s.Tasks == nil {
		return nil
	}
	id := tasks.CatalogImagesTaskID(p.Key, p.Version)
	if err := s.Tasks.DeleteTask(tasks.QueueCatalogs, id); err != nil {
		return fmt.Errorf("delete archived image check %s: %w", id, err)
	}
	return nil
}

// Swept implements sweep.Source: the products are marked swept, so the
// next tick takes the ones not looked at for longest (a backlog larger
// than a tick's batch is worked through, not its oldest page forever).
func (s *Sweep) Swept(ctx context.Context, items []storage.Product, now time.Time) error {
	keys := make([]string, len(items))
	for i, p := range items {
		keys[i] = p.Key
	}
	if err := s.Store.MarkProductsImagesSwept(ctx, keys, now); err != nil {
		return fmt.Errorf("mark %d products swept: %w", len(keys), err)
	}
	return nil
}
