package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// doNotReachColumns are read by scanDoNotReachList; the table is aliased
// l. The size leaves out entries already expired that the cleanup has not
// removed yet, so an expired entry never counts.
const doNotReachColumns = `l.id, l.account_id, l.name, l.description,
	l.list_size - (SELECT count(*) FROM do_not_reach_entries e WHERE e.list_id = l.id AND e.expires_at <= now()),
	EXISTS (SELECT 1 FROM do_not_reach_batches b WHERE b.list_id = l.id AND b.state <> 'APPLIED'),
	l.created_at, l.updated_at, l.deleted`

func scanDoNotReachList(row pgx.Row, tail ...any) (storage.DoNotReachList, error) {
	var l storage.DoNotReachList
	err := row.Scan(append([]any{&l.ID, &l.AccountID, &l.Name, &l.Description, &l.ListSize, &l.InFlight,
		&l.CreatedAt, &l.UpdatedAt, &l.Deleted}, tail...)...)
	return l, err
}

// ListDoNotReachLists returns one page of the account's do-not-reach lists.
func (db *DB) ListDoNotReachLists(ctx context.Context, accountID string, opts storage.ListOptions) (storage.Page[storage.DoNotReachList], error) {
	spec := listSpec{Listing: storage.ListingDoNotReachLists, From: "do_not_reach_lists l", Columns: doNotReachColumns, ID: "l.id", Deleted: "l.deleted"}
	spec.Filter.add("l.account_id = $?", accountID)
	page, err := listPage(ctx, db.pool, spec, opts, scanDoNotReachList)
	if err != nil {
		return page, fmt.Errorf("list do-not-reach lists of %s: %w", accountID, err)
	}
	return page, nil
}

// DoNotReachList returns the account's list id; a deleted one only when
// withDeleted. Else storage.ErrNotFound.
func (db *DB) DoNotReachList(ctx context.Context, accountID, id string, withDeleted bool) (storage.DoNotReachList, error) {
	l, err := scanDoNotReachList(db.pool.QueryRow(ctx, `SELECT `+doNotReachColumns+` FROM do_not_reach_lists l
		WHERE l.account_id = $1 AND l.id = $2 AND (NOT l.deleted OR $3)`, accountID, id, withDeleted))
	return l, wrap("load do-not-reach list "+id, err)
}

// CreateDoNotReachList creates the account's list; storage.ErrConflict
// when it already has one that is not deleted.
func (db *DB) CreateDoNotReachList(ctx context.Context, accountID string, description *string) (storage.DoNotReachList, error) {
	l, err := scanDoNotReachList(db.pool.QueryRow(ctx, `INSERT INTO do_not_reach_lists AS l (account_id, name, description)
		VALUES ($1, $2, $3) RETURNING `+doNotReachColumns, accountID, storage.DoNotReachListName, description))
	return l, wrap("create do-not-reach list of "+accountID, err)
}

// DeleteDoNotReachList soft-deletes the account's list id; a missing or
// already deleted one is storage.ErrNotFound.
func (db *DB) DeleteDoNotReachList(ctx context.Context, accountID, id string) (storage.DoNotReachList, error) {
	l, err := scanDoNotReachList(db.pool.QueryRow(ctx, `UPDATE do_not_reach_lists AS l SET deleted = true, updated_at = now()
		WHERE l.account_id = $1 AND l.id = $2 AND NOT l.deleted RETURNING `+doNotReachColumns, accountID, id))
	return l, wrap("delete do-not-reach list "+id, err)
}

// RecordDoNotReachBatch records a users batch of the account's list (not
// deleted; else storage.ErrNotFound). A batch of the list with the same
// request key recorded within the retry window is returned instead
// (Replayed), unless its body differs (storage.ErrRequestKeyReused).
// Recording is serialized per list, so batches are numbered (seq) in the
// order they commit and the worker applies them in that order.
func (db *DB) RecordDoNotReachBatch(ctx context.Context, n storage.NewDoNotReachBatch) (storage.DoNotReachBatch, error) {
	ops, err := json.Marshal(n.Operations)
	if err != nil {
		return storage.DoNotReachBatch{}, fmt.Errorf("encode operations of do-not-reach list %s: %w", n.ListID, err)
	}
	var b storage.DoNotReachBatch
	err = db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := liveDoNotReachList(ctx, tx, n.AccountID, n.ListID); err != nil {
			return err
		}
		b, err = record(ctx, tx, doNotReachBatches, n.ListID, n.BodySHA256,
			func() (storage.DoNotReachBatch, string, error) { return priorDoNotReachBatch(ctx, tx, n) },
			func() (storage.DoNotReachBatch, error) {
				b := storage.DoNotReachBatch{ListID: n.ListID, Operations: n.Operations}
				err := tx.QueryRow(ctx, `INSERT INTO do_not_reach_batches (list_id, request_key, body_sha256, operations)
					VALUES ($1, $2, $3, $4) RETURNING id, created_at, state`, n.ListID, n.RequestKey, n.BodySHA256, ops).Scan(&b.ID, &b.CreatedAt, &b.State)
				return b, wrap("insert do-not-reach batch", err)
			})
		return err
	})
	if err != nil {
		return storage.DoNotReachBatch{}, fmt.Errorf("record batch of do-not-reach list %s: %w", n.ListID, err)
	}
	return b, nil
}

// liveDoNotReachList is storage.ErrNotFound unless the account's list id
// exists and is not deleted.
func liveDoNotReachList(ctx context.Context, tx pgx.Tx, accountID, id string) error {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM do_not_reach_lists WHERE account_id = $1 AND id = $2 AND NOT deleted)`,
		accountID, id).Scan(&ok)
	if err != nil {
		return wrap("load do-not-reach list "+id, err)
	}
	if !ok {
		return fmt.Errorf("do-not-reach list %s: %w", id, storage.ErrNotFound)
	}
	return nil
}

// priorDoNotReachBatch is the latest batch of n's list with n's request
// key inside the retry window, and its body digest (storage.ErrNotFound
// when there is none).
func priorDoNotReachBatch(ctx context.Context, tx pgx.Tx, n storage.NewDoNotReachBatch) (storage.DoNotReachBatch, string, error) {
	b := storage.DoNotReachBatch{ListID: n.ListID, Replayed: true}
	var bodySHA string
	var ops []byte
	err := tx.QueryRow(ctx, `SELECT id, body_sha256, operations, created_at, state FROM do_not_reach_batches
		WHERE list_id = $1 AND request_key = $2 AND created_at > now() - make_interval(secs => $3)
		ORDER BY created_at DESC LIMIT 1`, n.ListID, n.RequestKey, n.RetryWindow.Seconds()).
		Scan(&b.ID, &bodySHA, &ops, &b.CreatedAt, &b.State)
	if err != nil {
		return b, "", wrap("find prior do-not-reach batch", err)
	}
	if err := json.Unmarshal(ops, &b.Operations); err != nil {
		return b, "", fmt.Errorf("decode operations of do-not-reach batch %s: %w", b.ID, err)
	}
	return b, bodySHA, nil
}

// ApplyDoNotReachBatch applies batch id in one transaction
// (applyBatch): with its list locked, the list's batches not applied up
// to this one (a failed one included), in the order they were recorded (a
// later batch's task may run first), then list_size, and the batches
// settle APPLIED. A batch already applied changes nothing. An unknown
// batch is storage.ErrNotFound.
func (db *DB) ApplyDoNotReachBatch(ctx context.Context, id string) (storage.DoNotReachApplied, error) {
	var res storage.DoNotReachApplied
	_, claimed, err := db.applyBatch(ctx, doNotReachBatches, id, batchApply{
		lock: func(ctx context.Context, tx pgx.Tx, listID string) error {
			_, err := tx.Exec(ctx, `SELECT 1 FROM do_not_reach_lists WHERE id = $1 FOR UPDATE`, listID)
			return wrap("lock do-not-reach list "+listID, err)
		},
		apply: func(ctx context.Context, tx pgx.Tx, listID string, batches []claimedBatch) (storage.BatchState, *string, error) {
			return storage.BatchApplied, nil, applyEntries(ctx, tx, listID, batches, &res)
		},
	})
	if err != nil {
		return storage.DoNotReachApplied{}, err
	}
	res.Batches = claimed
	return res, nil
}

// applyEntries applies the claimed batches' operations to the list's
// entries, in order, and moves list_size by what they added and removed.
func applyEntries(ctx context.Context, tx pgx.Tx, listID string, batches []claimedBatch, res *storage.DoNotReachApplied) error {
	for _, b := range batches {
		var ops []storage.DoNotReachOperation
		if err := json.Unmarshal(b.ops, &ops); err != nil {
			return fmt.Errorf("decode operations of do-not-reach batch %s: %w", b.id, err)
		}
		for _, st := range compactOperations(ops) {
			added, removed, err := applyStep(ctx, tx, listID, st)
			if err != nil {
				return fmt.Errorf("batch %s: %w", b.id, err)
			}
			res.Added += added
			res.Removed += removed
		}
	}
	_, err := tx.Exec(ctx, `UPDATE do_not_reach_lists SET list_size = list_size + $2, updated_at = now() WHERE id = $1`,
		listID, res.Added-res.Removed)
	return wrap("update size of do-not-reach list "+listID, err)
}

// entryStep is one statement of a batch: an upsert of keys with their
// expiry, or a delete of keys.
type entryStep struct {
	delete  bool
	keys    []string
	expires []time.Time
}

// compactOperations merges runs of operations of one type into one step
// each, with the effect of applying them in order: for an Update run the
// last expiry of a key wins, a Delete run removes the union of its keys.
func compactOperations(ops []storage.DoNotReachOperation) []entryStep {
	var steps []entryStep
	for i := 0; i < len(ops); {
		j := i
		for j < len(ops) && ops[j].Type == ops[i].Type {
			j++
		}
		steps = append(steps, mergeRun(ops[i:j]))
		i = j
	}
	return steps
}

// mergeRun merges operations of one type into one step, each key once.
func mergeRun(run []storage.DoNotReachOperation) entryStep {
	st := entryStep{delete: run[0].Type == storage.DoNotReachDelete}
	index := map[string]int{}
	for _, op := range run {
		for _, k := range op.Keys {
			if i, seen := index[k]; seen {
				st.expires[i] = op.ExpiresAt
				continue
			}
			index[k] = len(st.keys)
			st.keys = append(st.keys, k)
			st.expires = append(st.expires, op.ExpiresAt)
		}
	}
	return st
}

// applyStep runs one step and returns the entries it added and removed.
func applyStep(ctx context.Context, tx pgx.Tx, listID string, st entryStep) (added, removed int64, err error) {
	if st.delete {
		tag, err := tx.Exec(ctx, `DELETE FROM do_not_reach_entries WHERE list_id = $1 AND member_key = ANY($2)`, listID, st.keys)
		if err != nil {
			return 0, 0, wrap("delete do-not-reach entries", err)
		}
		return 0, tag.RowsAffected(), nil
	}
	err = tx.QueryRow(ctx, `WITH up AS (
			INSERT INTO do_not_reach_entries (list_id, member_key, expires_at)
			SELECT $1, k.key, k.expires_at FROM unnest($2::text[], $3::timestamptz[]) AS k(key, expires_at)
			ON CONFLICT (list_id, member_key) DO UPDATE SET expires_at = EXCLUDED.expires_at
			RETURNING (xmax = 0) AS inserted)
		SELECT count(*) FILTER (WHERE inserted) FROM up`, listID, st.keys, st.expires).Scan(&added)
	return added, 0, wrap("upsert do-not-reach entries", err)
}

// DoNotReachListsWithExpired returns up to limit lists holding entries
// expired at now.
func (db *DB) DoNotReachListsWithExpired(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return queryStrings(ctx, db.pool, "list do-not-reach lists with expired entries",
		`SELECT DISTINCT list_id FROM do_not_reach_entries WHERE expires_at <= $1 LIMIT $2`, now, limit)
}

// RemoveExpiredDoNotReachEntries deletes up to limit entries of the list
// expired at now and lowers its list_size by as many, in one transaction
// under the list's lock; it returns how many it removed.
func (db *DB) RemoveExpiredDoNotReachEntries(ctx context.Context, listID string, now time.Time, limit int) (int64, error) {
	var n int64
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM do_not_reach_lists WHERE id = $1 FOR UPDATE`, listID); err != nil {
			return wrap("lock do-not-reach list "+listID, err)
		}
		err := tx.QueryRow(ctx, `WITH gone AS (
				DELETE FROM do_not_reach_entries WHERE list_id = $1 AND member_key IN (
					SELECT member_key FROM do_not_reach_entries WHERE list_id = $1 AND expires_at <= $2 LIMIT $3)
				RETURNING 1)
			SELECT count(*) FROM gone`, listID, now, limit).Scan(&n)
		if err != nil {
			return wrap("delete expired do-not-reach entries", err)
		}
		_, err = tx.Exec(ctx, `UPDATE do_not_reach_lists SET list_size = list_size - $2 WHERE id = $1`, listID, n)
		return wrap("lower size of do-not-reach list "+listID, err)
	})
	if err != nil {
		return 0, fmt.Errorf("remove expired entries of do-not-reach list %s: %w", listID, err)
	}
	return n, nil
}
