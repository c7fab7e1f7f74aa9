// Package campaigns serves the advertising API's campaigns endpoints (issue 9).
package campaigns

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the campaigns endpoints need of storage (*postgres.DB).
type Store interface {
	// ListCampaigns returns one page of an account's campaigns.
	ListCampaigns(ctx context.Context, f storage.CampaignFilter, opts storage.ListOptions) (storage.Page[storage.Campaign], error)
	// Campaign returns one campaign of the account (storage.ErrNotFound).
	Campaign(ctx context.Context, accountID, id string, withDeleted bool) (storage.Campaign, error)
	// CreateCampaign creates a campaign with its history entry.
	CreateCampaign(ctx context.Context, userID int64, n storage.NewCampaign) (storage.Campaign, error)
	// UpdateCampaign changes a campaign through apply, with its history entry.
	UpdateCampaign(ctx context.Context, userID int64, accountID, id string, apply func(*storage.Campaign) error) (storage.Campaign, error)
	// DeleteCampaign soft-deletes a campaign, with its history entry.
	DeleteCampaign(ctx context.Context, userID int64, accountID, id string) (storage.Campaign, error)
	// FundingInstrument loads a funding instrument of the account, deleted
	// or not (storage.ErrNotFound).
	FundingInstrument(ctx context.Context, accountID, id string) (storage.FundingInstrument, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the campaigns endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	collection = "/12/accounts/{account_id}/campaigns"
	item       = collection + "/{campaign_id}"
)

// entity is a campaign in the generic handlers.
var entity = adsx.Entity{PathValue: "campaign_id", NotFoundCode: codeCampaignNotFound}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: listParams, Handle: adsx.List(k, listSpec, parseFilter, st.ListCampaigns, render)},
		{Pattern: "GET " + item, Params: []string{"with_deleted"}, Handle: adsx.Get(k, entity, st.Campaign, render)},
		{Pattern: "POST " + collection, Params: createParams, Write: true, Handle: m.create},
		{Pattern: "PUT " + item, Params: updateParams, Write: true, Handle: m.update},
		{Pattern: "DELETE " + item, Write: true, Handle: adsx.Delete(k, entity, st.DeleteCampaign, render)},
	})
}
