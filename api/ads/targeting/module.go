// Package targeting serves the advertising API's targeting criteria
// endpoints (issue 9).
package targeting

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the targeting endpoints need of storage (*postgres.DB).
type Store interface {
	// ListTargetingCriteria returns one page of an account's criteria.
	ListTargetingCriteria(ctx context.Context, f storage.TargetingCriterionFilter, opts storage.ListOptions) (storage.Page[storage.TargetingCriterion], error)
	// TargetingCriterion returns one criterion of the account (storage.ErrNotFound).
	TargetingCriterion(ctx context.Context, accountID, id string, withDeleted bool) (storage.TargetingCriterion, error)
	// CreateTargetingCriterion adds a criterion to a line item, with its history entry.
	CreateTargetingCriterion(ctx context.Context, userID int64, n storage.NewTargetingCriterion) (storage.TargetingCriterion, error)
	// DeleteTargetingCriterion soft-deletes a criterion, with its history entry.
	DeleteTargetingCriterion(ctx context.Context, userID int64, accountID, id string) (storage.TargetingCriterion, error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the targeting endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	collection = "/12/accounts/{account_id}/targeting_criteria"
	item       = collection + "/{targeting_criterion_id}"
)

// entity is a targeting criterion in the generic handlers.
var entity = adsx.Entity{PathValue: "targeting_criterion_id", NotFoundCode: codeTargetingCriterionNotFound}

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET " + collection, Params: listParams, Handle: adsx.List(k, listSpec, parseFilter, st.ListTargetingCriteria, render)},
		{Pattern: "GET " + item, Params: []string{"with_deleted"}, Handle: adsx.Get(k, entity, st.TargetingCriterion, render)},
		{Pattern: "POST " + collection, Params: createParams, Write: true, Handle: m.create},
		{Pattern: "DELETE " + item, Write: true, Handle: adsx.Delete(k, entity, st.DeleteTargetingCriterion, render)},
	})
}
