package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// productRow inserts a product of catalog at version with status, written
// age ago, and returns its key.
func productRow(t *testing.T, conn *pgx.Conn, catalog, id, status string, version int64, age time.Duration) string {
	t.Helper()
	var key string
	err := conn.QueryRow(t.Context(), `INSERT INTO products (catalog_id, id, fields, status, warnings, version, updated_at)
		VALUES ($1, $2, $3, $4, '[{"field":"title","rule":"caps","message":"validation"}]', $5, now() - $6::interval)
		RETURNING product_key`,
		catalog, id, storage.ProductFields{ID: id, ImageLink: "https://img.example/" + id + ".png"}, status, version,
		age.String()).Scan(&key)
	if err != nil {
		t.Fatalf("insert product %s: %v", id, err)
	}
	return key
}

// TestProductImageChecks: load a version, record its outcome only while it
// is current and pending (once), and list the versions awaiting a check.
func TestProductImageChecks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	user := factory.User(t, db, nil)
	var catalog string
	if err := conn.QueryRow(ctx, `INSERT INTO product_catalogs (user_id, name) VALUES ($1, 'c') RETURNING id`, user.ID).Scan(&catalog); err != nil {
		t.Fatalf("insert catalog: %v", err)
	}
	productRow(t, conn, catalog, "old", storage.ProductPendingImages, 2, time.Minute)
	productRow(t, conn, catalog, "fresh", storage.ProductPendingImages, 1, 0)
	productRow(t, conn, catalog, "done", storage.ProductAccepted, 1, time.Hour)

	p, err := db.ProductForImageCheck(ctx, catalog, "old")
	if err != nil || p.Version != 2 || p.Status != storage.ProductPendingImages || p.Fields.ImageLink != "https://img.example/old.png" || len(p.Warnings) != 1 {
		t.Fatalf("load = %+v, %v", p, err)
	}
	if _, err := db.ProductForImageCheck(ctx, catalog, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("load missing: %v, want ErrNotFound", err)
	}

	due, err := db.ProductsAwaitingImages(ctx, time.Now().Add(-10*time.Second), 10)
	if err != nil || len(due) != 1 || due[0].Fields.ID != "old" || due[0].CatalogID != catalog {
		t.Fatalf("awaiting = %+v, %v; want only old", due, err)
	}

	errs := []storage.ProductIssue{{Field: "image_link", Rule: "too_small", Message: "small"}}
	tests := []struct {
		name    string
		id      string
		version int64
		status  string
		want    error
	}{
		{"superseded version", "old", 1, storage.ProductRejected, storage.ErrConflict},
		{"current version", "old", 2, storage.ProductRejected, nil},
		{"recorded already", "old", 2, storage.ProductAccepted, storage.ErrConflict},
		{"not pending", "done", 1, storage.ProductRejected, storage.ErrConflict},
		{"missing product", "nope", 1, storage.ProductAccepted, storage.ErrConflict},
	}
	for _, tt := range tests {
		err := db.RecordProductImages(ctx, catalog, tt.id, tt.version, tt.status, errs, nil)
		if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Fatalf("%s: record = %v, want %v", tt.name, err, tt.want)
		}
	}
	if err := db.RecordProductImages(ctx, catalog, "fresh", 1, storage.ProductPendingImages, nil, nil); err == nil {
		t.Fatal("recording PENDING as an outcome succeeded")
	}

	p, err = db.ProductForImageCheck(ctx, catalog, "old")
	if err != nil || p.Status != storage.ProductRejected || len(p.Errors) != 1 || p.Errors[0].Rule != "too_small" || len(p.Warnings) != 1 {
		t.Fatalf("after record = %+v, %v", p, err)
	}
	var checked int64
	if err := conn.QueryRow(ctx, `SELECT images_checked_version FROM products WHERE catalog_id = $1 AND id = 'old'`, catalog).Scan(&checked); err != nil || checked != 2 {
		t.Fatalf("images_checked_version = %d, %v; want 2", checked, err)
	}
	due, err = db.ProductsAwaitingImages(ctx, time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 1 || due[0].Fields.ID != "fresh" {
		t.Fatalf("awaiting after record = %+v, %v; want only fresh", due, err)
	}
}
