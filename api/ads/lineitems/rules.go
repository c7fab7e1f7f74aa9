package lineitems

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// violation is one broken line item rule: the parameter it names and its
// ads error code (INVALID_PARAMETER or MISSING_PARAMETER).
type violation struct {
	Param   string
	Code    string
	Message string
}

func invalid(param, format string, args ...any) *violation {
	return &violation{Param: param, Code: adsx.CodeInvalidParameter, Message: fmt.Sprintf(format, args...)}
}

func missing(param, format string, args ...any) *violation {
	return &violation{Param: param, Code: adsx.CodeMissingParameter, Message: fmt.Sprintf(format, args...)}
}

// ruleInput is what every rule sees: the line item as it would be stored
// (the stored one merged with the request's values, defaults applied), its
// campaign, which parameters the request sent, and the advertiser business
// category of each of the line item's IAB categories that has one
// (resolved by the handler; a code missing from it belongs to none).
type ruleInput struct {
	li       storage.LineItem
	camp     storage.LineItemCampaign
	sent     map[string]bool
	business map[string]storage.AdvertiserBusinessCategory
}

// rule checks one rule of the line item parameter table.
type rule func(in ruleInput) *violation

// rules are the line item rules, in the order their errors are reported.
func rules() []rule {
	return []rule{
		rulePlacementsForProduct, ruleGoalForObjective,
		ruleMaxBidObjective, ruleTargetBidObjective, ruleBidAmountRequired,
		rulePayByObjective, rulePayByForGoal, rulePayByTarget,
		ruleFrequencyCapObjective, ruleDurationInDays,
		ruleDailyBudgetCampaign, ruleDailyWithinTotal, ruleStandardDeliveryCampaign, ruleAmountsInCurrency,
		ruleAppStoreRequired, ruleIOSNumeric, ruleAdvertiserUserID,
		ruleDomainFormat, rulePublisherDomain, ruleCategoriesFormat, rulePublisherCategories, rulePrerollCategories,
		ruleWebEventTag, ruleFlight,
	}
}

// checkRules returns every rule li breaks (nil when none), li being the
// line item as it would be stored under camp, sent the parameters the
// request carried, business the advertiser business category of each of
// li's categories that belongs to one.
func checkRules(li storage.LineItem, camp storage.LineItemCampaign, sent map[string]bool,
	business map[string]storage.AdvertiserBusinessCategory) []violation {
	in := ruleInput{li: li, camp: camp, sent: sent, business: business}
	var out []violation
	for _, r := range rules() {
		if v := r(in); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// rulePlacementsForProduct: the placements must be one of the product
// type's combinations that GET /12/line_items/placements lists (so a
// profile-only line item, for one, is refused).
func rulePlacementsForProduct(in ruleInput) *violation {
	if !storage.PlacementsAllowed(in.li.ProductType, in.li.Placements) {
		return invalid("placements", "Placements %s are not a valid combination for product_type %s (see GET line_items/placements)",
			strings.Join(in.li.Placements, ","), in.li.ProductType)
	}
	return nil
}

func ruleGoalForObjective(in ruleInput) *violation {
	if in.li.Goal == nil {
		return nil
	}
	if only, ok := goalObjectives[*in.li.Goal]; ok && !slices.Contains(only, in.li.Objective) {
		return invalid("goal", "goal %s is only available for objectives %s", *in.li.Goal, strings.Join(only, ", "))
	}
	return nil
}

func ruleMaxBidObjective(in ruleInput) *violation {
	if in.li.BidStrategy == "MAX" && slices.Contains(noMaxBid, in.li.Objective) {
		return invalid("bid_strategy", "bid_strategy MAX is not available for objective %s", in.li.Objective)
	}
	return nil
}

func ruleTargetBidObjective(in ruleInput) *violation {
	if in.li.BidStrategy == "TARGET" && !slices.Contains(targetBid, in.li.Objective) {
		return invalid("bid_strategy", "bid_strategy TARGET is only available for objectives %s", strings.Join(targetBid, ", "))
	}
	return nil
}

func ruleBidAmountRequired(in ruleInput) *violation {
	if (in.li.BidStrategy == "MAX" || in.li.BidStrategy == "TARGET") && in.li.BidAmountLocalMicro == nil {
		return missing("bid_amount_local_micro", "bid_amount_local_micro is required with bid_strategy %s", in.li.BidStrategy)
	}
	return nil
}

func rulePayByObjective(in ruleInput) *violation {
	if in.sent["pay_by"] && in.li.Objective != "APP_INSTALLS" {
		return invalid("pay_by", "pay_by can only be set for objective APP_INSTALLS")
	}
	return nil
}

func rulePayByForGoal(in ruleInput) *violation {
	if in.li.PayBy != nil && *in.li.PayBy == "LINK_CLICK" && (in.li.Goal == nil || *in.li.Goal != "LINK_CLICKS") {
		return invalid("pay_by", "pay_by LINK_CLICK is only available for goal LINK_CLICKS")
	}
	return nil
}

func rulePayByTarget(in ruleInput) *violation {
	if in.li.PayBy != nil && *in.li.PayBy == "IMPRESSION" && in.li.BidStrategy == "TARGET" {
		return invalid("pay_by", "pay_by IMPRESSION is not available with bid_strategy TARGET")
	}
	return nil
}

func ruleFrequencyCapObjective(in ruleInput) *violation {
	if in.li.FrequencyCap != nil && !slices.Contains(frequencyCapObjectives, in.li.Objective) {
		return invalid("frequency_cap", "frequency_cap is only available for objectives %s", strings.Join(frequencyCapObjectives, ", "))
	}
	return nil
}

func ruleDurationInDays(in ruleInput) *violation {
	if d := in.li.DurationInDays; d != nil && *d != 1 && *d != 7 && *d != 30 {
		return invalid("duration_in_days", "duration_in_days must be 1, 7 or 30, got %d", *d)
	}
	return nil
}

// ruleAmountsInCurrency: an amount sent must be a whole number of the
// minor unit of the line item's currency (1.5 JPY is no amount: JPY has
// none).
func ruleAmountsInCurrency(in ruleInput) *violation {
	for _, a := range []struct {
		param  string
		amount *int64
	}{
		{"bid_amount_local_micro", in.li.BidAmountLocalMicro},
		{"total_budget_amount_local_micro", in.li.TotalBudgetAmountLocalMicro},
		{"daily_budget_amount_local_micro", in.li.DailyBudgetAmountLocalMicro},
	} {
		if a.amount == nil || !in.sent[a.param] {
			continue
		}
		if msg := validation.MicroAmountError(*a.amount, in.li.Currency); msg != "" {
			return invalid(a.param, "%s (%d): %s", a.param, *a.amount, msg)
		}
	}
	return nil
}

func ruleDailyBudgetCampaign(in ruleInput) *violation {
	if in.li.DailyBudgetAmountLocalMicro != nil && in.camp.BudgetOptimization != "LINE_ITEM" {
		return invalid("daily_budget_amount_local_micro",
			"daily_budget_amount_local_micro is only available when the campaign's budget_optimization is LINE_ITEM")
	}
	return nil
}

func ruleDailyWithinTotal(in ruleInput) *violation {
	d, t := in.li.DailyBudgetAmountLocalMicro, in.li.TotalBudgetAmountLocalMicro
	if d != nil && t != nil && *d > *t {
		// Name the parameter the request changed: the total when it came
		// alone against the stored daily budget.
		param := "daily_budget_amount_local_micro"
		if in.sent["total_budget_amount_local_micro"] && !in.sent["daily_budget_amount_local_micro"] {
			param = "total_budget_amount_local_micro"
		}
		return invalid(param,
			"daily_budget_amount_local_micro (%d) must not exceed total_budget_amount_local_micro (%d)", *d, *t)
	}
	return nil
}

func ruleStandardDeliveryCampaign(in ruleInput) *violation {
	if in.sent["standard_delivery"] && in.camp.BudgetOptimization != "LINE_ITEM" {
		return invalid("standard_delivery", "standard_delivery is only available when the campaign's budget_optimization is LINE_ITEM")
	}
	return nil
}

func ruleAppStoreRequired(in ruleInput) *violation {
	app := in.li.Objective == "APP_INSTALLS" || in.li.Objective == "APP_ENGAGEMENTS"
	if app && in.li.AndroidAppStoreIdentifier == nil && in.li.IOSAppStoreIdentifier == nil {
		return missing("android_app_store_identifier",
			"objective %s requires android_app_store_identifier or ios_app_store_identifier", in.li.Objective)
	}
	return nil
}

func ruleIOSNumeric(in ruleInput) *violation {
	if id := in.li.IOSAppStoreIdentifier; id != nil && !numeric(*id) {
		return invalid("ios_app_store_identifier", "ios_app_store_identifier must be the numeric part of the App Store id, got %q", *id)
	}
	return nil
}

func ruleAdvertiserUserID(in ruleInput) *violation {
	if id := in.li.AdvertiserUserID; id != nil && !numeric(*id) {
		return invalid("advertiser_user_id", "advertiser_user_id must be a user id, got %q", *id)
	}
	return nil
}

func ruleDomainFormat(in ruleInput) *violation {
	if d := in.li.AdvertiserDomain; d != nil && !validDomain(*d) {
		return invalid("advertiser_domain", "advertiser_domain must be a domain without protocol or path, got %q", *d)
	}
	return nil
}

func rulePublisherDomain(in ruleInput) *violation {
	if slices.Contains(in.li.Placements, "PUBLISHER_NETWORK") && in.li.AdvertiserDomain == nil {
		return missing("advertiser_domain", "advertiser_domain is required with placement PUBLISHER_NETWORK")
	}
	return nil
}

func ruleCategoriesFormat(in ruleInput) *violation {
	for _, c := range in.li.Categories {
		if !validIAB(c) {
			return invalid("categories", "categories must be IAB categories (IAB<n> or IAB<n>-<m>), got %q", c)
		}
	}
	return nil
}

func rulePublisherCategories(in ruleInput) *violation {
	if slices.Contains(in.li.Placements, "PUBLISHER_NETWORK") && len(in.li.Categories) == 0 {
		return missing("categories", "categories is required with placement PUBLISHER_NETWORK")
	}
	return nil
}

// rulePrerollCategories: a PREROLL_VIEWS line item carries one or two
// advertiser business categories through categories, each as the whole
// set of its iab_categories: every code must belong to a category, the
// codes cover one or two categories, and the sent set is their union.
func rulePrerollCategories(in ruleInput) *violation {
	if in.li.Objective != "PREROLL_VIEWS" {
		return nil
	}
	if len(in.li.Categories) == 0 {
		return missing("categories", "objective PREROLL_VIEWS requires one or two advertiser business categories "+
			"(categories set to their iab_categories, see GET advertiser_business_categories)")
	}
	sent := map[string]bool{}
	var chosen []storage.AdvertiserBusinessCategory
	for _, code := range in.li.Categories {
		sent[code] = true
		c, ok := in.business[code]
		if !ok {
			return invalid("categories", "%s is not an IAB category of any advertiser business category "+
				"(see GET advertiser_business_categories)", code)
		}
		if !slices.ContainsFunc(chosen, func(o storage.AdvertiserBusinessCategory) bool { return o.ID == c.ID }) {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) > 2 {
		names := make([]string, len(chosen))
		for i, c := range chosen {
			names[i] = c.Name + " (" + c.ID + ")"
		}
		return invalid("categories", "objective PREROLL_VIEWS takes one or two advertiser business categories, got %d: %s",
			len(chosen), strings.Join(names, ", "))
	}
	for _, c := range chosen {
		var lacking []string
		for _, iab := range c.IABCategories {
			if !sent[iab] {
				lacking = append(lacking, iab)
			}
		}
		if len(lacking) > 0 {
			return invalid("categories", "advertiser business category %s (%s) is incomplete: categories must carry all of its "+
				"iab_categories, missing %s", c.Name, c.ID, strings.Join(lacking, ","))
		}
	}
	return nil
}

func ruleWebEventTag(in ruleInput) *violation {
	if in.li.Goal != nil && *in.li.Goal == "WEBSITE_CONVERSIONS" && in.li.PrimaryWebEventTag == nil {
		return missing("primary_web_event_tag", "primary_web_event_tag is required with goal WEBSITE_CONVERSIONS")
	}
	return nil
}

func ruleFlight(in ruleInput) *violation {
	s, e := in.li.StartTime, in.li.EndTime
	if s != nil && e != nil && !e.After(*s) {
		return invalid("end_time", "end_time must be after start_time")
	}
	return nil
}

// numeric reports a non-empty string of ASCII digits.
func numeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validDomain reports a host name without protocol, port or path: dot
// separated labels of letters, digits and inner hyphens, at least two.
func validDomain(s string) bool {
	labels := strings.Split(s, ".")
	if len(s) > 253 || len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// validIAB reports an IAB category: IAB<n> or IAB<n>-<m>.
func validIAB(s string) bool {
	rest, ok := strings.CutPrefix(s, "IAB")
	if !ok {
		return false
	}
	major, minor, sub := strings.Cut(rest, "-")
	return numeric(major) && (!sub || numeric(minor))
}
