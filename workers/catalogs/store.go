// Package catalogs is the worker side of product catalogs
// (docs/ads-catalog-images.md): Processor runs catalogs:check_images tasks
// (fetch each image of a product version through the SSRF-safe Fetcher,
// check it, record ACCEPTED or REJECTED while the version is current), and
// Sweep (a sweep source) enqueues the check of versions whose task was
// lost.
package catalogs

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access the Processor needs (storage/postgres.DB
// satisfies it).
type Store interface {
	ProductForImageCheck(ctx context.Context, catalogID, id string) (storage.Product, error)
	RecordProductImages(ctx context.Context, catalogID, id string, version int64, status string, errs, warnings []storage.ProductIssue) error
}

// SweepStore is the record access the Sweep source needs.
type SweepStore interface {
	ProductsAwaitingImages(ctx context.Context, before time.Time, limit int) ([]storage.Product, error)
	// MarkProductsImagesSwept records that the sweep looked at the
	// products of keys (product_key), so the next tick takes others first.
	MarkProductsImagesSwept(ctx context.Context, keys []string, now time.Time) error
}
