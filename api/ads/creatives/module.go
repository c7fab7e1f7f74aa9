// Package creatives serves the advertising API's creatives endpoints (issue
// 9): account media (list, get, soft delete) and media creatives, which
// associate an account media with a line item (list, get, create, soft
// delete).
package creatives

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the creatives endpoints need of storage (*postgres.DB).
type Store interface {
	ListAccountMedia(ctx context.Context, f storage.AccountMediaFilter, opts storage.ListOptions) (storage.Page[storage.AccountMedia], error)
	AccountMedia(ctx context.Context, accountID, id string, withDeleted bool) (storage.AccountMedia, error)
	DeleteAccountMedia(ctx context.Context, accountID, id string) (storage.AccountMedia, error)

	ListMediaCreatives(ctx context.Context, f storage.MediaCreativeFilter, opts storage.ListOptions) (storage.Page[storage.MediaCreative], error)
	MediaCreative(ctx context.Context, accountID, id string, withDeleted bool) (storage.MediaCreative, error)
	LineItemObjective(ctx context.Context, accountID, id string) (string, error)
	CreateMediaCreative(ctx context.Context, n storage.NewMediaCreative) (storage.MediaCreative, error)
	DeleteMediaCreative(ctx context.Context, accountID, id string) (storage.MediaCreative, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the creatives endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

// The entities of the generic handlers.
var (
	accountMedia  = adsx.Entity{PathValue: "account_media_id", NotFoundCode: codeAccountMediaNotFound}
	mediaCreative = adsx.Entity{PathValue: "media_creative_id", NotFoundCode: codeMediaCreativeNotFound}
)

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET /12/accounts/{account_id}/account_media",
			Params: append([]string{"account_media_ids", "creative_types"}, adsx.ListParams...),
			Handle: adsx.List(k, accountMediaList, parseAccountMediaFilter, st.ListAccountMedia, renderAccountMedia)},
		{Pattern: "GET /12/accounts/{account_id}/account_media/{account_media_id}",
			Params: []string{"with_deleted"}, Handle: adsx.Get(k, accountMedia, st.AccountMedia, renderAccountMedia)},
		{Pattern: "DELETE /12/accounts/{account_id}/account_media/{account_media_id}",
			Write: true, Handle: adsx.Delete(k, accountMedia, adsx.WithoutUser(st.DeleteAccountMedia), renderAccountMedia)},
		{Pattern: "GET /12/accounts/{account_id}/media_creatives",
			Params: append([]string{"campaign_id", "line_item_ids", "media_creative_ids"}, adsx.ListParams...),
			Handle: adsx.List(k, mediaCreativeList, parseMediaCreativeFilter, st.ListMediaCreatives, renderMediaCreative)},
		{Pattern: "GET /12/accounts/{account_id}/media_creatives/{media_creative_id}",
			Params: []string{"with_deleted"}, Handle: adsx.Get(k, mediaCreative, st.MediaCreative, renderMediaCreative)},
		{Pattern: "POST /12/accounts/{account_id}/media_creatives",
			Params: []string{"account_media_id", "line_item_id", "landing_url"}, Write: true, Handle: m.createMediaCreative},
		{Pattern: "DELETE /12/accounts/{account_id}/media_creatives/{media_creative_id}",
			Write: true, Handle: adsx.Delete(k, mediaCreative, adsx.WithoutUser(st.DeleteMediaCreative), renderMediaCreative)},
	})
}

// parseAccountMediaFilter reads the account media list's filters.
func parseAccountMediaFilter(p *adsx.Params, acct storage.AdAccount) storage.AccountMediaFilter {
	return storage.AccountMediaFilter{AccountID: acct.ID, IDs: p.IDs("account_media_ids"),
		CreativeTypes: p.EnumList("creative_types", storage.CreativeTypes, 0)}
}

// parseMediaCreativeFilter reads the media creatives list's filters.
func parseMediaCreativeFilter(p *adsx.Params, acct storage.AdAccount) storage.MediaCreativeFilter {
	f := storage.MediaCreativeFilter{AccountID: acct.ID, LineItemIDs: p.IDs("line_item_ids"), IDs: p.IDs("media_creative_ids")}
	if c := p.ID("campaign_id"); c != nil {
		f.CampaignID = *c
	}
	return f
}
