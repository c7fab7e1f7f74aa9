// Package categories serves the advertising API's catalogues and the
// links made from them (issue 9): advertiser business categories, curated
// categories, the valid line item placements per product type, and line
// item curated categories.
package categories

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the categories endpoints need of storage (*postgres.DB).
type Store interface {
	// AdvertiserBusinessCategories is the whole catalogue.
	AdvertiserBusinessCategories(ctx context.Context) ([]storage.AdvertiserBusinessCategory, error)
	// CuratedCategories pages the curated categories available in any of
	// countryCodes.
	CuratedCategories(ctx context.Context, countryCodes []string, opts storage.ListOptions) (storage.Page[storage.CuratedCategory], error)
	// CuratedCategory is one curated category (storage.ErrNotFound).
	CuratedCategory(ctx context.Context, id string) (storage.CuratedCategory, error)
	// LineItemCuratedCategories pages the account's links.
	LineItemCuratedCategories(ctx context.Context, accountID string, opts storage.ListOptions) (storage.Page[storage.LineItemCuratedCategory], error)
	// LineItemCuratedCategory is one link of the account (storage.ErrNotFound).
	LineItemCuratedCategory(ctx context.Context, accountID, id string, withDeleted bool) (storage.LineItemCuratedCategory, error)
	// CreateLineItemCuratedCategory links a line item to a curated category
	// (*storage.MissingRefError, storage.ErrConflict).
	CreateLineItemCuratedCategory(ctx context.Context, accountID, lineItemID, curatedCategoryID string) (storage.LineItemCuratedCategory, error)
	// UpdateLineItemCuratedCategory changes a live link.
	UpdateLineItemCuratedCategory(ctx context.Context, accountID, id string, u storage.LineItemCuratedCategoryUpdate) (storage.LineItemCuratedCategory, error)
	// DeleteLineItemCuratedCategory soft-deletes a live link.
	DeleteLineItemCuratedCategory(ctx context.Context, accountID, id string) (storage.LineItemCuratedCategory, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the categories endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

// link is a line item curated category in the generic handlers.
var link = adsx.Entity{PathValue: linkParam, NotFoundCode: adsx.CodeNotFound}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	listLinks := adsx.List(k, linkList,
		func(_ *adsx.Params, acct storage.AdAccount) string { return acct.ID }, st.LineItemCuratedCategories, renderLink)
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET /12/advertiser_business_categories", Handle: m.businessCategories},
		{Pattern: "GET /12/accounts/{account_id}/curated_categories",
			Params: []string{"country_codes", "count", "cursor"}, Handle: m.curatedCategories},
		{Pattern: "GET /12/accounts/{account_id}/curated_categories/{curated_category_id}",
			Handle: m.curatedCategory},
		{Pattern: "GET /12/line_items/placements", Params: []string{"product_type"}, Handle: m.placements},
		{Pattern: "GET " + linksPath, Params: adsx.ListParams, Handle: listLinks},
		{Pattern: "GET " + linkPath, Params: []string{"with_deleted"}, Handle: adsx.Get(k, link, st.LineItemCuratedCategory, renderLink)},
		{Pattern: "POST " + linksPath, Params: []string{"line_item_id", "curated_category_id"},
			Write: true, Handle: m.createLink},
		{Pattern: "PUT " + linkPath, Params: []string{"line_item_id", "curated_category_id"},
			Write: true, Handle: m.updateLink},
		{Pattern: "DELETE " + linkPath, Write: true,
			Handle: adsx.Delete(k, link, adsx.WithoutUser(st.DeleteLineItemCuratedCategory), renderLink)},
	})
}
