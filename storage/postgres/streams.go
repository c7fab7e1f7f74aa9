package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const streamRuleColumns = `id, app_id, value, tag, created_at`

// errDryRun rolls a dry run's transaction back once it has found its
// answer.
var errDryRun = errors.New("dry run")

func scanStreamRule(row pgx.Row) (storage.StreamRule, error) {
	var r storage.StreamRule
	err := row.Scan(&r.ID, &r.AppID, &r.Value, &r.Tag, &r.CreatedAt)
	return r, err
}

func collectStreamRules(rows pgx.Rows) ([]storage.StreamRule, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.StreamRule, error) { return scanStreamRule(row) })
}

// lockStreamRules takes the rule version's row lock: rule changes are
// serialized, so an app's count and values stay put until commit.
func lockStreamRules(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT version FROM stream_rules_version FOR UPDATE`)
	return err
}

func bumpStreamRulesVersion(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `UPDATE stream_rules_version SET version = version + 1`)
	return err
}

// AddStreamRules adds a.Rules to the app in one transaction: every rule
// whose value is new, or none when the app would then hold more than a.Max
// rules (storage.ErrStreamRuleCap); rules whose value the app already has
// are reported as duplicates and not created. The rules version moves when
// a rule is created.
func (db *DB) AddStreamRules(ctx context.Context, a storage.StreamRuleAdd) (storage.StreamRulesAdded, error) {
	var out storage.StreamRulesAdded
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		out = storage.StreamRulesAdded{}
		if err := lockStreamRules(ctx, tx); err != nil {
			return err
		}
		existing, count, err := appRuleValues(ctx, tx, a.AppID, a.Rules)
		if err != nil {
			return err
		}
		for i, r := range a.Rules {
			if prev, ok := existing[r.Value]; ok {
				out.Duplicates = append(out.Duplicates, storage.StreamRuleDuplicate{Index: i, Existing: prev})
				continue
			}
			if a.Max > 0 && count+1 > a.Max {
				return storage.ErrStreamRuleCap
			}
			created, err := scanStreamRule(tx.QueryRow(ctx, `INSERT INTO stream_rules (app_id, value, tag) VALUES ($1, $2, $3)
				RETURNING `+streamRuleColumns, a.AppID, r.Value, r.Tag))
			if err != nil {
				return err
			}
			existing[r.Value] = created
			count++
			out.Created = append(out.Created, created)
		}
		if a.DryRun {
			return errDryRun
		}
		if len(out.Created) > 0 {
			return bumpStreamRulesVersion(ctx, tx)
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	if errors.Is(err, storage.ErrStreamRuleCap) {
		return storage.StreamRulesAdded{}, err
	}
	return out, wrap("add stream rules", err)
}

// appRuleValues returns the app's rules among values and how many rules
// the app has.
func appRuleValues(ctx context.Context, tx pgx.Tx, appID int64, rules []storage.NewStreamRule) (map[string]storage.StreamRule, int, error) {
	values := make([]string, len(rules))
	for i, r := range rules {
		values[i] = r.Value
	}
	var count int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM stream_rules WHERE app_id = $1`, appID).Scan(&count); err != nil {
		return nil, 0, err
	}
	rows, err := tx.Query(ctx, `SELECT `+streamRuleColumns+` FROM stream_rules WHERE app_id = $1 AND value = ANY($2)`, appID, values)
	if err != nil {
		return nil, 0, err
	}
	found, err := collectStreamRules(rows)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]storage.StreamRule, len(found)+len(rules))
	for _, r := range found {
		out[r.Value] = r
	}
	return out, count, nil
}

// DeleteStreamRules deletes the app's rules d names and returns them in id
// order; ids and values the app has no rule of are left out. The rules
// version moves when a rule is deleted.
func (db *DB) DeleteStreamRules(ctx context.Context, d storage.StreamRuleDelete) ([]storage.StreamRule, error) {
	var out []storage.StreamRule
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := lockStreamRules(ctx, tx); err != nil {
			return err
		}
		ids, values := d.IDs, d.Values
		if ids == nil {
			ids = []int64{}
		}
		if values == nil {
			values = []string{}
		}
		rows, err := tx.Query(ctx, `DELETE FROM stream_rules WHERE app_id = $1 AND ($2 OR id = ANY($3) OR value = ANY($4))
			RETURNING `+streamRuleColumns, d.AppID, d.All, ids, values)
		if err != nil {
			return err
		}
		if out, err = collectStreamRules(rows); err != nil {
			return err
		}
		sortRules(out)
		if d.DryRun {
			return errDryRun
		}
		if len(out) > 0 {
			return bumpStreamRulesVersion(ctx, tx)
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return out, wrap("delete stream rules", err)
}

func sortRules(rs []storage.StreamRule) {
	slices.SortFunc(rs, func(a, b storage.StreamRule) int { return cmp.Compare(a.ID, b.ID) })
}

// StreamRules lists the app's rules f selects, in id order.
func (db *DB) StreamRules(ctx context.Context, f storage.StreamRuleFilter) ([]storage.StreamRule, error) {
	limit := any(nil)
	if f.Limit > 0 {
		limit = f.Limit
	}
	ids := f.IDs
	rows, err := db.pool.Query(ctx, `SELECT `+streamRuleColumns+` FROM stream_rules
		WHERE app_id = $1 AND id > $2 AND ($3::bigint[] IS NULL OR id = ANY($3))
		ORDER BY id LIMIT $4`, f.AppID, f.After, ids, limit)
	if err != nil {
		return nil, wrap("list stream rules", err)
	}
	out, err := collectStreamRules(rows)
	return out, wrap("list stream rules", err)
}

// CountStreamRules is how many rules the app has.
func (db *DB) CountStreamRules(ctx context.Context, appID int64) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM stream_rules WHERE app_id = $1`, appID).Scan(&n)
	return n, wrap("count stream rules", err)
}

// AllStreamRules returns every rule of every app, in app then id order,
// with the rules version they make up (one snapshot).
func (db *DB) AllStreamRules(ctx context.Context) ([]storage.StreamRule, int64, error) {
	var out []storage.StreamRule
	var version int64
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT version FROM stream_rules_version`).Scan(&version); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+streamRuleColumns+` FROM stream_rules ORDER BY app_id, id`)
		if err != nil {
			return err
		}
		out, err = collectStreamRules(rows)
		return err
	})
	return out, version, wrap("load all stream rules", err)
}

// StreamRulesVersion is the rules version: it moves whenever a rule is
// added or deleted.
func (db *DB) StreamRulesVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.pool.QueryRow(ctx, `SELECT version FROM stream_rules_version`).Scan(&v)
	return v, wrap("read stream rules version", err)
}

// StreamRulesOf returns the rules of the apps, in app then id order.
func (db *DB) StreamRulesOf(ctx context.Context, appIDs []int64) ([]storage.StreamRule, error) {
	if len(appIDs) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+streamRuleColumns+` FROM stream_rules WHERE app_id = ANY($1) ORDER BY app_id, id`, appIDs)
	if err != nil {
		return nil, wrap(fmt.Sprintf("load stream rules of %d apps", len(appIDs)), err)
	}
	out, err := collectStreamRules(rows)
	return out, wrap("load stream rules", err)
}
