// Package permissions serves the advertising API's audience sharing
// endpoints: the /5/ tailored audience permissions (grant, list, revoke)
// and the /12/ targeted listing of a custom audience (the campaigns and
// line items of an account that target it). See
// docs/ads-audience-sharing.md.
package permissions

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the permissions endpoints need of storage (*postgres.DB).
type Store interface {
	// ListAudiencePermissions returns one page of an owned audience's live
	// grants (storage.ErrAudienceNotFound unless owned).
	ListAudiencePermissions(ctx context.Context, f storage.AudiencePermissionFilter, opts storage.ListOptions) (storage.Page[storage.AudiencePermission], error)
	// CreateAudiencePermission grants an owned audience to another account.
	CreateAudiencePermission(ctx context.Context, n storage.NewAudiencePermission) (storage.AudiencePermission, error)
	// DeleteAudiencePermission revokes a live grant of an owned audience.
	DeleteAudiencePermission(ctx context.Context, ownerAccountID, audienceID, id string) (storage.AudiencePermission, error)
	// ListTargetedCampaigns returns one page of the account's campaigns
	// targeting an audience it may use.
	ListTargetedCampaigns(ctx context.Context, f storage.TargetedFilter, opts storage.ListOptions) (storage.Page[storage.TargetedCampaign], error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the permissions endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	collection = "/5/accounts/{account_id}/tailored_audiences/{tailored_audience_id}/permissions"
	item       = collection + "/{tailored_audience_permission_id}"
	targeted   = "/12/accounts/{account_id}/custom_audiences/{custom_audience_id}/targeted"
)

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return m.deps.Kit.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: listParams, Handle: m.list},
		{Pattern: "POST " + collection, Params: createParams, Write: true, Handle: m.create},
		{Pattern: "DELETE " + item, Write: true, Handle: m.delete},
		{Pattern: "GET " + targeted, Params: targetedParams, Handle: m.targeted},
	})
}
