package storage

import "time"

// LineItem is an ads line item (ad group): the bidding, budget, schedule
// and placements of part of a campaign. Nil pointers and empty slices are
// unset values (rendered null and [] by the API).
type LineItem struct {
	ID                          string
	AccountID                   string
	CampaignID                  string
	Name                        *string
	Currency                    string
	Objective                   string
	ProductType                 string
	Placements                  []string
	Goal                        *string
	BidStrategy                 string
	BidAmountLocalMicro         *int64
	PayBy                       *string
	StartTime                   *time.Time
	EndTime                     *time.Time
	EntityStatus                string
	TotalBudgetAmountLocalMicro *int64
	DailyBudgetAmountLocalMicro *int64
	FrequencyCap                *int
	DurationInDays              *int
	AdvertiserUserID            *string
	AdvertiserDomain            *string
	Categories                  []string
	AndroidAppStoreIdentifier   *string
	IOSAppStoreIdentifier       *string
	AudienceExpansion           *string
	TargetCPALocalMicro         *int64
	PrimaryWebEventTag          *string
	StandardDelivery            *bool
	AutomaticTweetPromotion     *bool
	CreativeSource              string
	CreatedAt                   time.Time
	UpdatedAt                   time.Time
	Deleted                     bool
}

// LineItemCampaign is what line item rules need of the parent campaign.
type LineItemCampaign struct {
	ID                 string
	AccountID          string
	BudgetOptimization string
	Currency           string
	Deleted            bool
}

// LineItemFilter narrows a line item list of one account.
type LineItemFilter struct {
	AccountID            string
	CampaignIDs          []string
	LineItemIDs          []string
	FundingInstrumentIDs []string
	// NamePrefix matches names case-insensitively ("" for any).
	NamePrefix string
	// WithDraft includes DRAFT line items.
	WithDraft bool
}

// Line item enums.
var (
	LineItemObjectives         = []string{"APP_ENGAGEMENTS", "APP_INSTALLS", "REACH", "FOLLOWERS", "ENGAGEMENTS", "VIDEO_VIEWS", "PREROLL_VIEWS", "WEBSITE_CLICKS"}
	LineItemProductTypes       = []string{"MEDIA", "PROMOTED_ACCOUNT", "PROMOTED_TWEETS"}
	LineItemBidStrategies      = []string{"AUTO", "MAX", "TARGET"}
	LineItemPayBy              = []string{"APP_CLICK", "IMPRESSION", "LINK_CLICK"}
	LineItemAudienceExpansions = []string{"BROAD", "DEFINED", "EXPANDED"}
	// LineItemGoals are the goals of the line item PUT table.
	LineItemGoals = []string{"APP_CLICKS", "APP_INSTALLS", "APP_PURCHASES", "ENGAGEMENT", "FOLLOWERS", "LINK_CLICKS",
		"MAX_REACH", "PREROLL", "PREROLL_STARTS", "REACH_WITH_ENGAGEMENT", "VIDEO_VIEW", "VIEW_3S_100PCT",
		"VIEW_6S", "VIEW_15S", "WEBSITE_CONVERSIONS"}
	// LineItemCreateGoals adds SITE_VISITS, which the platform's create
	// endpoint also takes (for WEBSITE_CLICKS).
	LineItemCreateGoals = append(append([]string{}, LineItemGoals...), "SITE_VISITS")
	// LineItemPlacementValues are every placement.
	LineItemPlacementValues = []string{"ALL_ON_SERVICE", "PUBLISHER_NETWORK", "TAP_BANNER", "TAP_FULL", "TAP_FULL_LANDSCAPE",
		"TAP_NATIVE", "TAP_MRECT", "SERVICE_PROFILE", "SERVICE_REPLIES", "SERVICE_SEARCH", "SERVICE_TIMELINE"}
)

// Snapshot is the line item as the API renders it and account history
// records it.
func (li LineItem) Snapshot() map[string]any {
	return map[string]any{
		"id":                              li.ID,
		"name":                            li.Name,
		"campaign_id":                     li.CampaignID,
		"currency":                        li.Currency,
		"objective":                       li.Objective,
		"product_type":                    li.ProductType,
		"placements":                      lineItemList(li.Placements),
		"goal":                            li.Goal,
		"bid_strategy":                    li.BidStrategy,
		"bid_amount_local_micro":          li.BidAmountLocalMicro,
		"pay_by":                          li.PayBy,
		"start_time":                      lineItemTime(li.StartTime),
		"end_time":                        lineItemTime(li.EndTime),
		"entity_status":                   li.EntityStatus,
		"total_budget_amount_local_micro": li.TotalBudgetAmountLocalMicro,
		"daily_budget_amount_local_micro": li.DailyBudgetAmountLocalMicro,
		"frequency_cap":                   li.FrequencyCap,
		"duration_in_days":                li.DurationInDays,
		"advertiser_user_id":              li.AdvertiserUserID,
		"advertiser_domain":               li.AdvertiserDomain,
		"categories":                      lineItemList(li.Categories),
		"android_app_store_identifier":    li.AndroidAppStoreIdentifier,
		"ios_app_store_identifier":        li.IOSAppStoreIdentifier,
		"audience_expansion":              li.AudienceExpansion,
		"target_cpa_local_micro":          li.TargetCPALocalMicro,
		"primary_web_event_tag":           li.PrimaryWebEventTag,
		"standard_delivery":               li.StandardDelivery,
		"automatic_tweet_promotion":       li.AutomaticTweetPromotion,
		"creative_source":                 li.CreativeSource,
		"created_at":                      lineItemTime(&li.CreatedAt),
		"updated_at":                      lineItemTime(&li.UpdatedAt),
		"deleted":                         li.Deleted,
	}
}

// lineItemTime renders an optional timestamp as the ads API does (ISO
// 8601 UTC, seconds); nil stays null.
func lineItemTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format("2006-01-02T15:04:05Z")
	return &s
}

// lineItemList renders an unset list as [] rather than null.
func lineItemList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
