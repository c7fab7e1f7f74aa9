package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// AdvertiserBusinessCategories is the whole advertiser business category
// catalogue, in id order.
func (db *DB) AdvertiserBusinessCategories(ctx context.Context) ([]storage.AdvertiserBusinessCategory, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name, iab_categories FROM advertiser_business_categories
		ORDER BY length(id), id`)
	if err != nil {
		return nil, wrap("list advertiser business categories", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.AdvertiserBusinessCategory, error) {
		var c storage.AdvertiserBusinessCategory
		err := row.Scan(&c.ID, &c.Name, &c.IABCategories)
		return c, err
	})
	return out, wrap("list advertiser business categories", err)
}

// AdvertiserBusinessCategoriesOf maps each of iabCodes that belongs to an
// advertiser business category to that category (no IAB category belongs
// to two); codes of no category are left out of the map.
func (db *DB) AdvertiserBusinessCategoriesOf(ctx context.Context, iabCodes []string) (map[string]storage.AdvertiserBusinessCategory, error) {
	out := map[string]storage.AdvertiserBusinessCategory{}
	if len(iabCodes) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, name, iab_categories FROM advertiser_business_categories
		WHERE iab_categories && $1::text[] ORDER BY length(id), id`, iabCodes)
	if err != nil {
		return nil, wrap("resolve advertiser business categories", err)
	}
	cats, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.AdvertiserBusinessCategory, error) {
		var c storage.AdvertiserBusinessCategory
		err := row.Scan(&c.ID, &c.Name, &c.IABCategories)
		return c, err
	})
	if err != nil {
		return nil, wrap("resolve advertiser business categories", err)
	}
	for _, c := range cats {
		for _, code := range iabCodes {
			if slices.Contains(c.IABCategories, code) {
				out[code] = c
			}
		}
	}
	return out, nil
}

const curatedCategoryColumns = `id, name, description, country_codes, publisher_user_ids,
	videos_monetized_in_last_thirty_days, created_at, updated_at`

func scanCuratedCategory(row pgx.Row, tail ...any) (storage.CuratedCategory, error) {
	var c storage.CuratedCategory
	err := row.Scan(append([]any{&c.ID, &c.Name, &c.Description, &c.CountryCodes, &c.PublisherUserIDs,
		&c.VideosMonetizedInLastThirtyDays, &c.CreatedAt, &c.UpdatedAt}, tail...)...)
	return c, err
}

// CuratedCategories pages the curated categories available in at least
// one of countryCodes (ISO 3166-1 alpha-2, upper case).
func (db *DB) CuratedCategories(ctx context.Context, countryCodes []string, opts storage.ListOptions) (storage.Page[storage.CuratedCategory], error) {
	spec := listSpec{Listing: storage.ListingCuratedCategories, From: "curated_categories c", Columns: curatedCategoryColumns, ID: "c.id"}
	spec.Filter.add("c.country_codes && $?::text[]", countryCodes)
	return listPage(ctx, db.pool, spec, opts, scanCuratedCategory)
}

// CuratedCategory is one curated category of the catalogue;
// storage.ErrNotFound if there is none with that id.
func (db *DB) CuratedCategory(ctx context.Context, id string) (storage.CuratedCategory, error) {
	c, err := scanCuratedCategory(db.pool.QueryRow(ctx, `SELECT `+curatedCategoryColumns+` FROM curated_categories WHERE id = $1`, id))
	return c, wrap("load curated category "+id, err)
}

const lineItemCuratedCategoryColumns = `id, account_id, line_item_id, curated_category_id, created_at, updated_at, deleted`

func scanLineItemCuratedCategory(row pgx.Row, tail ...any) (storage.LineItemCuratedCategory, error) {
	var c storage.LineItemCuratedCategory
	err := row.Scan(append([]any{&c.ID, &c.AccountID, &c.LineItemID, &c.CuratedCategoryID,
		&c.CreatedAt, &c.UpdatedAt, &c.Deleted}, tail...)...)
	return c, err
}

// LineItemCuratedCategories pages the account's line item curated
// categories.
func (db *DB) LineItemCuratedCategories(ctx context.Context, accountID string, opts storage.ListOptions) (storage.Page[storage.LineItemCuratedCategory], error) {
	spec := listSpec{Listing: storage.ListingLineItemCuratedCategories, From: "line_item_curated_categories l", Columns: lineItemCuratedCategoryColumns, ID: "l.id", Deleted: "l.deleted"}
	spec.Filter.add("l.account_id = $?", accountID)
	return listPage(ctx, db.pool, spec, opts, scanLineItemCuratedCategory)
}

// LineItemCuratedCategory returns one of the account's line item curated
// categories; a deleted one only withDeleted. Else storage.ErrNotFound.
func (db *DB) LineItemCuratedCategory(ctx context.Context, accountID, id string, withDeleted bool) (storage.LineItemCuratedCategory, error) {
	c, err := scanLineItemCuratedCategory(db.pool.QueryRow(ctx, `SELECT `+lineItemCuratedCategoryColumns+`
		FROM line_item_curated_categories WHERE id = $1 AND account_id = $2 AND (NOT deleted OR $3)`, id, accountID, withDeleted))
	return c, wrap("load line item curated category "+id, err)
}

// CreateLineItemCuratedCategory makes lineItemID (a live line item of the
// account) target curatedCategoryID. A missing reference is a
// *storage.MissingRefError; a line item that already targets a curated
// category is storage.ErrConflict.
func (db *DB) CreateLineItemCuratedCategory(ctx context.Context, accountID, lineItemID, curatedCategoryID string) (storage.LineItemCuratedCategory, error) {
	var c storage.LineItemCuratedCategory
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := checkCuratedRefs(ctx, tx, accountID, lineItemID, curatedCategoryID, ""); err != nil {
			return err
		}
		var err error
		c, err = scanLineItemCuratedCategory(tx.QueryRow(ctx, `INSERT INTO line_item_curated_categories
			(account_id, line_item_id, curated_category_id) VALUES ($1, $2, $3)
			RETURNING `+lineItemCuratedCategoryColumns, accountID, lineItemID, curatedCategoryID))
		return wrap("insert line item curated category", err)
	})
	if err != nil {
		return c, fmt.Errorf("create curated category %s of line item %s: %w", curatedCategoryID, lineItemID, err)
	}
	return c, nil
}

// UpdateLineItemCuratedCategory changes a live line item curated category
// of the account (storage.ErrNotFound if there is none), with the rules of
// CreateLineItemCuratedCategory for its new references.
func (db *DB) UpdateLineItemCuratedCategory(ctx context.Context, accountID, id string, u storage.LineItemCuratedCategoryUpdate) (storage.LineItemCuratedCategory, error) {
	var c storage.LineItemCuratedCategory
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		cur, err := scanLineItemCuratedCategory(tx.QueryRow(ctx, `SELECT `+lineItemCuratedCategoryColumns+`
			FROM line_item_curated_categories WHERE id = $1 AND account_id = $2 AND NOT deleted FOR UPDATE`, id, accountID))
		if err != nil {
			return wrap("load line item curated category", err)
		}
		lineItemID, categoryID := cur.LineItemID, cur.CuratedCategoryID
		if u.LineItemID != nil {
			lineItemID = *u.LineItemID
		}
		if u.CuratedCategoryID != nil {
			categoryID = *u.CuratedCategoryID
		}
		if lineItemID == cur.LineItemID && categoryID == cur.CuratedCategoryID {
			c = cur
			return nil
		}
		if err := checkCuratedRefs(ctx, tx, accountID, lineItemID, categoryID, id); err != nil {
			return err
		}
		c, err = scanLineItemCuratedCategory(tx.QueryRow(ctx, `UPDATE line_item_curated_categories
			SET line_item_id = $2, curated_category_id = $3, updated_at = now() WHERE id = $1
			RETURNING `+lineItemCuratedCategoryColumns, id, lineItemID, categoryID))
		return wrap("update line item curated category", err)
	})
	if err != nil {
		return c, fmt.Errorf("update line item curated category %s: %w", id, err)
	}
	return c, nil
}

// DeleteLineItemCuratedCategory soft-deletes a live line item curated
// category of the account and returns it; storage.ErrNotFound if there is
// none (also the second time).
func (db *DB) DeleteLineItemCuratedCategory(ctx context.Context, accountID, id string) (storage.LineItemCuratedCategory, error) {
	c, err := scanLineItemCuratedCategory(db.pool.QueryRow(ctx, `UPDATE line_item_curated_categories
		SET deleted = true, updated_at = now() WHERE id = $1 AND account_id = $2 AND NOT deleted
		RETURNING `+lineItemCuratedCategoryColumns, id, accountID))
	return c, wrap("delete line item curated category "+id, err)
}

// checkCuratedRefs checks, in tx, that lineItemID is a live line item of
// the account (locked, so two links to it are made one after the other),
// that curatedCategoryID exists, and that the line item targets no other
// curated category than the link self ("" for a new one).
func checkCuratedRefs(ctx context.Context, tx pgx.Tx, accountID, lineItemID, curatedCategoryID, self string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM line_items WHERE id = $1 AND account_id = $2 AND NOT deleted FOR UPDATE`,
		lineItemID, accountID).Scan(&one)
	if isNoRows(err) {
		return &storage.MissingRefError{Param: "line_item_id", ID: lineItemID}
	}
	if err != nil {
		return wrap("lock line item "+lineItemID, err)
	}
	err = tx.QueryRow(ctx, `SELECT 1 FROM curated_categories WHERE id = $1`, curatedCategoryID).Scan(&one)
	if isNoRows(err) {
		return &storage.MissingRefError{Param: "curated_category_id", ID: curatedCategoryID}
	}
	if err != nil {
		return wrap("load curated category "+curatedCategoryID, err)
	}
	err = tx.QueryRow(ctx, `SELECT 1 FROM line_item_curated_categories
		WHERE line_item_id = $1 AND NOT deleted AND id <> $2`, lineItemID, self).Scan(&one)
	switch {
	case err == nil:
		return fmt.Errorf("line item %s already targets a curated category: %w", lineItemID, storage.ErrConflict)
	case isNoRows(err):
		return nil
	default:
		return wrap("check curated categories of line item "+lineItemID, err)
	}
}
