package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// commitCheckPoll is how often beginFunc asks for the outcome of a commit
// whose answer was lost while the transaction is still "in progress" (the
// server has not yet finished the COMMIT it read, or not yet noticed the
// closed connection and aborted).
const commitCheckPoll = 20 * time.Millisecond

// beginFunc runs f in a transaction and commits it, as pgx.BeginFunc does.
//
// On a pool with a call bound (the API's) a COMMIT can outlive its bound:
// the bound closes the connection, but the server, which had read the
// COMMIT, goes on and makes the change durable. Answering "unavailable"
// then would tell the client to try again and apply its write twice (a
// retried POST /2/tweets made the post twice). So beginFunc asks the
// server for the transaction's id before committing (one round trip, no
// id is assigned to a transaction that wrote nothing) and, when the
// COMMIT's answer is lost, asks another connection whether that id
// committed: committed is success, aborted or unknown keeps the error.
func (db *DB) beginFunc(ctx context.Context, f func(pgx.Tx) error) (err error) {
	if db.bound <= 0 {
		return pgx.BeginFunc(ctx, db.pool, f)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if rbErr := tx.Rollback(ctx); rbErr != nil && !errors.Is(rbErr, pgx.ErrTxClosed) && err == nil {
			err = rbErr
		}
	}()
	if err := f(tx); err != nil {
		return err
	}
	var xid *string
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id_if_assigned()::text`).Scan(&xid); err != nil {
		return err
	}
	err = tx.Commit(ctx)
	if err == nil || xid == nil || !commitOutcomeUnknown(err) {
		return err
	}
	if db.committed(ctx, *xid) {
		return nil
	}
	return err
}

// commitOutcomeUnknown reports whether a failed COMMIT may still have
// committed: the server did not answer with an error of its own (which
// means it rolled back), the connection failed or timed out.
func commitOutcomeUnknown(err error) bool {
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr)
}

// commitCheckWait is how long committed waits for an outcome: four call
// bounds, and at least commitCheckMinWait. A COMMIT still "in progress"
// that long after its answer was lost is reported as unavailable (the
// server is hung, or too slow to tell); a caller pays this only when a
// COMMIT's answer is lost.
func (db *DB) commitCheckWait() time.Duration { return max(4*db.bound, commitCheckMinWait) }

// commitCheckMinWait: a loaded server took longer than the 2 s of four
// default bounds to finish a COMMIT the fault matrix's workload sent.
const commitCheckMinWait = 5 * time.Second

// committed asks, on another connection and for at most commitCheckWait
// past the caller's cancellation, whether transaction xid committed; a
// failed ask (no connection free, the database away) is tried again until
// then. False when it aborted or the answer could not be had.
func (db *DB) committed(ctx context.Context, xid string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), db.commitCheckWait())
	defer cancel()
	for {
		var status *string
		err := db.pool.QueryRow(ctx, `SELECT pg_xact_status($1::xid8)`, xid).Scan(&status)
		switch {
		case err == nil && status == nil:
			return false // too old or unknown to the server
		case err == nil && *status == "committed":
			return true
		case err == nil && *status == "aborted":
			return false
		}
		select { // "in progress", or the ask failed
		case <-ctx.Done():
			return false
		case <-time.After(commitCheckPoll):
		}
	}
}
