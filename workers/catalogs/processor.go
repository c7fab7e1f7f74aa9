package catalogs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// DefaultImageConcurrency is how many images of one product are fetched at
// once.
const DefaultImageConcurrency = 4

// Processor handles TypeCatalogImages tasks: it loads the product, skips a
// version that was superseded or already checked, checks every image and
// records the outcome conditioned on the version. An image that fails its
// check is an outcome (REJECTED with an error item); only store failures
// (and a cancelled attempt) return an error, so asynq retries them.
type Processor struct {
	Store   Store
	Checker *Checker
	Logger  *slog.Logger
	// Concurrency is how many images of a product are checked at once
	// (default DefaultImageConcurrency).
	Concurrency int
}

// productImage is one image link of a product and the field that names it.
type productImage struct {
	field string
	url   string
}

// ProcessTask implements asynq.Handler.
func (p *Processor) ProcessTask(ctx context.Context, t *asynq.Task) error {
	payload, err := tasks.ParseCatalogImages(t)
	if err != nil {
		return err
	}
	log := logctx.OrDefault(p.Logger).With("catalog_id", payload.CatalogID, "product_id", payload.ProductID, "version", payload.Version)
	prod, err := p.Store.ProductForImageCheck(ctx, payload.CatalogID, payload.ProductID)
	if errors.Is(err, storage.ErrNotFound) {
		log.InfoContext(ctx, "image check discarded: the product is gone")
		return nil
	}
	if err != nil {
		return fmt.Errorf("load product %s of catalog %s: %w", payload.ProductID, payload.CatalogID, err)
	}
	if prod.Version != payload.Version || prod.Status != storage.ProductPendingImages {
		log.InfoContext(ctx, "image check discarded: version superseded or checked", "current_version", prod.Version, "status", prod.Status)
		return nil
	}
	begin := time.Now()
	errs := p.checkAll(ctx, images(prod.Fields))
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("check images of product %s version %d: %w", payload.ProductID, payload.Version, err)
	}
	return p.record(ctx, log, payload, errs, begin)
}

// record stores the outcome; a version no longer current is not an error.
func (p *Processor) record(ctx context.Context, log *slog.Logger, payload tasks.CatalogImages, errs []storage.ProductIssue, begin time.Time) error {
	status := storage.ProductAccepted
	if len(errs) > 0 {
		status = storage.ProductRejected
	}
	err := p.Store.RecordProductImages(ctx, payload.CatalogID, payload.ProductID, payload.Version, status, errs, nil)
	if errors.Is(err, storage.ErrConflict) {
		log.InfoContext(ctx, "image check discarded: superseded while checking", "status", status)
		return nil
	}
	if err != nil {
		return fmt.Errorf("record image check of product %s: %w", payload.ProductID, err)
	}
	log.InfoContext(ctx, "product images checked", "status", status, "errors", len(errs), "seconds", time.Since(begin).Seconds())
	return nil
}

// images lists the product's image links: image_link, then each of
// additional_image_link (a comma list) as additional_image_link[i].
func images(f storage.ProductFields) []productImage {
	var out []productImage
	if u := strings.TrimSpace(f.ImageLink); u != "" {
		out = append(out, productImage{"image_link", u})
	}
	if f.AdditionalImageLink == nil {
		return out
	}
	for i, u := range strings.Split(*f.AdditionalImageLink, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, productImage{fmt.Sprintf("additional_image_link[%d]", i), u})
		}
	}
	return out
}

// checkAll checks the images, Concurrency at a time, and returns an error
// item per failed image, in the images' order.
func (p *Processor) checkAll(ctx context.Context, imgs []productImage) []storage.ProductIssue {
	failures := make([]*Failure, len(imgs))
	sem := make(chan struct{}, p.concurrency())
	var wg sync.WaitGroup
	for i, img := range imgs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			failures[i] = p.Checker.Check(ctx, img.url)
		})
	}
	wg.Wait()
	var errs []storage.ProductIssue
	for i, f := range failures {
		if f != nil {
			errs = append(errs, storage.ProductIssue{Field: imgs[i].field, Rule: f.Rule, Message: f.Message})
		}
	}
	return errs
}

func (p *Processor) concurrency() int {
	if p.Concurrency > 0 {
		return p.Concurrency
	}
	return DefaultImageConcurrency
}
