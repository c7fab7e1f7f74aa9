// Package postgres implements Aviary's record stores on PostgreSQL with
// pgx/v5. The schema is managed by the numbered migrations embedded from
// migrations/; Migrate applies the missing ones under an advisory lock so
// several processes can run it at once.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage"
)

// DB is the PostgreSQL-backed store for every record type.
type DB struct {
	pool *pgxpool.Pool
}

// Open connects to the database at url and checks the connection.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return &DB{pool: pool}, nil
}

// Close releases the connection pool.
func (db *DB) Close() { db.pool.Close() }

// Ping reports whether the database answers (readiness).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// NextID allocates a new core id (64-bit, time-ordered).
func (db *DB) NextID(ctx context.Context) (int64, error) {
	var id int64
	if err := db.pool.QueryRow(ctx, `SELECT aviary_next_id()`).Scan(&id); err != nil {
		return 0, fmt.Errorf("allocate id: %w", err)
	}
	return id, nil
}

// translate maps driver errors onto the storage sentinels.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w: %s", storage.ErrConflict, pgErr.ConstraintName)
	}
	return err
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, translate(err))
}
