package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// BeginFunc exposes the store's transaction runner to the external test of
// its commit-outcome check.
func (db *DB) BeginFunc(ctx context.Context, f func(pgx.Tx) error) error { return db.beginFunc(ctx, f) }

// PlainBeginFunc is pgx.BeginFunc on the store's pool: the benchmark's
// baseline without the commit-outcome check.
func (db *DB) PlainBeginFunc(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, f)
}
