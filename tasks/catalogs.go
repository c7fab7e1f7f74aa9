package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeCatalogImages fetches and checks the images of one version of a
// product (image_link and additional_image_link) and records the outcome
// in its status, errors and warnings. The task id names the product key
// and version, so each version is checked once.
const TypeCatalogImages = "catalogs:check_images"

// CatalogImages is the payload of TypeCatalogImages.
type CatalogImages struct {
	CatalogID string `json:"catalog_id"`
	ProductID string `json:"product_id"`
	Version   int64  `json:"version"`
}

// CatalogImagesTaskTimeout bounds one attempt (a product has at most 11
// images, each fetched with its own timeout).
const CatalogImagesTaskTimeout = 5 * time.Minute

// CatalogImagesMaxRetry is how many times a failed attempt (the store
// unreachable; an unreachable image is an outcome, not a failure) is
// retried.
const CatalogImagesMaxRetry = 10

// NewCatalogImages builds the image check task of a product version.
func NewCatalogImages(productKey string, p CatalogImages) (*asynq.Task, error) {
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode catalog images payload: %w", err)
	}
	return asynq.NewTask(TypeCatalogImages, payload,
		asynq.TaskID(CatalogImagesTaskID(productKey, p.Version)),
		asynq.Queue(QueueCatalogs),
		asynq.MaxRetry(CatalogImagesMaxRetry),
		asynq.Timeout(CatalogImagesTaskTimeout),
		asynq.Retention(time.Hour),
	), nil
}

// CatalogImagesTaskID is the asynq task id of a product version's check.
func CatalogImagesTaskID(productKey string, version int64) string {
	return fmt.Sprintf("catalog-images-%s-%d", productKey, version)
}

// ParseCatalogImages decodes a TypeCatalogImages payload.
func ParseCatalogImages(t *asynq.Task) (CatalogImages, error) {
	var p CatalogImages
	if err := decode(t, &p); err != nil {
		return p, err
	}
	if p.CatalogID == "" || p.ProductID == "" || p.Version <= 0 {
		return p, fmt.Errorf("catalog images payload without catalog, product or version: %w", asynq.SkipRetry)
	}
	return p, nil
}
