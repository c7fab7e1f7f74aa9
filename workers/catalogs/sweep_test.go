package catalogs

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

type fakeSweepStore struct {
	before  time.Time
	limit   int
	due     []storage.Product
	swept   []string
	sweptAt time.Time
}

func (s *fakeSweepStore) MarkProductsImagesSwept(_ context.Context, keys []string, now time.Time) error {
	s.swept, s.sweptAt = append(s.swept, keys...), now
	return nil
}

func (s *fakeSweepStore) ProductsAwaitingImages(_ context.Context, before time.Time, limit int) ([]storage.Product, error) {
	s.before, s.limit = before, limit
	return s.due, nil
}

type fakeQueue struct{ enqueued []*asynq.Task }

func (q *fakeQueue) EnqueueContext(_ context.Context, task *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.enqueued = append(q.enqueued, task)
	return &asynq.TaskInfo{}, nil
}

type fakeDeleter struct{ deleted []string }

func (d *fakeDeleter) DeleteTask(queue, id string) error {
	d.deleted = append(d.deleted, queue+"/"+id)
	return nil
}

// TestSweep: pending versions older than MinAge get their check enqueued
// with the product's catalog, id and version; an archived check is deleted
// so the next tick enqueues it again.
func TestSweep(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	store := &fakeSweepStore{due: []storage.Product{
		{CatalogID: "c1", Key: "k1", Fields: storage.ProductFields{ID: "sku-1"}, Version: 3, Status: storage.ProductPendingImages},
		{CatalogID: "c1", Key: "k2", Fields: storage.ProductFields{ID: "sku-2"}, Version: 1, Status: storage.ProductPendingImages},
	}}
	deleter := &fakeDeleter{}
	src := &Sweep{Store: store, Tasks: deleter, MinAge: 5 * time.Second}
	queue := &fakeQueue{}
	sw := &sweep.Sweeper[storage.Product]{Source: src, Queue: queue, Clock: func() time.Time { return now }, BatchSize: 7}
	if err := sw.Tick(t.Context()); err != nil {
		t.Fatalf("tick: %v", err)
	}
	if !store.before.Equal(now.Add(-5*time.Second)) || store.limit != 7 {
		t.Fatalf("due before %s limit %d; want %s, 7", store.before, store.limit, now.Add(-5*time.Second))
	}
	if len(queue.enqueued) != 2 {
		t.Fatalf("%d tasks enqueued, want 2", len(queue.enqueued))
	}
	if !slices.Equal(store.swept, []string{"k1", "k2"}) || !store.sweptAt.Equal(now) {
		t.Fatalf("marked swept %v at %s; want [k1 k2] at %s", store.swept, store.sweptAt, now)
	}
	got, err := tasks.ParseCatalogImages(queue.enqueued[0])
	if err != nil || got != (tasks.CatalogImages{CatalogID: "c1", ProductID: "sku-1", Version: 3}) {
		t.Fatalf("payload %+v, %v", got, err)
	}
	if err := src.Abandoned(t.Context(), store.due[0], &asynq.TaskInfo{Retried: 10}, now); err != nil {
		t.Fatalf("abandoned: %v", err)
	}
	want := tasks.QueueCatalogs + "/" + tasks.CatalogImagesTaskID("k1", 3)
	if len(deleter.deleted) != 1 || deleter.deleted[0] != want {
		t.Fatalf("deleted %v, want [%s]", deleter.deleted, want)
	}
}
