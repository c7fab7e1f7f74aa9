package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Task leases (migration 0020, workers/sweep.Hold, docs/outages.md): a run
// of a task holds its task id for ttl, renewed by its heartbeat, so a
// sweeper does not enqueue the task again while the run lives. Expiry is
// judged by the database's clock, the same for every replica.

// ClaimTaskLease takes taskID for holder for ttl; false when another
// holder's lease has not expired.
func (db *DB) ClaimTaskLease(ctx context.Context, taskID, holder string, ttl time.Duration) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `INSERT INTO task_leases AS l (task_id, holder, expires_at)
		VALUES ($1, $2, clock_timestamp() + $3::interval)
		ON CONFLICT (task_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
		WHERE l.expires_at <= clock_timestamp() OR l.holder = EXCLUDED.holder
		RETURNING true`, taskID, holder, ttl).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return ok, wrap(fmt.Sprintf("claim task lease %s", taskID), err)
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
