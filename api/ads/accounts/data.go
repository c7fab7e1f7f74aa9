package accounts

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// codeFundingNotFound is the error code of a missing funding instrument.
const codeFundingNotFound = "FUNDING_INSTRUMENT_NOT_FOUND"

// appList is how GET account_apps pages.
var appList = adsx.ListSpec{
	Listing:  storage.ListingAccountApps,
	Sortable: adsx.Sortable{"app_store_identifier", "os_type", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// fundingList is how GET funding_instruments pages.
var fundingList = adsx.ListSpec{
	Listing:  storage.ListingFundingInstruments,
	Sortable: adsx.Sortable{"name", "type", "currency", "entity_status", "start_time", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// features serves GET /12/accounts/:account_id/features: the account's
// feature keys, only those of feature_keys when it is sent.
func (m *Module) features(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	keys := p.EnumList("feature_keys", storage.AdFeatures, 0)
	if err := p.Err(); err != nil {
		return err
	}
	features, err := m.deps.Store.AdAccountFeatures(r.Context(), a.ID)
	if err != nil {
		return fmt.Errorf("account features: %w", err)
	}
	out := make([]string, 0, len(features))
	for _, f := range features {
		if keys == nil || slices.Contains(keys, f) {
			out = append(out, f)
		}
	}
	return adsx.WriteData(w, p, http.StatusOK, out)
}

// listFunding serves GET /12/accounts/:account_id/funding_instruments.
func (m *Module) listFunding(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	ids := p.IDs("funding_instrument_ids")
	opts := m.deps.Kit.List(p, fundingList)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.ListFundingInstruments(r.Context(), a.ID, ids, opts)
	if err != nil {
		return fmt.Errorf("list funding instruments: %w", err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, fundingRenderer(time.Now()))
}

// getFunding serves GET .../funding_instruments/:funding_instrument_id.
func (m *Module) getFunding(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	a, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	withDeleted := p.Flag("with_deleted", false)
	if err := p.Err(); err != nil {
		return err
	}
	id := r.PathValue("funding_instrument_id")
	f, err := m.deps.Store.FundingInstrument(r.Context(), a.ID, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && f.Deleted && !withDeleted) {
		return adsx.NotFound(codeFundingNotFound, "funding_instrument_id", id)
	}
	if err != nil {
		return fmt.Errorf("load funding instrument %s: %w", id, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, fundingRenderer(time.Now())(f))
}
