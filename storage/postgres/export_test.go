package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// HistoryRecord exposes historyRecord to the external tests (this file is
// compiled only with the tests).
type HistoryRecord = historyRecord

// RecordHistory writes rec through recordHistory in a transaction of its
// own, as the ads changes do in theirs.
func (db *DB) RecordHistory(ctx context.Context, rec HistoryRecord) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return recordHistory(ctx, tx, rec) })
}

// UserMetricsSQL is UserMetrics' statement, for the plan test.
const UserMetricsSQL = userMetricsSQL

// ExcludesReposts exposes excludesReposts to the tests.
var ExcludesReposts = excludesReposts
