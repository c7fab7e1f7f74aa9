package campaigns

import (
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// campaignJSON is the campaign object of the platform's reference.
type campaignJSON struct {
	Name                string   `json:"name"`
	BudgetOptimization  string   `json:"budget_optimization"`
	ReasonsNotServable  []string `json:"reasons_not_servable"`
	Servable            *bool    `json:"servable"`
	PurchaseOrderNumber *string  `json:"purchase_order_number"`
	EffectiveStatus     string   `json:"effective_status"`
	DailyBudget         *int64   `json:"daily_budget_amount_local_micro"`
	FundingInstrumentID string   `json:"funding_instrument_id"`
	DurationInDays      *int     `json:"duration_in_days"`
	StandardDelivery    *bool    `json:"standard_delivery"`
	TotalBudget         *int64   `json:"total_budget_amount_local_micro"`
	ID                  string   `json:"id"`
	EntityStatus        string   `json:"entity_status"`
	FrequencyCap        *int     `json:"frequency_cap"`
	Currency            string   `json:"currency"`
	CreatedAt           string   `json:"created_at"`
	UpdatedAt           string   `json:"updated_at"`
	Deleted             bool     `json:"deleted"`
}

// render is c as the API returns it.
func render(c storage.Campaign) campaignJSON {
	reasons, servable, effective := serving(c)
	return campaignJSON{
		Name: c.Name, BudgetOptimization: c.BudgetOptimization, ReasonsNotServable: reasons, Servable: servable,
		PurchaseOrderNumber: c.PurchaseOrderNumber, EffectiveStatus: effective, DailyBudget: c.DailyBudget,
		FundingInstrumentID: c.FundingInstrumentID, DurationInDays: c.DurationInDays, StandardDelivery: c.StandardDelivery,
		TotalBudget: c.TotalBudget, ID: c.ID, EntityStatus: c.EntityStatus, FrequencyCap: c.FrequencyCap,
		Currency: c.Currency, CreatedAt: adsx.Time(c.CreatedAt), UpdatedAt: adsx.Time(c.UpdatedAt), Deleted: c.Deleted,
	}
}

// serving derives reasons_not_servable, servable and effective_status: a
// deleted campaign serves nothing and has no reasons (servable null); a
// paused one is PAUSED_BY_ADVERTISER, a draft one DRAFT, and one without
// an active line item INCOMPLETE. A servable campaign is RUNNING.
func serving(c storage.Campaign) (reasons []string, servable *bool, effective string) {
	reasons = []string{}
	if c.Deleted {
		return reasons, nil, "UNKNOWN"
	}
	switch c.EntityStatus {
	case "PAUSED":
		reasons = append(reasons, "PAUSED_BY_ADVERTISER")
	case "DRAFT":
		reasons = append(reasons, "DRAFT")
	}
	if !c.HasActiveLineItems {
		reasons = append(reasons, "INCOMPLETE")
	}
	ok := len(reasons) == 0
	if ok {
		return reasons, &ok, "RUNNING"
	}
	return reasons, &ok, "UNKNOWN"
}
