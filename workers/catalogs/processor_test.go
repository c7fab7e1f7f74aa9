package catalogs

import (
	"context"
	"errors"
	"fmt"
	"github.com/aviary-dev/aviary/internal/outbound"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// fakeStore holds one catalog's products in memory and applies
// RecordProductImages under the same condition as the PostgreSQL store.
type fakeStore struct {
	mu        sync.Mutex
	products  map[string]storage.Product
	loadErr   error
	recordErr error // returned once
	records   int
}

func (s *fakeStore) ProductForImageCheck(_ context.Context, _, id string) (storage.Product, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loadErr != nil {
		return storage.Product{}, s.loadErr
	}
	p, ok := s.products[id]
	if !ok {
		return p, storage.ErrNotFound
	}
	return p, nil
}

func (s *fakeStore) RecordProductImages(_ context.Context, _, id string, version int64, status string, errs, warnings []storage.ProductIssue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.recordErr; err != nil {
		s.recordErr = nil
		return err
	}
	p, ok := s.products[id]
	if !ok || p.Version != version || p.Status != storage.ProductPendingImages {
		return storage.ErrConflict
	}
	p.Status = status
	p.Errors = append(p.Errors, errs...)
	p.Warnings = append(p.Warnings, warnings...)
	s.products[id] = p
	s.records++
	return nil
}

func (s *fakeStore) product(id string) storage.Product {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.products[id]
}

func pendingProduct(id string, version int64, imageLink string, additional ...string) storage.Product {
	f := storage.ProductFields{ID: id, ImageLink: imageLink}
	if len(additional) > 0 {
		list := strings.Join(additional, ", ")
		f.AdditionalImageLink = &list
	}
	return storage.Product{
		CatalogID: "cat1", Key: "key-" + id, Fields: f, Status: storage.ProductPendingImages, Version: version,
		Warnings: []storage.ProductIssue{{Field: "description", Rule: "html", Message: "kept from validation"}},
	}
}

func checkTask(t *testing.T, id string, version int64) *asynq.Task {
	t.Helper()
	task, err := tasks.NewCatalogImages("key-"+id, tasks.CatalogImages{CatalogID: "cat1", ProductID: id, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func fields(issues []storage.ProductIssue) []string {
	var out []string
	for _, i := range issues {
		out = append(out, i.Field+":"+i.Rule)
	}
	return out
}

// TestProcessTask: outcomes recorded per version; superseded, checked and
// deleted products discarded; store failures retried.
func TestProcessTask(t *testing.T) {
	t.Parallel()
	base, allow := imageServer(t)
	checker := &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow, Timeout: 2 * time.Second})}
	tests := []struct {
		name       string
		product    storage.Product
		taskVer    int64
		wantStatus string
		wantErrs   []string
	}{
		{"all images pass", pendingProduct("p1", 1, base+"/ok.png", base+"/ok.jpg", base+"/ok.webp"), 1,
			storage.ProductAccepted, nil},
		{"failed images", pendingProduct("p2", 2, base+"/narrow.png", base+"/ok.gif", base+"/notes.txt", "http://10.0.0.1/a.png"), 2,
			storage.ProductRejected, []string{"image_link:too_small", "additional_image_link[1]:not_an_image", "additional_image_link[2]:refused_address"}},
		{"superseded version", pendingProduct("p3", 3, base+"/notes.txt"), 2,
			storage.ProductPendingImages, nil},
		{"already checked", func() storage.Product {
			p := pendingProduct("p4", 1, base+"/notes.txt")
			p.Status = storage.ProductAccepted
			return p
		}(), 1, storage.ProductAccepted, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := tt.product.Fields.ID
			store := &fakeStore{products: map[string]storage.Product{id: tt.product}}
			p := &Processor{Store: store, Checker: checker}
			if err := p.ProcessTask(t.Context(), checkTask(t, id, tt.taskVer)); err != nil {
				t.Fatalf("process: %v", err)
			}
			got := store.product(id)
			if got.Status != tt.wantStatus || !slices.Equal(fields(got.Errors), tt.wantErrs) {
				t.Fatalf("status %s, errors %v; want %s, %v", got.Status, fields(got.Errors), tt.wantStatus, tt.wantErrs)
			}
			if len(got.Warnings) != 1 || got.Warnings[0].Rule != "html" {
				t.Fatalf("warnings %v: the validation warning must be kept", got.Warnings)
			}
		})
	}
}

// TestProcessTaskRetrySafe: a store failure returns an error (asynq
// retries); the retry records the outcome once, and a further run of the
// same task changes nothing.
func TestProcessTaskRetrySafe(t *testing.T) {
	t.Parallel()
	base, allow := imageServer(t)
	store := &fakeStore{
		products:  map[string]storage.Product{"p1": pendingProduct("p1", 1, base+"/short.jpg")},
		recordErr: fmt.Errorf("record: %w", storage.ErrUnavailable),
	}
	p := &Processor{Store: store, Checker: &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow})}}
	task := checkTask(t, "p1", 1)
	if err := p.ProcessTask(t.Context(), task); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("first attempt: %v, want the store error", err)
	}
	for attempt := 2; attempt <= 3; attempt++ {
		if err := p.ProcessTask(t.Context(), task); err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
	}
	got := store.product("p1")
	if store.records != 1 || got.Status != storage.ProductRejected || len(got.Errors) != 1 {
		t.Fatalf("%d records, status %s, errors %v; want one REJECTED record with one error", store.records, got.Status, got.Errors)
	}
}

// TestProcessTaskFailures: a store that cannot load retries; a product
// that is gone, or a payload that is malformed, does not.
func TestProcessTaskFailures(t *testing.T) {
	t.Parallel()
	checker := &Checker{Fetcher: outbound.New(outbound.Config{})}
	down := &Processor{Store: &fakeStore{loadErr: storage.ErrUnavailable}, Checker: checker}
	if err := down.ProcessTask(t.Context(), checkTask(t, "p1", 1)); !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("store down: %v, want a retried error", err)
	}
	gone := &Processor{Store: &fakeStore{products: map[string]storage.Product{}}, Checker: checker}
	if err := gone.ProcessTask(t.Context(), checkTask(t, "p1", 1)); err != nil {
		t.Fatalf("product gone: %v, want nil", err)
	}
	if err := gone.ProcessTask(t.Context(), asynq.NewTask(tasks.TypeCatalogImages, []byte(`{}`))); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("malformed payload: %v, want SkipRetry", err)
	}
}

// TestProcessTaskCancelled: an attempt cancelled mid-check records nothing
// and returns an error, so the task runs again.
func TestProcessTaskCancelled(t *testing.T) {
	t.Parallel()
	base, allow := imageServer(t)
	store := &fakeStore{products: map[string]storage.Product{"p1": pendingProduct("p1", 1, base+"/stall-headers")}}
	p := &Processor{Store: store, Checker: &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow})}}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := p.ProcessTask(ctx, checkTask(t, "p1", 1)); err == nil {
		t.Fatal("cancelled attempt returned nil")
	}
	if store.records != 0 {
		t.Fatalf("%d records after a cancelled attempt", store.records)
	}
}
