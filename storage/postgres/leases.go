package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Task leases (migration 0020, workers/sweep.Hold, docs/outages.md): a run
// of a task holds its task id for ttl, renewed by its heartbeat, so a
// sweeper does not enqueue the task again while the run lives. Expiry is
// judged by the database's clock, the same for every replica.

// ClaimTaskLease takes taskID for holder for ttl; false when another
// holder's lease has not expired. The lease names no run: it is never
// rescued (a time-based lease such as the events retention's).
func (db *DB) ClaimTaskLease(ctx context.Context, taskID, holder string, ttl time.Duration) (bool, error) {
	return db.ClaimTaskRun(ctx, storage.TaskLease{TaskID: taskID, Holder: holder}, ttl)
}

// ClaimTaskRun takes l.TaskID for l.Holder for ttl, recording the queue
// and task id of the run (l.Queue, l.RunID) so a lapse can be rescued;
// false when another holder's lease has not expired.
func (db *DB) ClaimTaskRun(ctx context.Context, l storage.TaskLease, ttl time.Duration) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `INSERT INTO task_leases AS l (task_id, holder, expires_at, queue, run_id)
		VALUES ($1, $2, clock_timestamp() + $3::interval, $4, $5)
		ON CONFLICT (task_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
			queue = EXCLUDED.queue, run_id = EXCLUDED.run_id
		WHERE l.expires_at <= clock_timestamp() OR l.holder = EXCLUDED.holder
		RETURNING true`, l.TaskID, l.Holder, ttl, l.Queue, l.RunID).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return ok, wrap(fmt.Sprintf("claim task lease %s", l.TaskID), err)
}

// RenewTaskLease extends holder's lease on taskID to ttl from now; false
// when holder no longer holds it (it expired and another run took it).
func (db *DB) RenewTaskLease(ctx context.Context, taskID, holder string, ttl time.Duration) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE task_leases SET expires_at = clock_timestamp() + $3::interval
		WHERE task_id = $1 AND holder = $2`, taskID, holder, ttl)
	if err != nil {
		return false, wrap(fmt.Sprintf("renew task lease %s", taskID), err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseTaskLease ends holder's lease on taskID (nothing when another
// holder has it).
func (db *DB) ReleaseTaskLease(ctx context.Context, taskID, holder string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM task_leases WHERE task_id = $1 AND holder = $2`, taskID, holder)
	return wrap(fmt.Sprintf("release task lease %s", taskID), err)
}

// TaskLeaseHeld reports whether a run holds taskID now (a lease not
// expired).
func (db *DB) TaskLeaseHeld(ctx context.Context, taskID string) (bool, error) {
	var held bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM task_leases
		WHERE task_id = $1 AND expires_at > clock_timestamp())`, taskID).Scan(&held)
	return held, wrap(fmt.Sprintf("read task lease %s", taskID), err)
}

// LapsedTaskLeases returns up to limit leases of task runs (with a queue
// and run id) that expired without a release, longest lapsed first: runs
// that died. A lease of a run whose database was away lapses too; that run
// stops itself before its lease lapses (workers/sweep.Hold).
func (db *DB) LapsedTaskLeases(ctx context.Context, limit int) ([]storage.TaskLease, error) {
	rows, err := db.pool.Query(ctx, `SELECT task_id, holder, queue, run_id, expires_at FROM task_leases
		WHERE expires_at <= clock_timestamp() AND queue <> '' AND run_id <> ''
		ORDER BY expires_at LIMIT $1`, limit)
	if err != nil {
		return nil, wrap("list lapsed task leases", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.TaskLease, error) {
		var l storage.TaskLease
		err := row.Scan(&l.TaskID, &l.Holder, &l.Queue, &l.RunID, &l.ExpiresAt)
		return l, err
	})
	return out, wrap("scan lapsed task leases", err)
}

// ForgetTaskLease deletes holder's lease on taskID if it has lapsed (a
// lapsed lease is as free as none; one claimed or renewed meanwhile
// stays).
func (db *DB) ForgetTaskLease(ctx context.Context, taskID, holder string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM task_leases WHERE task_id = $1 AND holder = $2
		AND expires_at <= clock_timestamp()`, taskID, holder)
	return wrap(fmt.Sprintf("forget task lease %s", taskID), err)
}
