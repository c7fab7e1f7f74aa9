// Package catalogs serves the advertising API's catalogs endpoints (issue
// 11): a user's product catalog and its products, upserted by JSON batches
// that are validated synchronously (domain/products) and whose
// images the catalogs worker checks afterwards. See docs/ads-catalogs.md.
package catalogs

import (
	"context"
	"net/http"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/products"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the catalogs endpoints need of storage (*postgres.DB).
// Every catalog and product method takes the listener side (sandbox,
// adsx.Sandbox): a catalog of the other side is missing.
type Store interface {
	// UserHasAdFeature reports whether an ads account the user may use on
	// that side has the feature.
	UserHasAdFeature(ctx context.Context, userID int64, feature string, sandbox bool) (bool, error)
	// ProductCatalogsOf lists the user's catalogs of the side (at most one).
	ProductCatalogsOf(ctx context.Context, userID int64, sandbox bool) ([]storage.ProductCatalog, error)
	// ProductCatalog returns the user's catalog (storage.ErrNotFound).
	ProductCatalog(ctx context.Context, userID int64, sandbox bool, id string) (storage.ProductCatalog, error)
	// CreateProductCatalog creates the user's catalog of the side
	// (storage.ErrConflict when there is one).
	CreateProductCatalog(ctx context.Context, userID int64, sandbox bool, name string) (storage.ProductCatalog, error)
	// RenameProductCatalog renames the user's catalog (storage.ErrNotFound).
	RenameProductCatalog(ctx context.Context, userID int64, sandbox bool, id, name string) (storage.ProductCatalog, error)
	// DeleteProductCatalog deletes the user's catalog and its products.
	DeleteProductCatalog(ctx context.Context, userID int64, sandbox bool, id string) (storage.ProductCatalog, error)
	// UpsertProducts creates or updates valid products of the catalog.
	UpsertProducts(ctx context.Context, userID int64, sandbox bool, catalogID string, items []storage.ProductUpsert) ([]storage.ProductUpserted, error)
	// ListProducts returns one page of a catalog's products (f.Sandbox
	// is the side).
	ListProducts(ctx context.Context, f storage.ProductFilter, opts storage.ListOptions) (storage.Page[storage.Product], error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the catalogs endpoints.
type Module struct {
	deps      Deps
	validator *products.Validator
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d, validator: products.NewValidator()} }

const (
	collection    = "/12/product_catalogs"
	item          = collection + "/{product_catalog_id}"
	productsRoute = item + "/products"
)

// Rate limits of the reference, per user and 15 minutes.
var (
	readLimit     = httpx.Limit{Name: "ads_product_catalogs_read", Requests: 1000, Scope: httpx.PerUser}
	writeLimit    = httpx.Limit{Name: "ads_product_catalogs_write", Requests: 20, Scope: httpx.PerUser}
	productsRead  = httpx.Limit{Name: "ads_products_read", Requests: 1000, Scope: httpx.PerUser}
	productsWrite = httpx.Limit{Name: "ads_products_write", Requests: 600, Scope: httpx.PerUser}
)

// maxBatchBody caps a PUT products body: 25 products of the longest
// attributes (5,000 characters of description, 11 image URLs) fit.
const maxBatchBody = 2 << 20

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return m.deps.Kit.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: []string{"user_id"}, Limit: readLimit, Handle: m.listCatalogs},
		{Pattern: "POST " + collection, Params: []string{"name", "user_id"}, Write: true, Limit: writeLimit, Handle: m.createCatalog},
		{Pattern: "PUT " + item, Params: []string{"name"}, Write: true, Limit: writeLimit, Handle: m.renameCatalog},
		{Pattern: "DELETE " + item, Write: true, Limit: writeLimit, Handle: m.deleteCatalog},
		{Pattern: "GET " + productsRoute, Params: []string{"item_group_key", "count", "cursor"}, Limit: productsRead, Handle: m.listProducts},
		{Pattern: "PUT " + productsRoute, Write: true, Limit: productsWrite,
			Body: &httpx.Body{MaxBytes: maxBatchBody, Types: []string{httpx.ContentJSON}}, Handle: m.upsertProducts},
	})
}

// catalog is the path's catalog if it is the caller's and of this
// listener's side (else the 404 of a missing one) and the caller has the
// CATALOGS feature on this side.
func (m *Module) catalog(r *http.Request) (storage.ProductCatalog, error) {
	id := r.PathValue("product_catalog_id")
	c, err := m.deps.Store.ProductCatalog(r.Context(), adsx.UserID(r), adsx.Sandbox(r.Context()), id)
	if err != nil {
		return c, catalogErr(err, id)
	}
	return c, m.feature(r)
}
