// Package accounts serves the advertising API's accounts endpoints (issue 9):
// accounts (list, get, update, and sandbox create and delete), their apps,
// features, funding instruments and change history.
package accounts

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the accounts endpoints need of storage (*postgres.DB).
type Store interface {
	ListAdAccounts(ctx context.Context, f storage.AdAccountFilter, opts storage.ListOptions) (storage.Page[storage.AdAccount], error)
	UpdateAdAccount(ctx context.Context, accountID string, u storage.AdAccountUpdate) (storage.AdAccount, error)
	DeleteAdAccount(ctx context.Context, accountID string) (storage.AdAccount, error)
	CreateAdAccountWithFunding(ctx context.Context, userID int64, name string, sandbox bool, fi storage.NewFundingInstrument) (storage.AdAccount, storage.FundingInstrument, error)
	ListAccountApps(ctx context.Context, accountID string, opts storage.ListOptions) (storage.Page[storage.AccountApp], error)
	AdAccountFeatures(ctx context.Context, accountID string) ([]string, error)
	FundingInstrument(ctx context.Context, accountID, id string) (storage.FundingInstrument, error)
	ListFundingInstruments(ctx context.Context, accountID string, ids []string, opts storage.ListOptions) (storage.Page[storage.FundingInstrument], error)
	// CreateFundingInstrument adds an active funding instrument (sandbox).
	CreateFundingInstrument(ctx context.Context, accountID string, fi storage.NewFundingInstrument) (storage.FundingInstrument, error)
	// DeleteFundingInstrument soft-deletes a live one (sandbox).
	DeleteFundingInstrument(ctx context.Context, accountID, id string) (storage.FundingInstrument, error)
	AccountHistory(ctx context.Context, q storage.HistoryQuery, opts storage.ListOptions) (storage.Page[storage.HistoryEntry], error)
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the accounts endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

// listParams are the shared list parameters every list here takes.
var listParams = adsx.ListParams

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k, st := m.deps.Kit, m.deps.Store
	listApps := adsx.List(k, appList, func(_ *adsx.Params, a storage.AdAccount) string { return a.ID }, st.ListAccountApps, renderApp)
	routes := []adsx.Route{
		{Pattern: "GET /12/accounts", Params: append([]string{"account_ids", "q"}, listParams...), Handle: m.listAccounts},
		{Pattern: "POST /12/accounts", Write: true, Handle: m.createAccount},
		{Pattern: "GET /12/accounts/{account_id}", Params: []string{"with_deleted"}, Handle: m.getAccount},
		{Pattern: "PUT /12/accounts/{account_id}", Params: []string{"name", "industry_type"}, Write: true, Handle: m.updateAccount},
		{Pattern: "DELETE /12/accounts/{account_id}", Write: true, Handle: m.deleteAccount},
		{Pattern: "GET /12/accounts/{account_id}/account_apps", Params: listParams, Handle: listApps},
		{Pattern: "GET /12/accounts/{account_id}/features", Params: []string{"feature_keys"}, Handle: m.features},
		{Pattern: "GET /12/accounts/{account_id}/funding_instruments", Params: append([]string{"funding_instrument_ids"}, listParams...), Handle: m.listFunding},
		{Pattern: "GET /12/accounts/{account_id}/funding_instruments/{funding_instrument_id}", Params: []string{"with_deleted"}, Handle: m.getFunding},
		{Pattern: "POST /12/accounts/{account_id}/funding_instruments", Params: fundingParams, Write: true, Handle: m.createFunding},
		{Pattern: "DELETE /12/accounts/{account_id}/funding_instruments/{funding_instrument_id}", Write: true, Handle: m.deleteFunding},
		{Pattern: "GET /12/accounts/{account_id}/account_history", Params: historyParams, Handle: m.history},
	}
	return k.Endpoints(routes)
}
