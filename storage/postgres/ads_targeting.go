package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// targetingColumns are read by scanTargetingCriterion; the table is
// aliased tc.
const targetingColumns = `tc.id, tc.account_id, tc.line_item_id, tc.name, tc.targeting_type, tc.targeting_value,
	tc.operator_type, tc.created_at, tc.updated_at, tc.deleted`

func scanTargetingCriterion(row pgx.Row, tail ...any) (storage.TargetingCriterion, error) {
	var c storage.TargetingCriterion
	err := row.Scan(append([]any{&c.ID, &c.AccountID, &c.LineItemID, &c.Name, &c.TargetingType, &c.TargetingValue,
		&c.OperatorType, &c.CreatedAt, &c.UpdatedAt, &c.Deleted}, tail...)...)
	return c, err
}

// ListTargetingCriteria returns one page of the account's targeting
// criteria matching f.
func (db *DB) ListTargetingCriteria(ctx context.Context, f storage.TargetingCriterionFilter, opts storage.ListOptions) (storage.Page[storage.TargetingCriterion], error) {
	spec := listSpec{Listing: storage.ListingTargetingCriteria, From: "targeting_criteria tc", Columns: targetingColumns, ID: "tc.id", Deleted: "tc.deleted"}
	spec.Filter.add("tc.account_id = $?", f.AccountID)
	spec.Filter.in("tc.line_item_id", f.LineItemIDs)
	spec.Filter.in("tc.id", f.TargetingCriterionIDs)
	page, err := listPage(ctx, db.pool, spec, opts, scanTargetingCriterion)
	if err != nil {
		return page, fmt.Errorf("list targeting criteria of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// TargetingCriterion returns the account's criterion id; a deleted one
// only when withDeleted. Else storage.ErrNotFound.
func (db *DB) TargetingCriterion(ctx context.Context, accountID, id string, withDeleted bool) (storage.TargetingCriterion, error) {
	c, err := scanTargetingCriterion(db.pool.QueryRow(ctx, `SELECT `+targetingColumns+` FROM targeting_criteria tc
		WHERE tc.account_id = $1 AND tc.id = $2 AND (NOT tc.deleted OR $3)`, accountID, id, withDeleted))
	return c, wrap("load targeting criterion "+id, err)
}

// CreateTargetingCriterion adds a criterion to a non-deleted line item of
// the account and records it in account history; a missing line item is
// storage.ErrNotFound. A criterion of an audience type
// (storage.AudienceTargetingTypes) needs its value to be a live audience
// the account owns or holds a live grant of, else
// storage.ErrAudienceNotFound. The name defaults to the targeting value.
func (db *DB) CreateTargetingCriterion(ctx context.Context, userID int64, n storage.NewTargetingCriterion) (storage.TargetingCriterion, error) {
	name := n.Name
	if name == nil {
		name = &n.TargetingValue
	}
	var c storage.TargetingCriterion
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := lockChildLineItem(ctx, tx, n.AccountID, n.LineItemID, "FOR SHARE"); err != nil {
			return err
		}
		if slices.Contains(storage.AudienceTargetingTypes, n.TargetingType) {
			if err := lockTargetableAudience(ctx, tx, n.AccountID, n.TargetingValue); err != nil {
				return err
			}
		}
		var err error
		c, err = scanTargetingCriterion(tx.QueryRow(ctx, `INSERT INTO targeting_criteria AS tc
			(account_id, line_item_id, targeting_type, targeting_value, operator_type, name)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+targetingColumns,
			n.AccountID, n.LineItemID, n.TargetingType, n.TargetingValue, n.OperatorType, name))
		if err != nil {
			return wrap("insert targeting criterion", err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: n.AccountID, EntityType: storage.EntityTargetingCriteria, EntityID: c.ID,
			ChangeType: storage.ChangeCreate, UserID: userID, After: c.Snapshot()})
	})
	if err != nil {
		return storage.TargetingCriterion{}, fmt.Errorf("create targeting criterion on line item %s: %w", n.LineItemID, err)
	}
	return c, nil
}

// DeleteTargetingCriterion soft-deletes the account's criterion id and
// records it in account history; one missing or already deleted is
// storage.ErrNotFound.
func (db *DB) DeleteTargetingCriterion(ctx context.Context, userID int64, accountID, id string) (storage.TargetingCriterion, error) {
	var after storage.TargetingCriterion
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		before, err := scanTargetingCriterion(tx.QueryRow(ctx, `SELECT `+targetingColumns+` FROM targeting_criteria tc
			WHERE tc.account_id = $1 AND tc.id = $2 AND NOT tc.deleted FOR UPDATE`, accountID, id))
		if err != nil {
			return wrap("lock targeting criterion "+id, err)
		}
		after, err = scanTargetingCriterion(tx.QueryRow(ctx, `UPDATE targeting_criteria AS tc SET deleted = true, updated_at = now()
			WHERE tc.id = $1 RETURNING `+targetingColumns, id))
		if err != nil {
			return wrap("delete targeting criterion "+id, err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityTargetingCriteria, EntityID: id,
			ChangeType: storage.ChangeDelete, UserID: userID, Before: before.Snapshot(), After: after.Snapshot()})
	})
	if err != nil {
		return storage.TargetingCriterion{}, fmt.Errorf("delete targeting criterion %s: %w", id, err)
	}
	return after, nil
}
