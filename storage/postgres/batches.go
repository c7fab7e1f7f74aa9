package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Recorded batches (storage/batch.go, docs/architecture.md "Batches:
// record, sweep, apply"): every kind's table has the columns id, seq,
// body_sha256, operations, state, failure, created_at, settled_at and
// swept_at, plus the column of its owner (the audience or list the batch
// changes). The functions here are the one implementation of recording
// (serialized per owner, with the retry rule), the sweep's reads, the
// apply transaction's claim and settle, and failing; the kinds' files add
// only what their batches do to their owner.

// batchTable is one kind's table.
type batchTable struct {
	kind  storage.BatchKind
	name  string
	owner string
	// grace is how old a pending batch must be before the sweep looks at
	// it (the API enqueues right after recording).
	grace time.Duration
	// expiryChunk bounds what one owner loses to expiry in one
	// transaction; an owner with more is finished on the next ticks.
	expiryChunk int
}

// AudienceBatchGrace is how old a pending custom audience batch must be
// before the sweep looks at it.
const AudienceBatchGrace = 5 * time.Second

var (
	audienceBatches = batchTable{kind: storage.AudienceBatches, name: "custom_audience_batches", owner: "custom_audience_id",
		grace: AudienceBatchGrace, expiryChunk: 50_000}
	doNotReachBatches = batchTable{kind: storage.DoNotReachBatches, name: "do_not_reach_batches", owner: "list_id",
		expiryChunk: 10_000}
)

// batchTableOf is the table of kind.
func batchTableOf(kind storage.BatchKind) (batchTable, error) {
	for _, t := range []batchTable{audienceBatches, doNotReachBatches} {
		if t.kind == kind {
			return t, nil
		}
	}
	return batchTable{}, fmt.Errorf("unknown batch kind %q", kind)
}

// from is the states a batch of the table moves to next from, for SQL.
func (t batchTable) from(next storage.BatchState) []string {
	var out []string
	for _, s := range t.kind.From(next) {
		out = append(out, string(s))
	}
	return out
}

// record is the shape of recording a batch of owner, once the caller has
// checked the owner may take it: the owner's batches are locked (so
// recording is serialized per owner and seq is the commit order), the
// batch the request may retry is looked up (prior: the batch and its body
// digest, else storage.ErrNotFound); a retry with the same body answers
// that batch, one with another body is storage.ErrRequestKeyReused; else
// insert records the new batch.
func record[B any](ctx context.Context, tx pgx.Tx, t batchTable, owner, bodySHA string,
	prior func() (B, string, error), insert func() (B, error)) (B, error) {
	var none B
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 0))`, t.name, owner); err != nil {
		return none, wrap("lock "+t.name+" of "+owner, err)
	}
	b, priorSHA, err := prior()
	switch {
	case err == nil && priorSHA != bodySHA:
		return none, storage.ErrRequestKeyReused
	case err == nil:
		return b, nil
	case !errors.Is(err, storage.ErrNotFound):
		return none, err
	}
	return insert()
}

// claimedBatch is a batch an apply transaction holds: its id and stored
// operations.
type claimedBatch struct {
	id  string
	ops []byte
}

// batchApply is what one kind does in the apply transaction: lock its
// owner (before the batches' rows, the order every writer takes), and
// apply the claimed batches to it, returning the state they settle in
// (APPLIED, or FAILED with a failure).
type batchApply struct {
	lock  func(ctx context.Context, tx pgx.Tx, owner string) error
	apply func(ctx context.Context, tx pgx.Tx, owner string, batches []claimedBatch) (storage.BatchState, *string, error)
}

// applyBatch is the apply transaction of batch id: it reads the batch's
// owner, locks it (a.lock), claims the batches this one applies (itself
// while it may still become APPLIED; for a kind applied in order, every
// earlier batch of the owner that may, oldest first), applies them
// (a.apply) and settles them, all or nothing. It returns the owner and how
// many batches it claimed (none: already settled, nothing changed). An
// unknown batch is storage.ErrNotFound.
func (db *DB) applyBatch(ctx context.Context, t batchTable, id string, a batchApply) (owner string, claimed int, err error) {
	err = db.beginFunc(ctx, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT `+t.owner+`, seq FROM `+t.name+` WHERE id = $1`, id).Scan(&owner, &seq); err != nil {
			return wrap("load batch", err)
		}
		if err := a.lock(ctx, tx, owner); err != nil {
			return err
		}
		batches, err := t.claim(ctx, tx, owner, id, seq)
		if err != nil || len(batches) == 0 {
			return err
		}
		claimed = len(batches)
		state, failure, err := a.apply(ctx, tx, owner, batches)
		if err != nil {
			return err
		}
		ids := make([]string, len(batches))
		for i, b := range batches {
			ids[i] = b.id
		}
		_, err = tx.Exec(ctx, `UPDATE `+t.name+` SET state = $2, failure = $3, settled_at = now() WHERE id = ANY($1)`, ids, state, failure)
		return wrap("settle "+t.name, err)
	})
	if err != nil {
		return owner, 0, fmt.Errorf("apply %s %s: %w", t.name, id, err)
	}
	return owner, claimed, nil
}

// claim locks and reads the batches applying batch (id, seq) of owner
// applies, in the order they were recorded.
func (t batchTable) claim(ctx context.Context, tx pgx.Tx, owner, id string, seq int64) ([]claimedBatch, error) {
	which, arg := `id = $3`, any(id)
	if t.kind.InOrder() {
		which, arg = `seq <= $3`, seq
	}
	rows, err := tx.Query(ctx, `SELECT id, operations FROM `+t.name+` WHERE `+t.owner+` = $1 AND state = ANY($2) AND `+which+`
		ORDER BY seq FOR UPDATE`, owner, t.from(storage.BatchApplied), arg)
	if err != nil {
		return nil, wrap("claim "+t.name, err)
	}
	defer rows.Close()
	var out []claimedBatch
	for rows.Next() {
		var b claimedBatch
		if err := rows.Scan(&b.id, &b.ops); err != nil {
			return nil, wrap("scan "+t.name, err)
		}
		out = append(out, b)
	}
	return out, wrap("claim "+t.name, rows.Err())
}

// BatchesDue returns up to limit pending batches of kind recorded at
// least the kind's grace before now, least recently swept first.
func (db *DB) BatchesDue(ctx context.Context, kind storage.BatchKind, now time.Time, limit int) ([]storage.Batch, error) {
	t, err := batchTableOf(kind)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT id, `+t.owner+`, state, created_at FROM `+t.name+`
		WHERE state = 'PENDING' AND created_at <= $1 ORDER BY swept_at NULLS FIRST, created_at LIMIT $2`, now.Add(-t.grace), limit)
	if err != nil {
		return nil, wrap("list due "+t.name, err)
	}
	defer rows.Close()
	var out []storage.Batch
	for rows.Next() {
		b := storage.Batch{Kind: kind}
		if err := rows.Scan(&b.ID, &b.Owner, &b.State, &b.CreatedAt); err != nil {
			return nil, wrap("scan due "+t.name, err)
		}
		out = append(out, b)
	}
	return out, wrap("list due "+t.name, rows.Err())
}

// MarkBatchesSwept records that the sweep looked at the batches.
func (db *DB) MarkBatchesSwept(ctx context.Context, kind storage.BatchKind, ids []string, now time.Time) error {
	t, err := batchTableOf(kind)
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `UPDATE `+t.name+` SET swept_at = $2 WHERE id = ANY($1)`, ids, now)
	return wrap("mark "+t.name+" swept", err)
}

// FailBatch marks batch id of kind FAILED with reason, if its state may
// become FAILED (pending: its task will not run again); a settled one is
// left alone.
func (db *DB) FailBatch(ctx context.Context, kind storage.BatchKind, id, reason string) error {
	t, err := batchTableOf(kind)
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `UPDATE `+t.name+` SET state = 'FAILED', failure = $2, settled_at = now()
		WHERE id = $1 AND state = ANY($3)`, id, reason, t.from(storage.BatchFailed))
	return wrap("fail "+t.name+" "+id, err)
}

// ExpiredOwners returns up to limit owners of kind's batches (audiences,
// lists) holding members or entries expired at now.
func (db *DB) ExpiredOwners(ctx context.Context, kind storage.BatchKind, now time.Time, limit int) ([]string, error) {
	switch kind {
	case storage.AudienceBatches:
		return db.AudiencesWithExpiredMembers(ctx, now, limit)
	case storage.DoNotReachBatches:
		return db.DoNotReachListsWithExpired(ctx, now, limit)
	}
	return nil, fmt.Errorf("unknown batch kind %q", kind)
}

// RemoveExpired deletes what expired at now in owner, a chunk at most,
// lowering its size in the same transaction; it returns how much it
// removed.
func (db *DB) RemoveExpired(ctx context.Context, kind storage.BatchKind, owner string, now time.Time) (int64, error) {
	t, err := batchTableOf(kind)
	switch {
	case err != nil:
		return 0, err
	case kind == storage.AudienceBatches:
		return db.RemoveExpiredAudienceMembers(ctx, owner, now, t.expiryChunk)
	}
	return db.RemoveExpiredDoNotReachEntries(ctx, owner, now, t.expiryChunk)
}
