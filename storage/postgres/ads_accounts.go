package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// ListAdAccounts pages the accounts f.UserID may use on f's side.
func (db *DB) ListAdAccounts(ctx context.Context, f storage.AdAccountFilter, opts storage.ListOptions) (storage.Page[storage.AdAccount], error) {
	spec := listSpec{Listing: storage.ListingAdAccounts, From: "ad_accounts", Columns: adAccountColumns, ID: "id", Deleted: "deleted"}
	spec.Filter.add("sandbox = $?", f.Sandbox)
	spec.Filter.add("EXISTS (SELECT 1 FROM ad_account_users u WHERE u.account_id = ad_accounts.id AND u.user_id = $?)", f.UserID)
	spec.Filter.in("id", f.IDs)
	if f.NamePrefix != "" {
		spec.Filter.add(`lower(name) LIKE (lower($?) || '%') ESCAPE '\'`, escapeLike(f.NamePrefix))
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanAdAccount)
	if err != nil {
		return page, fmt.Errorf("list ad accounts of user %d: %w", f.UserID, err)
	}
	return page, nil
}

// escapeLike escapes the LIKE wildcards of s (escape character \).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// UpdateAdAccount changes the name and/or industry type of a live account;
// storage.ErrNotFound when it is missing or deleted.
func (db *DB) UpdateAdAccount(ctx context.Context, accountID string, u storage.AdAccountUpdate) (storage.AdAccount, error) {
	a, err := scanAdAccount(db.pool.QueryRow(ctx, `UPDATE ad_accounts
		SET name = COALESCE($2, name), industry_type = COALESCE($3, industry_type), updated_at = now()
		WHERE id = $1 AND NOT deleted RETURNING `+adAccountColumns, accountID, u.Name, u.IndustryType))
	return a, wrap("update ad account "+accountID, err)
}

// DeleteAdAccount soft-deletes a live account and returns it;
// storage.ErrNotFound when it is missing or already deleted.
func (db *DB) DeleteAdAccount(ctx context.Context, accountID string) (storage.AdAccount, error) {
	a, err := scanAdAccount(db.pool.QueryRow(ctx, `UPDATE ad_accounts SET deleted = true, updated_at = now()
		WHERE id = $1 AND NOT deleted RETURNING `+adAccountColumns, accountID))
	return a, wrap("delete ad account "+accountID, err)
}

// CreateAdAccountWithFunding creates an account owned by userID together
// with one active funding instrument, in one transaction.
func (db *DB) CreateAdAccountWithFunding(ctx context.Context, userID int64, name string, sandbox bool, fi storage.NewFundingInstrument) (storage.AdAccount, storage.FundingInstrument, error) {
	var a storage.AdAccount
	var f storage.FundingInstrument
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var err error
		if a, err = createAdAccount(ctx, tx, userID, name, sandbox); err != nil {
			return err
		}
		f, err = createFundingInstrument(ctx, tx, a.ID, fi)
		return err
	})
	if err != nil {
		return a, f, fmt.Errorf("create ad account with funding for user %d: %w", userID, err)
	}
	return a, f, nil
}

const fundingColumns = `id, account_id, name, description, type, currency, entity_status, start_time, end_time,
	credit_limit_local_micro, funded_amount_local_micro, credit_remaining_local_micro, io_header, cancelled,
	created_at, updated_at, deleted`

func scanFundingInstrument(row pgx.Row, tail ...any) (storage.FundingInstrument, error) {
	var f storage.FundingInstrument
	err := row.Scan(append([]any{&f.ID, &f.AccountID, &f.Name, &f.Description, &f.Type, &f.Currency, &f.EntityStatus,
		&f.StartTime, &f.EndTime, &f.CreditLimitLocalMicro, &f.FundedAmountLocalMicro, &f.CreditRemainingLocalMicro,
		&f.IOHeader, &f.Cancelled, &f.CreatedAt, &f.UpdatedAt, &f.Deleted}, tail...)...)
	return f, err
}

// fundingDefaults fills in what fi leaves out: USD, and a name and
// description from its type.
func fundingDefaults(fi storage.NewFundingInstrument) storage.NewFundingInstrument {
	if fi.Type == "" {
		fi.Type = "CREDIT_CARD"
	}
	if fi.Currency == "" {
		fi.Currency = "USD"
	}
	label := strings.ToLower(strings.ReplaceAll(fi.Type, "_", " "))
	if fi.Name == "" {
		fi.Name = "Aviary " + label
	}
	if fi.Description == "" {
		fi.Description = "Aviary " + label + " (no charges are made)"
	}
	return fi
}

func createFundingInstrument(ctx context.Context, tx pgx.Tx, accountID string, fi storage.NewFundingInstrument) (storage.FundingInstrument, error) {
	fi = fundingDefaults(fi)
	f, err := scanFundingInstrument(tx.QueryRow(ctx, `INSERT INTO funding_instruments
		(account_id, name, description, type, currency, credit_limit_local_micro, funded_amount_local_micro, start_time, end_time)
		VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8, now()), $9) RETURNING `+fundingColumns,
		accountID, fi.Name, fi.Description, fi.Type, fi.Currency, fi.CreditLimitLocalMicro, fi.FundedAmountLocalMicro, fi.StartTime, fi.EndTime))
	return f, wrap("create funding instrument of account "+accountID, err)
}

// CreateFundingInstrument creates an active funding instrument of the
// account; storage.ErrNotFound when the account does not exist.
func (db *DB) CreateFundingInstrument(ctx context.Context, accountID string, fi storage.NewFundingInstrument) (storage.FundingInstrument, error) {
	var f storage.FundingInstrument
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := lockAdAccount(ctx, tx, accountID); err != nil {
			return err
		}
		var err error
		f, err = createFundingInstrument(ctx, tx, accountID, fi)
		return err
	})
	return f, err
}

// DeleteFundingInstrument soft-deletes a live funding instrument of the
// account; storage.ErrNotFound when it has none by that id.
func (db *DB) DeleteFundingInstrument(ctx context.Context, accountID, id string) (storage.FundingInstrument, error) {
	f, err := scanFundingInstrument(db.pool.QueryRow(ctx, `UPDATE funding_instruments SET deleted = true, updated_at = now()
		WHERE account_id = $1 AND id = $2 AND NOT deleted RETURNING `+fundingColumns, accountID, id))
	return f, wrap("delete funding instrument "+id, err)
}

// EnsureFundingInstrument returns the account's first active, live funding
// instrument, creating one from fi if it has none. The account row is
// locked, so concurrent calls create at most one.
func (db *DB) EnsureFundingInstrument(ctx context.Context, accountID string, fi storage.NewFundingInstrument) (storage.FundingInstrument, error) {
	var f storage.FundingInstrument
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := lockAdAccount(ctx, tx, accountID); err != nil {
			return err
		}
		var err error
		f, err = scanFundingInstrument(tx.QueryRow(ctx, `SELECT `+fundingColumns+` FROM funding_instruments
			WHERE account_id = $1 AND entity_status = 'ACTIVE' AND NOT deleted AND NOT cancelled
			  AND (end_time IS NULL OR end_time > now())
			ORDER BY created_at, id LIMIT 1`, accountID))
		if !isNoRows(err) {
			return wrap("load funding instrument of account "+accountID, err)
		}
		f, err = createFundingInstrument(ctx, tx, accountID, fi)
		return err
	})
	return f, err
}

// lockAdAccount locks the account's row for the rest of tx;
// storage.ErrNotFound when there is none.
func lockAdAccount(ctx context.Context, tx pgx.Tx, accountID string) error {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM ad_accounts WHERE id = $1 FOR UPDATE`, accountID).Scan(&id)
	return wrap("lock ad account "+accountID, err)
}

// FundingInstrument loads one funding instrument of the account, deleted
// or not; storage.ErrNotFound when the account has none with that id.
func (db *DB) FundingInstrument(ctx context.Context, accountID, id string) (storage.FundingInstrument, error) {
	f, err := scanFundingInstrument(db.pool.QueryRow(ctx, `SELECT `+fundingColumns+` FROM funding_instruments
		WHERE account_id = $1 AND id = $2`, accountID, id))
	return f, wrap("load funding instrument "+id, err)
}

// ListFundingInstruments pages the account's funding instruments,
// optionally only those in ids.
func (db *DB) ListFundingInstruments(ctx context.Context, accountID string, ids []string, opts storage.ListOptions) (storage.Page[storage.FundingInstrument], error) {
	spec := listSpec{Listing: storage.ListingFundingInstruments, From: "funding_instruments", Columns: fundingColumns, ID: "id", Deleted: "deleted"}
	spec.Filter.add("account_id = $?", accountID)
	spec.Filter.in("id", ids)
	page, err := listPage(ctx, db.pool, spec, opts, scanFundingInstrument)
	if err != nil {
		return page, fmt.Errorf("list funding instruments of account %s: %w", accountID, err)
	}
	return page, nil
}

const accountAppColumns = `id, account_id, app_store_identifier, conversion_tracking_enabled, deep_link_pattern, os_type,
	created_at, updated_at, deleted`

func scanAccountApp(row pgx.Row, tail ...any) (storage.AccountApp, error) {
	var a storage.AccountApp
	err := row.Scan(append([]any{&a.ID, &a.AccountID, &a.AppStoreIdentifier, &a.ConversionTrackingEnabled, &a.DeepLinkPattern,
		&a.OSType, &a.CreatedAt, &a.UpdatedAt, &a.Deleted}, tail...)...)
	return a, err
}

// ListAccountApps pages the account's mobile apps.
func (db *DB) ListAccountApps(ctx context.Context, accountID string, opts storage.ListOptions) (storage.Page[storage.AccountApp], error) {
	spec := listSpec{Listing: storage.ListingAccountApps, From: "account_apps", Columns: accountAppColumns, ID: "id", Deleted: "deleted"}
	spec.Filter.add("account_id = $?", accountID)
	page, err := listPage(ctx, db.pool, spec, opts, scanAccountApp)
	if err != nil {
		return page, fmt.Errorf("list account apps of account %s: %w", accountID, err)
	}
	return page, nil
}

// AdAccountFeatures lists the account's features in name order.
func (db *DB) AdAccountFeatures(ctx context.Context, accountID string) ([]string, error) {
	return queryStrings(ctx, db.pool, "list features of account "+accountID,
		`SELECT feature FROM ad_account_features WHERE account_id = $1 ORDER BY feature`, accountID)
}

// SetAdAccountFeature grants (on) or withdraws a feature of the account
// (idempotent); storage.ErrNotFound when the account does not exist.
func (db *DB) SetAdAccountFeature(ctx context.Context, accountID, feature string, on bool) error {
	return db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := lockAdAccount(ctx, tx, accountID); err != nil {
			return err
		}
		sql := `DELETE FROM ad_account_features WHERE account_id = $1 AND feature = $2`
		if on {
			sql = `INSERT INTO ad_account_features (account_id, feature) VALUES ($1, $2) ON CONFLICT DO NOTHING`
		}
		_, err := tx.Exec(ctx, sql, accountID, feature)
		return wrap(fmt.Sprintf("set feature %s of account %s", feature, accountID), err)
	})
}

const historyColumns = `id, account_id, entity_type, entity_id, change_type, change_by_user_id, change_platform,
	changes, entity_data, change_time`

func scanHistoryEntry(row pgx.Row, tail ...any) (storage.HistoryEntry, error) {
	var h storage.HistoryEntry
	err := row.Scan(append([]any{&h.ID, &h.AccountID, &h.EntityType, &h.EntityID, &h.ChangeType, &h.ChangeByUserID,
		&h.ChangePlatform, &h.Changes, &h.EntityData, &h.ChangeTime}, tail...)...)
	return h, err
}

// AccountHistory pages the recorded changes of one entity of the account
// in q's time window, oldest first (ties in entry id order).
func (db *DB) AccountHistory(ctx context.Context, q storage.HistoryQuery, opts storage.ListOptions) (storage.Page[storage.HistoryEntry], error) {
	spec := listSpec{Listing: storage.ListingAccountHistory, From: "account_history", Columns: historyColumns, ID: "id::text"}
	spec.Filter.add("account_id = $?", q.AccountID)
	spec.Filter.add("entity_type = $?", q.EntityType)
	spec.Filter.add("entity_id = $?", q.EntityID)
	spec.Filter.add("change_time >= $?", q.Start)
	spec.Filter.add("change_time < $?", q.End)
	if q.UserID != nil {
		spec.Filter.add("change_by_user_id = $?", *q.UserID)
	}
	opts.Sort = storage.Sort{Field: "change_time", Desc: opts.Sort.Desc}
	page, err := listPage(ctx, db.pool, spec, opts, scanHistoryEntry)
	if err != nil {
		return page, fmt.Errorf("account history of %s %s: %w", q.EntityType, q.EntityID, err)
	}
	return page, nil
}
