package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Product image checks (workers/catalogs, docs/ads-catalog-images.md): the
// worker loads a product version's image links, records the outcome of
// their checks only while that version is current, and its sweeper lists
// the versions still awaiting a check.

const productImageColumns = `catalog_id, product_key, item_group_key, fields, status, errors, warnings,
	version, seq, created_at, updated_at`

func scanProductImages(row pgx.Row) (storage.Product, error) {
	var p storage.Product
	err := row.Scan(&p.CatalogID, &p.Key, &p.ItemGroupKey, &p.Fields, &p.Status, &p.Errors, &p.Warnings,
		&p.Version, &p.Seq, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// ProductForImageCheck returns the current version of product id of the
// catalog (storage.ErrNotFound if it is gone).
func (db *DB) ProductForImageCheck(ctx context.Context, catalogID, id string) (storage.Product, error) {
	p, err := scanProductImages(db.pool.QueryRow(ctx, `SELECT `+productImageColumns+`
		FROM products WHERE catalog_id = $1 AND id = $2`, catalogID, id))
	return p, wrap(fmt.Sprintf("load product %s of catalog %s", id, catalogID), err)
}

// RecordProductImages records the outcome of the image check of version:
// status (storage.ProductAccepted or storage.ProductRejected), the check's
// errs and warnings appended to the stored ones,
// and images_checked_version, in one statement that applies only while
// version is current and still pending. storage.ErrConflict: it is not (an
// update superseded it, the outcome is recorded already, or the product is
// gone).
func (db *DB) RecordProductImages(ctx context.Context, catalogID, id string, version int64, status string, errs, warnings []storage.ProductIssue) error {
	op := fmt.Sprintf("record image check of product %s version %d in catalog %s", id, version, catalogID)
	if status != storage.ProductAccepted && status != storage.ProductRejected {
		return fmt.Errorf("%s: status %q is not an image check outcome", op, status)
	}
	tag, err := db.pool.Exec(ctx, `UPDATE products
		SET status = $4, errors = errors || $5::jsonb, warnings = warnings || $6::jsonb,
		    images_checked_version = $3, updated_at = now()
		WHERE catalog_id = $1 AND id = $2 AND version = $3 AND images_checked_version < $3 AND status = $7`,
		catalogID, id, version, status, issues(errs), issues(warnings), storage.ProductPendingImages)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w: the version is no longer current or pending", op, storage.ErrConflict)
	}
	return nil
}

// issues is how every product issue list (errors and warnings) is
// stored: sanitized (storage.SanitizeIssues: no control characters or
// invalid UTF-8, which PostgreSQL refuses in jsonb) and never JSON null.
func issues(list []storage.ProductIssue) []storage.ProductIssue {
	return storage.SanitizeIssues(list)
}

// ProductsAwaitingImages lists up to limit products whose current version
// is pending an image check and was written before before, least recently
// swept first (never swept first), then oldest first; the sweep marks
// them with MarkProductsImagesSwept, so successive ticks move on to the
// others however many are pending.
func (db *DB) ProductsAwaitingImages(ctx context.Context, before time.Time, limit int) ([]storage.Product, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+productImageColumns+` FROM products
		WHERE images_checked_version < version AND status = $1 AND updated_at < $2
		ORDER BY images_swept_at NULLS FIRST, updated_at, product_key LIMIT $3`, storage.ProductPendingImages, before, limit)
	if err != nil {
		return nil, wrap("list products awaiting image checks", err)
	}
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Product, error) { return scanProductImages(row) })
	return ps, wrap("list products awaiting image checks", err)
}

// MarkProductsImagesSwept records that the image-check sweep looked at the
// products of keys (product_key) at now.
func (db *DB) MarkProductsImagesSwept(ctx context.Context, keys []string, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE products SET images_swept_at = $2 WHERE product_key = ANY($1)`, keys, now)
	return wrap("mark products swept for image checks", err)
}
