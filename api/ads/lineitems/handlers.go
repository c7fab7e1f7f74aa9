package lineitems

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Ads error codes of the line item endpoints.
const (
	codeLineItemNotFound = "LINE_ITEM_NOT_FOUND"
	codeCampaignNotFound = "CAMPAIGN_NOT_FOUND"
)

// listSpec is the line item list's paging: sort_by takes the non-null
// attributes below (name sorts unnamed line items as "").
func listSpec() adsx.ListSpec {
	return adsx.ListSpec{
		Listing:  storage.ListingLineItems,
		Sortable: adsx.Sortable{"name", "created_at", "updated_at", "entity_status", "objective", "product_type", "bid_strategy"},
		Default:  storage.Sort{Field: "created_at"},
	}
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec()} }

// parseFilter reads the list's filters.
func parseFilter(p *adsx.Params, acct storage.AdAccount) storage.LineItemFilter {
	f := storage.LineItemFilter{
		AccountID:            acct.ID,
		CampaignIDs:          p.IDs("campaign_ids"),
		LineItemIDs:          p.IDs("line_item_ids"),
		FundingInstrumentIDs: p.IDs("funding_instrument_ids"),
		WithDraft:            p.Flag("with_draft", false),
	}
	if q := p.String("q", maxQuery); q != nil {
		f.NamePrefix = *q
	}
	return f
}

func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	campaignID := p.Required("campaign_id", maxText)
	base := storage.LineItem{
		Objective:      p.RequiredEnum("objective", storage.LineItemObjectives),
		ProductType:    p.RequiredEnum("product_type", storage.LineItemProductTypes),
		Placements:     p.EnumList("placements", storage.LineItemPlacementValues, len(storage.LineItemPlacementValues)),
		EntityStatus:   "ACTIVE",
		CreativeSource: "MANUAL",
	}
	if !p.Has("placements") {
		p.FailMissing("placements", "placements is missing")
	}
	pt := parsePatch(p, true)
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.checkAdvertiser(r.Context(), pt); err != nil {
		return err
	}
	var business map[string]storage.AdvertiserBusinessCategory
	if base.Objective == "PREROLL_VIEWS" {
		if business, err = m.deps.Store.AdvertiserBusinessCategoriesOf(r.Context(), pt.Categories); err != nil {
			return fmt.Errorf("create line item in account %s: %w", acct.ID, err)
		}
	}
	li, err := m.deps.Store.CreateLineItem(r.Context(), adsx.UserID(r), acct.ID, campaignID,
		func(camp storage.LineItemCampaign) (storage.LineItem, error) {
			base.Currency = camp.Currency
			return settleAndCheck(p, pt.apply(base), camp, pt.sent, business, true)
		})
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(codeCampaignNotFound, "campaign_id", campaignID)
	}
	if err != nil {
		return fmt.Errorf("create line item in account %s: %w", acct.ID, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(li))
}

func (m *Module) update(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	pt := parsePatch(p, false)
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.checkAdvertiser(r.Context(), pt); err != nil {
		return err
	}
	id := r.PathValue("line_item_id")
	if !slices.ContainsFunc(updateParams(), p.Has) {
		// Nothing to change: no write, no history entry.
		return adsx.Get(m.deps.Kit, entity, m.deps.Store.LineItem, render)(w, r, p)
	}
	var li storage.LineItem
	for attempt := 0; ; attempt++ {
		// The advertiser business categories of the categories the line
		// item will have: those sent, else the stored ones (read here, and
		// read again if they changed before the row lock).
		// Only PREROLL_VIEWS line items (objective is set at creation)
		// have their categories checked against them.
		codes, resolve := pt.Categories, true
		if !pt.sent["categories"] {
			stored, err := m.deps.Store.LineItem(r.Context(), acct.ID, id, false)
			if err != nil {
				return entity.Err(id, err)
			}
			codes, resolve = stored.Categories, stored.Objective == "PREROLL_VIEWS"
		}
		var business map[string]storage.AdvertiserBusinessCategory
		if resolve {
			if business, err = m.deps.Store.AdvertiserBusinessCategoriesOf(r.Context(), codes); err != nil {
				return fmt.Errorf("update line item %s: %w", id, err)
			}
		}
		li, err = m.deps.Store.UpdateLineItem(r.Context(), adsx.UserID(r), acct.ID, id,
			func(cur storage.LineItem, camp storage.LineItemCampaign) (storage.LineItem, error) {
				next := pt.apply(cur)
				if resolve && !slices.Equal(next.Categories, codes) {
					return next, errCategoriesMoved
				}
				return settleAndCheck(p, next, camp, pt.sent, business, false)
			})
		if errors.Is(err, errCategoriesMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return entity.Err(id, err)
		}
		return adsx.WriteData(w, p, http.StatusOK, render(li))
	}
}

// checkAdvertiser refuses an advertiser_user_id that names no user, or a
// deleted one (one that is not a number at all is left to its rule, which
// says so).
func (m *Module) checkAdvertiser(ctx context.Context, pt patch) error {
	id := pt.AdvertiserUserID
	if id == nil || !numeric(*id) {
		return nil
	}
	n, err := strconv.ParseInt(*id, 10, 64)
	var u storage.User
	if err == nil {
		u, err = m.deps.Store.UserByID(ctx, n)
	}
	if err == nil && u.DeletedAt != nil {
		err = storage.ErrNotFound
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, strconv.ErrRange), errors.Is(err, storage.ErrNotFound):
		return adsx.Invalid("advertiser_user_id", fmt.Sprintf("advertiser_user_id %s is not the id of a user", *id), *id)
	}
	return fmt.Errorf("advertiser user %s: %w", *id, err)
}

// errCategoriesMoved means the stored categories changed between their
// resolution and the row lock; the update is tried again.
var errCategoriesMoved = errors.New("line item categories changed meanwhile")

// settleAndCheck applies the defaults to the merged line item and checks
// every rule; broken rules are recorded on p and returned as its error.
func settleAndCheck(p *adsx.Params, li storage.LineItem, camp storage.LineItemCampaign, sent map[string]bool,
	business map[string]storage.AdvertiserBusinessCategory, create bool) (storage.LineItem, error) {
	li = settle(li, sent, create)
	for _, v := range checkRules(li, camp, sent, business) {
		if v.Code == adsx.CodeMissingParameter {
			p.FailMissing(v.Param, v.Message)
		} else {
			p.Fail(v.Param, v.Message)
		}
	}
	return li, p.Err()
}

// render is the line item object of the API.
func render(li storage.LineItem) map[string]any { return li.Snapshot() }
