package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// UserHasAdFeature reports whether an ads account the user may use (owned
// or granted), not deleted and on the given side, has the feature.
func (db *DB) UserHasAdFeature(ctx context.Context, userID int64, feature string, sandbox bool) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ad_account_users u
		JOIN ad_accounts a ON a.id = u.account_id
		JOIN ad_account_features f ON f.account_id = a.id
		WHERE u.user_id = $1 AND f.feature = $2 AND a.sandbox = $3 AND NOT a.deleted)`, userID, feature, sandbox).Scan(&ok)
	return ok, wrap(fmt.Sprintf("feature %s of user %d", feature, userID), err)
}

const productCatalogColumns = `id, user_id, name, sandbox, created_at, updated_at`

func scanProductCatalog(row pgx.Row) (storage.ProductCatalog, error) {
	var c storage.ProductCatalog
	err := row.Scan(&c.ID, &c.UserID, &c.Name, &c.Sandbox, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// Every catalog query below takes the listener side (sandbox): a
// production catalog is invisible on the sandbox listener and the other
// way round, as if it did not exist.

// ProductCatalogsOf lists the user's product catalogs of the side (at
// most one).
func (db *DB) ProductCatalogsOf(ctx context.Context, userID int64, sandbox bool) ([]storage.ProductCatalog, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+productCatalogColumns+` FROM product_catalogs
		WHERE user_id = $1 AND sandbox = $2 ORDER BY created_at, id`, userID, sandbox)
	if err != nil {
		return nil, wrap(fmt.Sprintf("list product catalogs of user %d", userID), err)
	}
	cats, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.ProductCatalog, error) { return scanProductCatalog(r) })
	return cats, wrap(fmt.Sprintf("list product catalogs of user %d", userID), err)
}

// ProductCatalog returns the user's catalog id of the side;
// storage.ErrNotFound when it is missing, another user's or of the other
// side.
func (db *DB) ProductCatalog(ctx context.Context, userID int64, sandbox bool, id string) (storage.ProductCatalog, error) {
	c, err := scanProductCatalog(db.pool.QueryRow(ctx, `SELECT `+productCatalogColumns+` FROM product_catalogs
		WHERE id = $1 AND user_id = $2 AND sandbox = $3`, id, userID, sandbox))
	return c, wrap("load product catalog "+id, err)
}

// CreateProductCatalog creates the user's catalog of the side;
// storage.ErrConflict when the user has one on that side already.
func (db *DB) CreateProductCatalog(ctx context.Context, userID int64, sandbox bool, name string) (storage.ProductCatalog, error) {
	c, err := scanProductCatalog(db.pool.QueryRow(ctx, `INSERT INTO product_catalogs (user_id, sandbox, name) VALUES ($1, $2, $3)
		RETURNING `+productCatalogColumns, userID, sandbox, name))
	return c, wrap(fmt.Sprintf("create product catalog of user %d", userID), err)
}

// RenameProductCatalog sets the name of the user's catalog id of the side;
// storage.ErrNotFound when it is missing, another user's or of the other
// side.
func (db *DB) RenameProductCatalog(ctx context.Context, userID int64, sandbox bool, id, name string) (storage.ProductCatalog, error) {
	c, err := scanProductCatalog(db.pool.QueryRow(ctx, `UPDATE product_catalogs
		SET name = $4, updated_at = CASE WHEN name = $4 THEN updated_at ELSE now() END
		WHERE id = $1 AND user_id = $2 AND sandbox = $3 RETURNING `+productCatalogColumns, id, userID, sandbox, name))
	return c, wrap("rename product catalog "+id, err)
}

// DeleteProductCatalog deletes the user's catalog id of the side and its
// products for good and returns it; storage.ErrNotFound when it is
// missing, another user's or of the other side.
func (db *DB) DeleteProductCatalog(ctx context.Context, userID int64, sandbox bool, id string) (storage.ProductCatalog, error) {
	c, err := scanProductCatalog(db.pool.QueryRow(ctx, `DELETE FROM product_catalogs WHERE id = $1 AND user_id = $2 AND sandbox = $3
		RETURNING `+productCatalogColumns, id, userID, sandbox))
	return c, wrap("delete product catalog "+id, err)
}

// storedProduct is what an upsert compares a submitted product with.
type storedProduct struct {
	key          string
	fields       storage.ProductFields
	version      int64
	status       string
	itemGroupKey *string
}

// UpsertProducts creates the products of unknown ids and updates the
// known ones of the user's catalog, in one transaction under the catalog's
// row lock (batches of a catalog run one at a time, so the products of an
// item_group_id share one item_group_key). An update takes version+1 and
// status PENDING and keeps product_key and seq; a product equal to the
// stored one is left as it is (NO_CHANGE). Outcomes are in items' order;
// storage.ErrNotFound when the catalog is missing, another user's or of
// the other side.
func (db *DB) UpsertProducts(ctx context.Context, userID int64, sandbox bool, catalogID string, items []storage.ProductUpsert) ([]storage.ProductUpserted, error) {
	var out []storage.ProductUpserted
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var id string
		if err := tx.QueryRow(ctx, `SELECT id FROM product_catalogs WHERE id = $1 AND user_id = $2 AND sandbox = $3 FOR UPDATE`,
			catalogID, userID, sandbox).Scan(&id); err != nil {
			return wrap("lock product catalog "+catalogID, err)
		}
		stored, err := loadProducts(ctx, tx, catalogID, items)
		if err != nil {
			return err
		}
		groups, err := groupKeys(ctx, tx, catalogID, items)
		if err != nil {
			return err
		}
		out = planUpserts(items, stored, groups)
		return writeProducts(ctx, tx, catalogID, items, out, groups)
	})
	if err != nil {
		return nil, fmt.Errorf("upsert products of catalog %s: %w", catalogID, err)
	}
	return out, nil
}

// loadProducts reads the stored products of the items' ids.
func loadProducts(ctx context.Context, tx pgx.Tx, catalogID string, items []storage.ProductUpsert) (map[string]storedProduct, error) {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.Fields.ID
	}
	rows, err := tx.Query(ctx, `SELECT id, product_key, fields, version, status, item_group_key FROM products
		WHERE catalog_id = $1 AND id = ANY($2)`, catalogID, ids)
	if err != nil {
		return nil, wrap("load products", err)
	}
	defer rows.Close()
	stored := map[string]storedProduct{}
	for rows.Next() {
		var id string
		var raw []byte
		var s storedProduct
		if err := rows.Scan(&id, &s.key, &raw, &s.version, &s.status, &s.itemGroupKey); err != nil {
			return nil, wrap("scan product", err)
		}
		if err := json.Unmarshal(raw, &s.fields); err != nil {
			return nil, fmt.Errorf("decode fields of product %s: %w", id, err)
		}
		stored[id] = s
	}
	return stored, wrap("load products", rows.Err())
}

// groupKeys maps each item_group_id of the items to its item_group_key:
// the key the catalog's products of that group have, else a new one.
func groupKeys(ctx context.Context, tx pgx.Tx, catalogID string, items []storage.ProductUpsert) (map[string]string, error) {
	var gids []string
	for _, it := range items {
		if g := it.Fields.ItemGroupID; g != nil {
			gids = append(gids, *g)
		}
	}
	keys := map[string]string{}
	if len(gids) == 0 {
		return keys, nil
	}
	rows, err := tx.Query(ctx, `SELECT DISTINCT ON (item_group_id) item_group_id, item_group_key FROM products
		WHERE catalog_id = $1 AND item_group_id = ANY($2) AND item_group_key IS NOT NULL ORDER BY item_group_id, seq`, catalogID, gids)
	if err != nil {
		return nil, wrap("load item group keys", err)
	}
	defer rows.Close()
	for rows.Next() {
		var gid, key string
		if err := rows.Scan(&gid, &key); err != nil {
			return nil, wrap("scan item group key", err)
		}
		keys[gid] = key
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("load item group keys", err)
	}
	var fresh []string
	for _, g := range gids {
		if _, ok := keys[g]; !ok && !slices.Contains(fresh, g) {
			fresh = append(fresh, g)
		}
	}
	if len(fresh) == 0 {
		return keys, nil
	}
	// One round trip for every new group's key.
	var newKeys []string
	if err := tx.QueryRow(ctx, `SELECT array_agg(aviary_next_id()::text) FROM generate_series(1, $1::int)`, len(fresh)).Scan(&newKeys); err != nil {
		return nil, wrap("new item group keys", err)
	}
	for i, g := range fresh {
		keys[g] = newKeys[i]
	}
	return keys, nil
}

// planUpserts decides each item's outcome; those to write get Outcome
// create or update and are completed by writeProducts.
func planUpserts(items []storage.ProductUpsert, stored map[string]storedProduct, groups map[string]string) []storage.ProductUpserted {
	out := make([]storage.ProductUpserted, len(items))
	for i, it := range items {
		s, known := stored[it.Fields.ID]
		o := storage.ProductUpserted{ID: it.Fields.ID}
		switch {
		case it.Key != nil && (!known || *it.Key != s.key):
			o.Outcome = storage.ProductError
			o.Errors = []storage.ProductIssue{{Field: "product_key", Rule: "product_key_mismatch",
				Message: fmt.Sprintf("product_key %q is not the key of the product with id %q in this catalog", *it.Key, it.Fields.ID)}}
		case !known:
			o.Outcome = storage.ProductCreateSuccess
		case reflect.DeepEqual(s.fields, it.Fields) && reflect.DeepEqual(s.itemGroupKey, groupKey(it, groups)):
			o.Outcome, o.Key, o.Status, o.Version = storage.ProductNoChange, s.key, s.status, s.version
		default:
			o.Outcome = storage.ProductUpdateSuccess
		}
		out[i] = o
	}
	return out
}

func groupKey(it storage.ProductUpsert, groups map[string]string) *string {
	if it.Fields.ItemGroupID == nil {
		return nil
	}
	k := groups[*it.Fields.ItemGroupID]
	return &k
}

// writeProducts inserts or updates the planned creates and updates in one
// statement, in items' order (so seq follows the batch order), and fills
// in their key, status and version.
func writeProducts(ctx context.Context, tx pgx.Tx, catalogID string, items []storage.ProductUpsert, out []storage.ProductUpserted, groups map[string]string) error {
	var ids, fields, warnings []string
	var gids, gkeys []*string
	at := map[string]int{}
	for i, it := range items {
		if o := out[i].Outcome; o != storage.ProductCreateSuccess && o != storage.ProductUpdateSuccess {
			continue
		}
		f, err := json.Marshal(it.Fields)
		if err != nil {
			return fmt.Errorf("encode product %s: %w", it.Fields.ID, err)
		}
		w, err := json.Marshal(issues(it.Warnings))
		if err != nil {
			return fmt.Errorf("encode warnings of product %s: %w", it.Fields.ID, err)
		}
		at[it.Fields.ID] = i
		ids, fields, warnings = append(ids, it.Fields.ID), append(fields, string(f)), append(warnings, string(w))
		gids, gkeys = append(gids, it.Fields.ItemGroupID), append(gkeys, groupKey(it, groups))
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `INSERT INTO products (catalog_id, id, item_group_id, item_group_key, fields, status, warnings)
		SELECT $1, u.id, u.gid, u.gkey, u.fields::jsonb, $7, u.warnings::jsonb
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(id, gid, gkey, fields, warnings, n)
		ORDER BY u.n
		ON CONFLICT (catalog_id, id) DO UPDATE SET item_group_id = EXCLUDED.item_group_id, item_group_key = EXCLUDED.item_group_key,
			fields = EXCLUDED.fields, status = EXCLUDED.status, errors = '[]', warnings = EXCLUDED.warnings,
			version = products.version + 1, images_swept_at = NULL, updated_at = now()
		RETURNING id, product_key, version, status`, catalogID, ids, gids, gkeys, fields, warnings, storage.ProductPendingImages)
	if err != nil {
		return wrap("write products", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, key, status string
		var version int64
		if err := rows.Scan(&id, &key, &version, &status); err != nil {
			return wrap("scan written product", err)
		}
		o := &out[at[id]]
		o.Key, o.Version, o.Status = key, version, status
	}
	return wrap("write products", rows.Err())
}

const productColumns = `p.catalog_id, p.product_key, p.item_group_key, p.fields, p.status, p.errors, p.warnings,
	p.version, p.seq, p.created_at, p.updated_at`

func scanProduct(row pgx.Row, tail ...any) (storage.Product, error) {
	var p storage.Product
	var fields, errs, warns []byte
	if err := row.Scan(append([]any{&p.CatalogID, &p.Key, &p.ItemGroupKey, &fields, &p.Status, &errs, &warns,
		&p.Version, &p.Seq, &p.CreatedAt, &p.UpdatedAt}, tail...)...); err != nil {
		return p, err
	}
	for _, d := range []struct {
		raw []byte
		dst any
	}{{fields, &p.Fields}, {errs, &p.Errors}, {warns, &p.Warnings}} {
		if err := json.Unmarshal(d.raw, d.dst); err != nil {
			return p, fmt.Errorf("decode product %s: %w", p.Key, err)
		}
	}
	return p, nil
}

// ListProducts returns one page of a catalog's products in submission
// order: with f.ItemGroupKey, every variant of that group; else the
// ungrouped products and the first submitted variant of each group. A
// catalog of the other side than f.Sandbox lists nothing.
func (db *DB) ListProducts(ctx context.Context, f storage.ProductFilter, opts storage.ListOptions) (storage.Page[storage.Product], error) {
	spec := listSpec{Listing: storage.ListingProducts, From: "products p", Columns: productColumns, ID: "p.id"}
	spec.Filter.add("p.catalog_id = $?", f.CatalogID)
	spec.Filter.add("EXISTS (SELECT 1 FROM product_catalogs c WHERE c.id = p.catalog_id AND c.sandbox = $?)", f.Sandbox)
	if f.ItemGroupKey != "" {
		spec.Filter.add("p.item_group_key = $?", f.ItemGroupKey)
	} else {
		spec.Filter.add(`(p.item_group_key IS NULL OR NOT EXISTS (SELECT 1 FROM products q
			WHERE q.catalog_id = p.catalog_id AND q.item_group_key = p.item_group_key AND q.seq < p.seq))`)
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanProduct)
	if err != nil {
		return page, fmt.Errorf("list products of catalog %s: %w", f.CatalogID, err)
	}
	return page, nil
}
