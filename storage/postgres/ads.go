package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const adAccountColumns = `id, name, user_id, business_id, business_name, timezone, timezone_switch_at,
	approval_status, industry_type, sandbox, created_at, updated_at, deleted`

func scanAdAccount(row pgx.Row, tail ...any) (storage.AdAccount, error) {
	var a storage.AdAccount
	err := row.Scan(append([]any{&a.ID, &a.Name, &a.UserID, &a.BusinessID, &a.BusinessName, &a.Timezone, &a.TimezoneSwitchAt,
		&a.ApprovalStatus, &a.IndustryType, &a.Sandbox, &a.CreatedAt, &a.UpdatedAt, &a.Deleted}, tail...)...)
	return a, err
}

// AdAccountFor returns the account if userID may use it (its owner or a
// user granted access) and it is on the given side, deleted or not; else
// storage.ErrNotFound.
func (db *DB) AdAccountFor(ctx context.Context, userID int64, accountID string, sandbox bool) (storage.AdAccount, error) {
	a, err := scanAdAccount(db.pool.QueryRow(ctx, `SELECT `+adAccountColumns+` FROM ad_accounts a
		WHERE a.id = $1 AND a.sandbox = $3
		  AND EXISTS (SELECT 1 FROM ad_account_users u WHERE u.account_id = a.id AND u.user_id = $2)`, accountID, userID, sandbox))
	return a, wrap("load ad account "+accountID, err)
}

// CreateAdAccount creates an account owned by userID, in its own business,
// on the sandbox side or the production side.
func (db *DB) CreateAdAccount(ctx context.Context, userID int64, name string, sandbox bool) (storage.AdAccount, error) {
	var a storage.AdAccount
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = createAdAccount(ctx, tx, userID, name, sandbox)
		return err
	})
	return a, err
}

// GrantAdAccount lets userID use the account (idempotent).
func (db *DB) GrantAdAccount(ctx context.Context, accountID string, userID int64) error {
	tag, err := db.pool.Exec(ctx, `INSERT INTO ad_account_users (account_id, user_id)
		SELECT id, $2 FROM ad_accounts WHERE id = $1 ON CONFLICT DO NOTHING`, accountID, userID)
	if err != nil {
		return wrap("grant ad account "+accountID, err)
	}
	if tag.RowsAffected() == 0 {
		var exists bool
		if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ad_accounts WHERE id = $1)`, accountID).Scan(&exists); err != nil {
			return wrap("grant ad account "+accountID, err)
		}
		if !exists {
			return fmt.Errorf("grant ad account %s: %w", accountID, storage.ErrNotFound)
		}
	}
	return nil
}

// RevokeAdAccount takes a user's access to the account away; the owner's
// access cannot be revoked (storage.ErrConflict).
func (db *DB) RevokeAdAccount(ctx context.Context, accountID string, userID int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM ad_account_users u USING ad_accounts a
		WHERE u.account_id = $1 AND u.user_id = $2 AND a.id = u.account_id AND a.user_id <> u.user_id`, accountID, userID)
	if err != nil {
		return wrap("revoke ad account "+accountID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke ad account %s for user %d: %w", accountID, userID, storage.ErrNotFound)
	}
	return nil
}

// historyRecord is one change to record in account_history.
type historyRecord struct {
	AccountID  string
	EntityType string
	EntityID   string
	ChangeType string
	UserID     int64
	// Before and After are the entity's API snapshots (nil before a
	// create); Changes is derived from them.
	Before, After map[string]any
}

// recordHistory writes rec in tx, the transaction of the change itself, so
// a change is never without its history entry nor an entry without its
// change.
func recordHistory(ctx context.Context, tx pgx.Tx, rec historyRecord) error {
	changes, err := json.Marshal(historyChanges(rec.Before, rec.After))
	if err != nil {
		return fmt.Errorf("history changes of %s %s: %w", rec.EntityType, rec.EntityID, err)
	}
	data, err := json.Marshal(rec.After)
	if err != nil {
		return fmt.Errorf("history snapshot of %s %s: %w", rec.EntityType, rec.EntityID, err)
	}
	var by *int64
	if rec.UserID != 0 {
		by = &rec.UserID
	}
	// clock_timestamp, not now(): the change was made under the entity's row
	// lock, which concurrent changes wait for, so the time of this insert
	// orders entries as the changes were applied (now() is when each
	// transaction began).
	_, err = tx.Exec(ctx, `INSERT INTO account_history (account_id, entity_type, entity_id, change_type, change_by_user_id, changes, entity_data, change_time)
		VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp())`, rec.AccountID, rec.EntityType, rec.EntityID, rec.ChangeType, by, changes, data)
	return wrap("record history of "+rec.EntityType+" "+rec.EntityID, err)
}

// historyChanges maps each attribute whose value differs between before
// and after to {"old": ..., "new": ...}; timestamps of the change itself
// (updated_at) are left out.
func historyChanges(before, after map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range after {
		if k == "updated_at" {
			continue
		}
		old, had := before[k]
		if !had || !reflect.DeepEqual(jsonValue(old), jsonValue(v)) {
			out[k] = map[string]any{"old": old, "new": v}
		}
	}
	return out
}

// jsonValue normalizes v through JSON so typed and decoded values compare.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// isNoRows reports a query that found nothing.
func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
