package storage

import (
	"errors"
	"time"
)

// ErrFundingInstrumentInactive means a campaign was given a funding
// instrument of the account that exists but cannot fund it (not ACTIVE,
// cancelled or ended).
var ErrFundingInstrumentInactive = errors.New("storage: funding instrument is not active")

// ErrLineItemBudgets means a campaign cannot switch budget_optimization to
// CAMPAIGN: a non-deleted line item of it has a daily budget or
// standard_delivery set, which only a LINE_ITEM-optimized campaign takes.
var ErrLineItemBudgets = errors.New("storage: line items of the campaign have daily budgets or standard delivery")

// Campaign is an ads campaign: a budget on one funding instrument of its
// account, holding line items. HasActiveLineItems is derived: whether a
// non-deleted ACTIVE line item belongs to it.
type Campaign struct {
	ID                  string
	AccountID           string
	FundingInstrumentID string
	Name                string
	EntityStatus        string
	BudgetOptimization  string
	DailyBudget         *int64
	TotalBudget         *int64
	StandardDelivery    *bool
	PurchaseOrderNumber *string
	DurationInDays      *int
	FrequencyCap        *int
	Currency            string
	HasActiveLineItems  bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
	Deleted             bool
}

// Campaign entity_status values and budget_optimization values.
var (
	CampaignStatuses            = []string{"ACTIVE", "DRAFT", "PAUSED"}
	CampaignBudgetOptimizations = []string{"CAMPAIGN", "LINE_ITEM"}
)

// Snapshot is the campaign as account history records it (API names).
func (c Campaign) Snapshot() map[string]any {
	return map[string]any{
		"id":                              c.ID,
		"name":                            c.Name,
		"funding_instrument_id":           c.FundingInstrumentID,
		"entity_status":                   c.EntityStatus,
		"budget_optimization":             c.BudgetOptimization,
		"daily_budget_amount_local_micro": c.DailyBudget,
		"total_budget_amount_local_micro": c.TotalBudget,
		"standard_delivery":               c.StandardDelivery,
		"purchase_order_number":           c.PurchaseOrderNumber,
		"duration_in_days":                c.DurationInDays,
		"frequency_cap":                   c.FrequencyCap,
		"currency":                        c.Currency,
		"created_at":                      snapshotTime(c.CreatedAt),
		"updated_at":                      snapshotTime(c.UpdatedAt),
		"deleted":                         c.Deleted,
	}
}

// NewCampaign is a campaign to create; zero optional fields stay unset.
type NewCampaign struct {
	AccountID           string
	FundingInstrumentID string
	Name                string
	EntityStatus        string
	BudgetOptimization  string
	DailyBudget         *int64
	TotalBudget         *int64
	StandardDelivery    *bool
	PurchaseOrderNumber *string
}

// CampaignFilter narrows a campaign list of one account.
type CampaignFilter struct {
	AccountID            string
	CampaignIDs          []string
	FundingInstrumentIDs []string
	// NamePrefix matches names case-insensitively ("" for any).
	NamePrefix string
	// WithDraft includes DRAFT campaigns.
	WithDraft bool
}

// snapshotTime renders a history snapshot timestamp as the API does.
func snapshotTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
