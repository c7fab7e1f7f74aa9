package lineitems

import (
	"slices"

	"github.com/aviary-dev/aviary/storage"
)

// Objective tables of the line item rules (docs/ads-line-items.md).
var (
	// defaultGoals is each objective's goal when none is given.
	defaultGoals = map[string]string{
		"APP_ENGAGEMENTS": "APP_CLICKS",
		"APP_INSTALLS":    "APP_INSTALLS",
		"REACH":           "MAX_REACH",
		"FOLLOWERS":       "FOLLOWERS",
		"ENGAGEMENTS":     "ENGAGEMENT",
		"VIDEO_VIEWS":     "VIDEO_VIEW",
		"PREROLL_VIEWS":   "PREROLL",
		"WEBSITE_CLICKS":  "LINK_CLICKS",
	}
	// goalObjectives are the goals only some objectives take.
	goalObjectives = map[string][]string{
		"APP_PURCHASES": {"APP_INSTALLS"},
		"APP_CLICKS":    {"APP_INSTALLS", "APP_ENGAGEMENTS"},
		"APP_INSTALLS":  {"APP_INSTALLS", "APP_ENGAGEMENTS"},
		"SITE_VISITS":   {"WEBSITE_CLICKS"},
	}
	// noMaxBid are the objectives bid_strategy MAX is not available for.
	noMaxBid = []string{"REACH", "FOLLOWERS"}
	// targetBid are the objectives bid_strategy TARGET is available for.
	targetBid = []string{"REACH", "WEBSITE_CLICKS"}
	// frequencyCapObjectives are the objectives frequency_cap is for.
	frequencyCapObjectives = []string{"REACH", "ENGAGEMENTS", "VIDEO_VIEWS", "PREROLL_VIEWS"}
	// impressionGoals are the goals whose pay_by defaults to IMPRESSION.
	impressionGoals = []string{"APP_INSTALLS", "LINK_CLICKS", "SITE_VISITS"}
)

// defaultBidStrategy is the bid_strategy of a new line item that names
// none: AUTO without a bid amount; with one, the first of MAX and TARGET
// the objective allows (AUTO, which ignores the amount, when neither).
func defaultBidStrategy(objective string, hasBid bool) string {
	switch {
	case !hasBid:
		return "AUTO"
	case !slices.Contains(noMaxBid, objective):
		return "MAX"
	case slices.Contains(targetBid, objective):
		return "TARGET"
	}
	return "AUTO"
}

// defaultPayBy is the pay_by the platform sets from the goal and bid
// strategy: IMPRESSION for goals APP_INSTALLS, LINK_CLICKS and
// SITE_VISITS, except LINK_CLICK for LINK_CLICKS with TARGET (IMPRESSION
// is not available with TARGET); unset otherwise.
func defaultPayBy(goal *string, bidStrategy string) *string {
	if goal == nil || !slices.Contains(impressionGoals, *goal) {
		return nil
	}
	v := "IMPRESSION"
	if *goal == "LINK_CLICKS" && bidStrategy == "TARGET" {
		v = "LINK_CLICK"
	}
	return &v
}

// settle applies the objective-dependent defaults to li after the request's
// values were merged in: goal, bid_strategy (on create), pay_by (derived
// unless the objective is APP_INSTALLS, where it may be chosen), and no
// bid amount with AUTO.
func settle(li storage.LineItem, sent map[string]bool, create bool) storage.LineItem {
	if li.Goal == nil {
		if g, ok := defaultGoals[li.Objective]; ok {
			li.Goal = &g
		}
	}
	if create && !sent["bid_strategy"] {
		li.BidStrategy = defaultBidStrategy(li.Objective, li.BidAmountLocalMicro != nil)
	}
	if li.Objective != "APP_INSTALLS" && !sent["pay_by"] || li.PayBy == nil {
		li.PayBy = defaultPayBy(li.Goal, li.BidStrategy)
	}
	if li.BidStrategy == "AUTO" {
		li.BidAmountLocalMicro = nil
	}
	return li
}
