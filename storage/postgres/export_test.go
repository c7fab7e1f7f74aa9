package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// HistoryRecord exposes historyRecord to the external tests (this file is
// compiled only with the tests).
type HistoryRecord = historyRecord

// RecordHistory writes rec through recordHistory in a transaction of its
// own, as the ads changes do in theirs.
func (db *DB) RecordHistory(ctx context.Context, rec HistoryRecord) error {
	return db.beginFunc(ctx, func(tx pgx.Tx) error { return recordHistory(ctx, tx, rec) })
}

// UserMetricsSQL is UserMetrics' statement, for the plan test.
const UserMetricsSQL = userMetricsSQL

// ExcludesReposts exposes excludesReposts to the tests.
var ExcludesReposts = excludesReposts

// HoldConn takes a connection from db's pool until release is called.
func (db *DB) HoldConn(ctx context.Context) (release func(), err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return conn.Release, nil
}

// Sleep runs pg_sleep for d as one statement, under a bound of bound when
// it is not zero (withBound).
func (db *DB) Sleep(ctx context.Context, d, bound time.Duration) error {
	if bound > 0 {
		ctx = withBound(ctx, bound)
	}
	_, err := db.pool.Exec(ctx, `SELECT pg_sleep($1)`, d.Seconds())
	return wrap("sleep", err)
}

// BatchAfterIdle runs a statement on one pooled connection, leaves the
// connection idle for idle, then sends a batch on the same connection
// (batches are not traced, so they run under whatever deadline the
// statement left on the socket).
func (db *DB) BatchAfterIdle(ctx context.Context, idle time.Duration) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
		return wrap("statement", err)
	}
	time.Sleep(idle)
	b := &pgx.Batch{}
	b.Queue(`SELECT 1`)
	return wrap("batch", conn.SendBatch(ctx, b).Close())
}

// RenewStreamConnectionsSQL is the heartbeat's renewal statement.
const RenewStreamConnectionsSQL = renewStreamConnectionsSQL
