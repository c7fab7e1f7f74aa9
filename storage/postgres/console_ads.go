package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// The developer console's ads reads (docs/console.md, "Ads"). Campaigns,
// line items, funding instruments and audiences are read with the ads
// API's own list functions; these are what the API has no list for: the
// accounts and catalogs a console viewer sees on both sides, an
// audience's batch history, every product of a catalog and the keyword
// insights query log of one account.

// consoleAdAccountColumns are an account's columns and its owner's username.
const consoleAdAccountColumns = adAccountColumns + `,
	COALESCE((SELECT username FROM users WHERE users.id = ad_accounts.user_id), '')`

func scanConsoleAdAccount(row pgx.Row) (storage.ConsoleAdAccount, error) {
	var c storage.ConsoleAdAccount
	a, err := scanAdAccount(row, &c.OwnerUsername)
	c.AdAccount = a
	return c, err
}

// consoleAccountVisible is the condition that userID ($1) may use the
// account (owned or granted), or that all ($2) is set.
const consoleAccountVisible = `($2 OR EXISTS (SELECT 1 FROM ad_account_users u
	WHERE u.account_id = ad_accounts.id AND u.user_id = $1))`

// ConsoleAdAccounts lists the ads accounts userID may use (owned or
// granted), or every account when all is set (an administrator), of both
// sides, deleted ones too: production first, then by creation.
func (db *DB) ConsoleAdAccounts(ctx context.Context, userID int64, all bool) ([]storage.ConsoleAdAccount, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+consoleAdAccountColumns+` FROM ad_accounts
		WHERE `+consoleAccountVisible+` ORDER BY sandbox, created_at, id LIMIT 500`, userID, all)
	if err != nil {
		return nil, wrap("list console ad accounts", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.ConsoleAdAccount, error) { return scanConsoleAdAccount(r) })
	return out, wrap("list console ad accounts", err)
}

// ConsoleAdAccount is account id if userID may use it, or any account
// when all is set; else storage.ErrNotFound (another user's is missing).
func (db *DB) ConsoleAdAccount(ctx context.Context, userID int64, all bool, id string) (storage.ConsoleAdAccount, error) {
	a, err := scanConsoleAdAccount(db.pool.QueryRow(ctx, `SELECT `+consoleAdAccountColumns+` FROM ad_accounts
		WHERE `+consoleAccountVisible+` AND id = $3`, userID, all, id))
	return a, wrap("load console ad account "+id, err)
}

// ConsoleAudienceBatches are the users batches of an audience, newest
// first, at most limit: every batch, or with recordedBy set only those that
// account recorded (an account the audience is shared with sees its own).
func (db *DB) ConsoleAudienceBatches(ctx context.Context, audienceID, recordedBy string, limit int) ([]storage.ConsoleAudienceBatch, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+batchColumns+`, failure, settled_at, members_added, members_removed, members_merged
		FROM custom_audience_batches WHERE custom_audience_id = $1 AND ($2 = '' OR account_id = $2)
		ORDER BY seq DESC LIMIT $3`, audienceID, recordedBy, limit)
	if err != nil {
		return nil, wrap("list batches of custom audience "+audienceID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.ConsoleAudienceBatch, error) {
		var c storage.ConsoleAudienceBatch
		b, err := scanBatch(r, &c.Failure, &c.SettledAt, &c.MembersAdded, &c.MembersRemoved, &c.MembersMerged)
		c.AudienceBatch = b
		return c, err
	})
	return out, wrap("list batches of custom audience "+audienceID, err)
}

// consoleCatalogColumns are a catalog's columns, its owner's username and
// its product counts (all, with errors, awaiting the image check).
const consoleCatalogColumns = `c.id, c.user_id, c.name, c.sandbox, c.created_at, c.updated_at,
	COALESCE((SELECT username FROM users WHERE users.id = c.user_id), ''),
	(SELECT count(*) FROM products p WHERE p.catalog_id = c.id),
	(SELECT count(*) FROM products p WHERE p.catalog_id = c.id AND p.errors <> '[]'::jsonb),
	(SELECT count(*) FROM products p WHERE p.catalog_id = c.id AND p.status = '` + storage.ProductPendingImages + `')`

func scanConsoleCatalog(row pgx.Row) (storage.ConsoleCatalog, error) {
	var c storage.ConsoleCatalog
	p := &c.ProductCatalog
	err := row.Scan(&p.ID, &p.UserID, &p.Name, &p.Sandbox, &p.CreatedAt, &p.UpdatedAt,
		&c.OwnerUsername, &c.Products, &c.WithErrors, &c.Pending)
	return c, err
}

// ConsoleProductCatalogs lists userID's product catalogs of both sides (a
// catalog belongs to the user who made it), or every catalog when all is
// set: production first, then by creation.
func (db *DB) ConsoleProductCatalogs(ctx context.Context, userID int64, all bool) ([]storage.ConsoleCatalog, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+consoleCatalogColumns+` FROM product_catalogs c
		WHERE $2 OR c.user_id = $1 ORDER BY c.sandbox, c.created_at, c.id LIMIT 500`, userID, all)
	if err != nil {
		return nil, wrap("list console product catalogs", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.ConsoleCatalog, error) { return scanConsoleCatalog(r) })
	return out, wrap("list console product catalogs", err)
}

// ConsoleProductCatalog is catalog id if it is userID's, or any catalog
// when all is set; else storage.ErrNotFound.
func (db *DB) ConsoleProductCatalog(ctx context.Context, userID int64, all bool, id string) (storage.ConsoleCatalog, error) {
	c, err := scanConsoleCatalog(db.pool.QueryRow(ctx, `SELECT `+consoleCatalogColumns+` FROM product_catalogs c
		WHERE ($2 OR c.user_id = $1) AND c.id = $3`, userID, all, id))
	return c, wrap("load console product catalog "+id, err)
}

// ConsoleCatalogProducts are a catalog's products, every variant of every
// group, in submission order, at most limit.
func (db *DB) ConsoleCatalogProducts(ctx context.Context, catalogID string, limit int) ([]storage.Product, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+productColumns+` FROM products p WHERE p.catalog_id = $1
		ORDER BY p.seq LIMIT $2`, catalogID, limit)
	if err != nil {
		return nil, wrap("list products of catalog "+catalogID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.Product, error) { return scanProduct(r) })
	return out, wrap("list products of catalog "+catalogID, err)
}

// ConsoleInsightQueries are the logged keyword insights queries of an ads
// account (the account the log names: the asking user's lowest-id live
// account on the listener, docs/insights-api.md), newest first, at most
// limit.
func (db *DB) ConsoleInsightQueries(ctx context.Context, accountID string, limit int) ([]storage.InsightQueryLog, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+insightQueryColumns+` FROM insight_queries
		WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, accountID, limit)
	if err != nil {
		return nil, wrap("insight queries of account "+accountID, err)
	}
	out, err := pgx.CollectRows(rows, scanInsightQuery)
	return out, wrap("insight queries of account "+accountID, err)
}
