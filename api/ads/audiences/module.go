// Package audiences serves the advertising API's custom audiences
// endpoints (issue 10): list, get, create, update and soft delete of
// custom audiences (an account's own and those shared with it), and the
// users batches that add and remove their members (recorded here, applied
// by workers/audiences). See docs/ads-audiences.md.
package audiences

import (
	"context"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the audiences endpoints need of storage (*postgres.DB).
type Store interface {
	// ListCustomAudiences pages the audiences the account sees.
	ListCustomAudiences(ctx context.Context, f storage.CustomAudienceFilter, opts storage.ListOptions) (storage.Page[storage.CustomAudienceView], error)
	// CustomAudience returns an audience the account sees, else
	// storage.ErrNotFound.
	CustomAudience(ctx context.Context, accountID, id string, withDeleted bool) (storage.CustomAudienceView, error)
	// CreateCustomAudience creates an audience the account owns (a name
	// taken is storage.ErrConflict).
	CreateCustomAudience(ctx context.Context, n storage.NewCustomAudience) (storage.CustomAudienceView, error)
	// UpdateCustomAudience changes an audience the account owns.
	UpdateCustomAudience(ctx context.Context, accountID, id string, c storage.CustomAudienceChange) (storage.CustomAudienceView, error)
	// DeleteCustomAudience soft-deletes an audience the account owns.
	DeleteCustomAudience(ctx context.Context, accountID, id string) (storage.CustomAudienceView, error)
	// RecordAudienceBatch records a users batch once per idempotency key.
	RecordAudienceBatch(ctx context.Context, n storage.NewAudienceBatch) (storage.AudienceBatch, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the audiences endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	collection = "/12/accounts/{account_id}/custom_audiences"
	item       = collection + "/{custom_audience_id}"
	users      = item + "/users"
)

// usersLimit is the users batch rate: 1500 per minute per account.
var usersLimit = httpx.Limit{Name: "ads_custom_audience_users", Requests: 1500, Window: time.Minute,
	Scope: httpx.PerResource, Resource: "account_id"}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: listParams, Handle: adsx.List(k, listSpec, parseFilter, st.ListCustomAudiences, render)},
		{Pattern: "GET " + item, Params: []string{"with_deleted"}, Handle: adsx.Get(k, entity, st.CustomAudience, render)},
		{Pattern: "POST " + collection, Params: []string{"name", "description"}, Write: true, Handle: m.create},
		{Pattern: "PUT " + item, Params: []string{"name", "description"}, Write: true, Handle: m.update},
		{Pattern: "DELETE " + item, Write: true, Handle: m.delete},
		{Pattern: "POST " + users, Write: true, Limit: usersLimit,
			Body: &httpx.Body{MaxBytes: maxBatchBytes, Types: []string{httpx.ContentJSON}}, Handle: m.users},
	})
}

// writeView answers one audience.
func writeView(w http.ResponseWriter, p *adsx.Params, v storage.CustomAudienceView) error {
	return adsx.WriteData(w, p, http.StatusOK, render(v))
}
