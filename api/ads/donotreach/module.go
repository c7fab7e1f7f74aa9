// Package donotreach serves the advertising API's do-not-reach list
// endpoints (issue 10): create, list, get and delete an account's list,
// and the users batch, which is validated and recorded here and applied
// by the donotreach:apply_batch worker (docs/ads-do-not-reach.md).
package donotreach

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the donotreach endpoints need of storage (*postgres.DB).
type Store interface {
	// ListDoNotReachLists returns one page of an account's lists.
	ListDoNotReachLists(ctx context.Context, accountID string, opts storage.ListOptions) (storage.Page[storage.DoNotReachList], error)
	// DoNotReachList returns one list of the account (storage.ErrNotFound).
	DoNotReachList(ctx context.Context, accountID, id string, withDeleted bool) (storage.DoNotReachList, error)
	// CreateDoNotReachList creates the account's list (storage.ErrConflict
	// when it has one).
	CreateDoNotReachList(ctx context.Context, accountID string, description *string) (storage.DoNotReachList, error)
	// DeleteDoNotReachList soft-deletes a list (storage.ErrNotFound).
	DeleteDoNotReachList(ctx context.Context, accountID, id string) (storage.DoNotReachList, error)
	// RecordDoNotReachBatch records a users batch, or finds the one a
	// retried request recorded.
	RecordDoNotReachBatch(ctx context.Context, n storage.NewDoNotReachBatch) (storage.DoNotReachBatch, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the donotreach endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	collection = "/12/accounts/{account_id}/do_not_reach_lists"
	item       = collection + "/{do_not_reach_list_id}"
	users      = "/12/batch/accounts/{account_id}/do_not_reach_lists/{do_not_reach_list_id}/users"
)

// entity is a do-not-reach list in the generic handlers.
var entity = adsx.Entity{PathValue: "do_not_reach_list_id", NotFoundCode: adsx.CodeNotFound}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: adsx.ListParams, Handle: adsx.List(k, listSpec, accountOf, st.ListDoNotReachLists, render)},
		{Pattern: "GET " + item, Params: []string{"with_deleted"}, Handle: adsx.Get(k, entity, st.DoNotReachList, render)},
		{Pattern: "POST " + collection, Params: []string{"description"}, Write: true, Handle: m.create},
		{Pattern: "DELETE " + item, Write: true, Handle: adsx.Delete(k, entity, adsx.WithoutUser(st.DeleteDoNotReachList), render)},
		{Pattern: "POST " + users, Write: true, Limit: usersLimit, Body: &usersBody, Handle: m.users},
	})
}
