package lineitems

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// updateParams are the body parameters of PUT, the spec's line item
// parameter table; create takes them too.
func updateParams() []string {
	return []string{"advertiser_domain", "advertiser_user_id", "android_app_store_identifier", "ios_app_store_identifier",
		"audience_expansion", "bid_amount_local_micro", "bid_strategy", "categories", "duration_in_days", "frequency_cap",
		"entity_status", "start_time", "end_time", "goal", "name", "pay_by", "total_budget_amount_local_micro",
		"daily_budget_amount_local_micro"}
}

// createParams are POST's parameters: the PUT ones plus those only set at
// creation.
func createParams() []string {
	return append(updateParams(), "campaign_id", "objective", "product_type", "placements", "primary_web_event_tag",
		"standard_delivery")
}

// listParams are the list endpoint's parameters.
func listParams() []string {
	return append(slices.Clone(adsx.ListParams), "campaign_ids", "line_item_ids", "funding_instrument_ids", "q", "with_draft")
}

// Lengths of the free-text parameters.
const (
	maxName     = 255
	maxText     = 255
	maxQuery    = 255
	maxCategory = 100
)

// patch is the parsed body of a create or update: nil fields were not sent.
type patch struct {
	Name               *string
	Goal               *string
	BidStrategy        *string
	BidAmount          *int64
	PayBy              *string
	StartTime, EndTime *time.Time
	EntityStatus       *string
	TotalBudget        *int64
	DailyBudget        *int64
	FrequencyCap       *int
	DurationInDays     *int
	AdvertiserUserID   *string
	AdvertiserDomain   *string
	Categories         []string
	Android, IOS       *string
	AudienceExpansion  *string
	PrimaryWebEventTag *string
	StandardDelivery   *bool
	sent               map[string]bool
}

// parsePatch reads the parameters of the PUT table (create also takes
// DRAFT and SITE_VISITS, and its own primary_web_event_tag and
// standard_delivery). Errors are recorded on p.
func parsePatch(p *adsx.Params, create bool) patch {
	statuses, goals := []string{"ACTIVE", "PAUSED"}, storage.LineItemGoals
	if create {
		statuses, goals = []string{"ACTIVE", "DRAFT", "PAUSED"}, storage.LineItemCreateGoals
	}
	pt := patch{
		Name:              p.String("name", maxName),
		Goal:              p.Enum("goal", goals),
		BidStrategy:       p.Enum("bid_strategy", storage.LineItemBidStrategies),
		BidAmount:         p.Int64("bid_amount_local_micro", 1, math.MaxInt64),
		PayBy:             p.Enum("pay_by", storage.LineItemPayBy),
		StartTime:         p.Time("start_time"),
		EndTime:           p.Time("end_time"),
		EntityStatus:      p.Enum("entity_status", statuses),
		TotalBudget:       p.Int64("total_budget_amount_local_micro", 1, math.MaxInt64),
		DailyBudget:       p.Int64("daily_budget_amount_local_micro", 1, math.MaxInt64),
		FrequencyCap:      p.Int("frequency_cap", 1, math.MaxInt32),
		DurationInDays:    durationInDays(p),
		AdvertiserUserID:  p.String("advertiser_user_id", maxText),
		AdvertiserDomain:  p.String("advertiser_domain", maxText),
		Categories:        p.List("categories", maxCategory),
		Android:           p.String("android_app_store_identifier", maxText),
		IOS:               p.String("ios_app_store_identifier", maxText),
		AudienceExpansion: p.Enum("audience_expansion", storage.LineItemAudienceExpansions),
		sent:              map[string]bool{},
	}
	if create {
		pt.PrimaryWebEventTag = p.String("primary_web_event_tag", maxText)
		pt.StandardDelivery = p.Bool("standard_delivery")
	}
	for _, name := range createParams() {
		pt.sent[name] = p.Has(name)
	}
	return pt
}

// apply returns li with the patch's values.
func (pt patch) apply(li storage.LineItem) storage.LineItem {
	set(&li.Name, pt.Name)
	set(&li.Goal, pt.Goal)
	if pt.BidStrategy != nil {
		li.BidStrategy = *pt.BidStrategy
	}
	set(&li.BidAmountLocalMicro, pt.BidAmount)
	set(&li.PayBy, pt.PayBy)
	set(&li.StartTime, pt.StartTime)
	set(&li.EndTime, pt.EndTime)
	if pt.EntityStatus != nil {
		li.EntityStatus = *pt.EntityStatus
	}
	set(&li.TotalBudgetAmountLocalMicro, pt.TotalBudget)
	set(&li.DailyBudgetAmountLocalMicro, pt.DailyBudget)
	set(&li.FrequencyCap, pt.FrequencyCap)
	set(&li.DurationInDays, pt.DurationInDays)
	set(&li.AdvertiserUserID, pt.AdvertiserUserID)
	set(&li.AdvertiserDomain, pt.AdvertiserDomain)
	if pt.Categories != nil {
		li.Categories = pt.Categories
	}
	set(&li.AndroidAppStoreIdentifier, pt.Android)
	set(&li.IOSAppStoreIdentifier, pt.IOS)
	set(&li.AudienceExpansion, pt.AudienceExpansion)
	set(&li.PrimaryWebEventTag, pt.PrimaryWebEventTag)
	if pt.StandardDelivery != nil {
		li.StandardDelivery = pt.StandardDelivery
	}
	return li
}

// set replaces *dst with v when v was sent.
func set[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// durations are the values duration_in_days takes.
var durations = []string{"1", "7", "30"}

// durationInDays reads duration_in_days: 1, 7 or 30, any other value
// (a number out of that enum, however large, or not a number) refused as
// out of it.
func durationInDays(p *adsx.Params) *int {
	v := p.Enum("duration_in_days", durations)
	if v == nil {
		return nil
	}
	n, _ := strconv.Atoi(*v)
	p.Echo()["duration_in_days"] = n
	return &n
}
