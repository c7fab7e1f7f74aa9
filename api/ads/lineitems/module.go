// Package lineitems serves the advertising API's line item endpoints
// (issue 9): list, get, create, update and soft delete, with every rule of
// the line item parameter table enforced on create and on update (see
// docs/ads-line-items.md).
package lineitems

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the lineitems endpoints need of storage (*postgres.DB).
type Store interface {
	// LineItem returns a line item of the account (a deleted one only
	// with withDeleted), else storage.ErrNotFound.
	LineItem(ctx context.Context, accountID, id string, withDeleted bool) (storage.LineItem, error)
	// ListLineItems pages the account's line items matching f.
	ListLineItems(ctx context.Context, f storage.LineItemFilter, opts storage.ListOptions) (storage.Page[storage.LineItem], error)
	// CreateLineItem creates the line item build makes from a non-deleted
	// campaign of the account (storage.ErrNotFound if there is none), with
	// its history entry.
	CreateLineItem(ctx context.Context, userID int64, accountID, campaignID string,
		build func(storage.LineItemCampaign) (storage.LineItem, error)) (storage.LineItem, error)
	// UpdateLineItem replaces a non-deleted line item of the account with
	// what apply makes of it (storage.ErrNotFound if there is none), with
	// its history entry.
	UpdateLineItem(ctx context.Context, userID int64, accountID, id string,
		apply func(storage.LineItem, storage.LineItemCampaign) (storage.LineItem, error)) (storage.LineItem, error)
	// AdvertiserBusinessCategoriesOf maps each IAB category code that
	// belongs to an advertiser business category to that category.
	AdvertiserBusinessCategoriesOf(ctx context.Context, iabCodes []string) (map[string]storage.AdvertiserBusinessCategory, error)
	// DeleteLineItem soft-deletes a non-deleted line item of the account
	// (storage.ErrNotFound if there is none), with its history entry.
	DeleteLineItem(ctx context.Context, userID int64, accountID, id string) (storage.LineItem, error)
	// UserByID loads a user (storage.ErrNotFound if there is none).
	UserByID(ctx context.Context, id int64) (storage.User, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the lineitems endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

// entity is a line item in the generic handlers.
var entity = adsx.Entity{PathValue: "line_item_id", NotFoundCode: codeLineItemNotFound}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET /12/accounts/{account_id}/line_items", Params: listParams(),
			Handle: adsx.List(k, listSpec(), parseFilter, st.ListLineItems, render)},
		{Pattern: "GET /12/accounts/{account_id}/line_items/{line_item_id}",
			Params: []string{"with_deleted"}, Handle: adsx.Get(k, entity, st.LineItem, render)},
		{Pattern: "POST /12/accounts/{account_id}/line_items", Params: createParams(), Write: true, Handle: m.create},
		{Pattern: "PUT /12/accounts/{account_id}/line_items/{line_item_id}", Params: updateParams(),
			Write: true, Handle: m.update},
		{Pattern: "DELETE /12/accounts/{account_id}/line_items/{line_item_id}", Write: true,
			Handle: adsx.Delete(k, entity, st.DeleteLineItem, render)},
	})
}
