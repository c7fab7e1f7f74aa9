package campaigns

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Ads error codes of this module (the platform's error table).
const (
	codeCampaignNotFound          = "CAMPAIGN_NOT_FOUND"
	codeFundingInstrumentNotFound = "FUNDING_INSTRUMENT_NOT_FOUND"
	codeInvalidFundingInstrument  = "INVALID_FUNDING_INSTRUMENT"
)

// Parameter bounds of the reference.
const (
	maxName          = 255
	maxPurchaseOrder = 50
	maxIDLength      = 64
)

var (
	listParams   = append([]string{"campaign_ids", "funding_instrument_ids", "q", "with_draft"}, adsx.ListParams...)
	createParams = []string{"funding_instrument_id", "name", "budget_optimization", "daily_budget_amount_local_micro",
		"total_budget_amount_local_micro", "entity_status", "purchase_order_number", "standard_delivery"}
	updateParams = []string{"name", "budget_optimization", "daily_budget_amount_local_micro",
		"total_budget_amount_local_micro", "entity_status", "purchase_order_number", "standard_delivery"}
	// updateStatuses are the entity_status values a PUT may set (a
	// campaign does not go back to DRAFT).
	updateStatuses = []string{"ACTIVE", "PAUSED"}
)

// listSpec is how campaign lists sort: by the non-null attributes.
var listSpec = adsx.ListSpec{
	Listing:  storage.ListingCampaigns,
	Sortable: adsx.Sortable{"name", "entity_status", "budget_optimization", "funding_instrument_id", "currency", "created_at", "updated_at"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{listSpec} }

func (m *Module) create(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	n := storage.NewCampaign{
		AccountID:           acct.ID,
		FundingInstrumentID: p.Required("funding_instrument_id", maxIDLength),
		Name:                p.Required("name", maxName),
		BudgetOptimization:  enumOr(p.Enum("budget_optimization", storage.CampaignBudgetOptimizations), "LINE_ITEM"),
		EntityStatus:        enumOr(p.Enum("entity_status", storage.CampaignStatuses), "ACTIVE"),
		DailyBudget:         p.Int64("daily_budget_amount_local_micro", 1, math.MaxInt64),
		TotalBudget:         p.Int64("total_budget_amount_local_micro", 1, math.MaxInt64),
		PurchaseOrderNumber: p.String("purchase_order_number", maxPurchaseOrder),
		StandardDelivery:    p.Bool("standard_delivery"),
	}
	if !budgetsFit(n.DailyBudget, n.TotalBudget) {
		p.Fail("daily_budget_amount_local_micro", "daily_budget_amount_local_micro must be at most total_budget_amount_local_micro")
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.checkCurrency(r.Context(), n); err != nil {
		return err
	}
	c, err := m.deps.Store.CreateCampaign(r.Context(), adsx.UserID(r), n)
	if err != nil {
		return fundingErr(err, n.FundingInstrumentID)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(c))
}

// checkCurrency refuses a campaign on a funding instrument whose currency
// is not an ISO 4217 currency (no amount of it means anything), and
// budgets that are not a whole number of the currency's minor unit.
func (m *Module) checkCurrency(ctx context.Context, n storage.NewCampaign) error {
	fi, err := m.deps.Store.FundingInstrument(ctx, n.AccountID, n.FundingInstrumentID)
	if err != nil {
		return fundingErr(err, n.FundingInstrumentID)
	}
	if !validation.IsCurrency(fi.Currency) {
		e := adsx.Invalid("funding_instrument_id", fmt.Sprintf("The funding instrument %s is in %q, which is not an ISO 4217 currency",
			fi.ID, fi.Currency), fi.ID)
		e.AdsCode = codeInvalidFundingInstrument
		return e
	}
	return budgetUnits(fi.Currency, map[string]*int64{"daily_budget_amount_local_micro": n.DailyBudget,
		"total_budget_amount_local_micro": n.TotalBudget})
}

// budgetUnits refuses an amount sent (by parameter name) that is not a
// whole number of the minor unit of currency.
func budgetUnits(currency string, sent map[string]*int64) error {
	for _, name := range []string{"daily_budget_amount_local_micro", "total_budget_amount_local_micro"} {
		if v := sent[name]; v != nil {
			if msg := validation.MicroAmountError(*v, currency); msg != "" {
				return adsx.Invalid(name, fmt.Sprintf("%s (%d): %s", name, *v, msg), strconv.FormatInt(*v, 10))
			}
		}
	}
	return nil
}

// update is the PUT: the attributes sent, checked against the stored ones
// (daily budget at most the total) under the row lock.
func (m *Module) update(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	apply := parseUpdate(p)
	if err := p.Err(); err != nil {
		return err
	}
	id := r.PathValue("campaign_id")
	if !sentAny(p, updateParams) {
		// Nothing to change: no write, no history entry.
		return adsx.Get(m.deps.Kit, entity, m.deps.Store.Campaign, render)(w, r, p)
	}
	c, err := m.deps.Store.UpdateCampaign(r.Context(), adsx.UserID(r), acct.ID, id, apply)
	if err != nil {
		return campaignErr(err, id)
	}
	return adsx.WriteData(w, p, http.StatusOK, render(c))
}

// parseUpdate reads the PUT parameters (errors recorded on p) and returns
// the change to apply to the stored campaign.
func parseUpdate(p *adsx.Params) func(*storage.Campaign) error {
	name := p.String("name", maxName)
	opt := p.Enum("budget_optimization", storage.CampaignBudgetOptimizations)
	status := p.Enum("entity_status", updateStatuses)
	daily := p.Int64("daily_budget_amount_local_micro", 1, math.MaxInt64)
	total := p.Int64("total_budget_amount_local_micro", 1, math.MaxInt64)
	po := p.String("purchase_order_number", maxPurchaseOrder)
	standard := p.Bool("standard_delivery")
	if !budgetsFit(daily, total) {
		p.Fail("daily_budget_amount_local_micro", "daily_budget_amount_local_micro must be at most total_budget_amount_local_micro")
	}
	return func(c *storage.Campaign) error {
		if err := budgetUnits(c.Currency, map[string]*int64{"daily_budget_amount_local_micro": daily,
			"total_budget_amount_local_micro": total}); err != nil {
			return err
		}
		setIf(&c.Name, name)
		setIf(&c.BudgetOptimization, opt)
		setIf(&c.EntityStatus, status)
		c.DailyBudget = keepOr(c.DailyBudget, daily)
		c.TotalBudget = keepOr(c.TotalBudget, total)
		c.PurchaseOrderNumber = keepOr(c.PurchaseOrderNumber, po)
		c.StandardDelivery = keepOr(c.StandardDelivery, standard)
		if budgetsFit(c.DailyBudget, c.TotalBudget) {
			return nil
		}
		param, sent := "daily_budget_amount_local_micro", daily
		if daily == nil {
			param, sent = "total_budget_amount_local_micro", total
		}
		return adsx.Invalid(param, fmt.Sprintf("daily_budget_amount_local_micro (%d) must be at most total_budget_amount_local_micro (%d)",
			*c.DailyBudget, *c.TotalBudget), strconv.FormatInt(*sent, 10))
	}
}

// budgetsFit reports whether the daily budget is at most the total when
// both are set.
func budgetsFit(daily, total *int64) bool {
	return daily == nil || total == nil || *daily <= *total
}

// campaignErr maps a store error about campaign id to the API's answer.
func campaignErr(err error, id string) error {
	var apiErr *apierr.Error
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(codeCampaignNotFound, "campaign_id", id)
	case errors.Is(err, storage.ErrLineItemBudgets):
		return adsx.Invalid("budget_optimization", "budget_optimization cannot be CAMPAIGN while a line item of the campaign "+
			"has daily_budget_amount_local_micro or standard_delivery set", "CAMPAIGN")
	}
	return fmt.Errorf("campaign %s: %w", id, err)
}

// fundingErr maps a create error about funding instrument id.
func fundingErr(err error, id string) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return adsx.NotFound(codeFundingInstrumentNotFound, "funding_instrument_id", id)
	case errors.Is(err, storage.ErrFundingInstrumentInactive):
		e := adsx.Invalid("funding_instrument_id", fmt.Sprintf("The funding instrument %s is not active", id), id)
		e.AdsCode = codeInvalidFundingInstrument
		return e
	}
	return fmt.Errorf("create campaign: %w", err)
}

// sentAny reports whether any of names was sent.
func sentAny(p *adsx.Params, names []string) bool {
	return slices.ContainsFunc(names, p.Has)
}

func enumOr(v *string, def string) string {
	if v == nil {
		return def
	}
	return *v
}

func setIf(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// keepOr is v when sent, else the stored value.
func keepOr[T any](stored, v *T) *T {
	if v != nil {
		return v
	}
	return stored
}

// parseFilter reads the list's filters.
func parseFilter(p *adsx.Params, acct storage.AdAccount) storage.CampaignFilter {
	f := storage.CampaignFilter{AccountID: acct.ID, CampaignIDs: p.IDs("campaign_ids"),
		FundingInstrumentIDs: p.IDs("funding_instrument_ids"), WithDraft: p.Flag("with_draft", false)}
	if q := p.String("q", maxName); q != nil {
		f.NamePrefix = *q
	}
	return f
}
