package lineitems_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestLineItemRules has one row per rule of the line item parameter table
// (and of the reference's create endpoint): each is broken through the
// HTTP API on create and, where the parameter can be changed, on update
// against the stored line item; the exact code and parameter come back,
// with nothing created or changed.
func TestLineItemRules(t *testing.T) {
	e := newEnv(t)
	campaignOpt := e.campaignOptimized(t)
	type row struct {
		name string
		// campaign is the campaign to use ("" for the LINE_ITEM one).
		campaign string
		// valid are create parameters on top of the base that make a
		// valid line item; bad breaks the rule.
		valid, bad  url.Values
		code, param string
		// createOnly: bad cannot be sent on PUT; updateOnly: not on POST.
		createOnly, updateOnly bool
	}
	const inv, miss = "INVALID_PARAMETER", "MISSING_PARAMETER"
	rows := []row{
		{name: "MAX not for REACH", valid: url.Values{"objective": {"REACH"}, "placements": {"SERVICE_TIMELINE"}},
			bad: url.Values{"bid_strategy": {"MAX"}, "bid_amount_local_micro": {"1000000"}}, code: inv, param: "bid_strategy"},
		{name: "MAX not for FOLLOWERS", valid: url.Values{"objective": {"FOLLOWERS"}},
			bad: url.Values{"bid_strategy": {"MAX"}, "bid_amount_local_micro": {"1000000"}}, code: inv, param: "bid_strategy"},
		{name: "TARGET only for REACH and WEBSITE_CLICKS",
			bad: url.Values{"bid_strategy": {"TARGET"}, "bid_amount_local_micro": {"1000000"}}, code: inv, param: "bid_strategy"},
		{name: "bid_strategy enum", bad: url.Values{"bid_strategy": {"LOWEST"}}, code: inv, param: "bid_strategy"},
		{name: "bid amount greater than zero", bad: url.Values{"bid_amount_local_micro": {"0"}}, code: inv, param: "bid_amount_local_micro"},
		{name: "bid amount required for MAX", bad: url.Values{"bid_strategy": {"MAX"}}, code: miss, param: "bid_amount_local_micro"},
		{name: "bid amount required for TARGET", valid: url.Values{"objective": {"WEBSITE_CLICKS"}},
			bad: url.Values{"bid_strategy": {"TARGET"}}, code: miss, param: "bid_amount_local_micro"},
		{name: "pay_by enum", bad: url.Values{"pay_by": {"CASH"}}, code: inv, param: "pay_by"},
		{name: "pay_by only for APP_INSTALLS", bad: url.Values{"pay_by": {"IMPRESSION"}}, code: inv, param: "pay_by"},
		{name: "pay_by LINK_CLICK only for goal LINK_CLICKS",
			valid: url.Values{"objective": {"APP_INSTALLS"}, "ios_app_store_identifier": {"333903271"}},
			bad:   url.Values{"pay_by": {"LINK_CLICK"}}, code: inv, param: "pay_by"},
		{name: "pay_by IMPRESSION not with TARGET",
			valid: url.Values{"objective": {"APP_INSTALLS"}, "ios_app_store_identifier": {"333903271"}},
			bad:   url.Values{"pay_by": {"IMPRESSION"}, "bid_strategy": {"TARGET"}, "bid_amount_local_micro": {"1000000"}}, code: inv, param: "pay_by"},
		{name: "frequency_cap only for REACH ENGAGEMENTS VIDEO_VIEWS PREROLL_VIEWS", valid: url.Values{"objective": {"WEBSITE_CLICKS"}},
			bad: url.Values{"frequency_cap": {"3"}}, code: inv, param: "frequency_cap"},
		{name: "duration_in_days 1 7 30", bad: url.Values{"duration_in_days": {"5"}}, code: inv, param: "duration_in_days"},
		{name: "daily budget at most total", bad: url.Values{"total_budget_amount_local_micro": {"10000000"}, "daily_budget_amount_local_micro": {"20000000"}},
			code: inv, param: "daily_budget_amount_local_micro"},
		{name: "total budget alone below the stored daily budget", updateOnly: true,
			valid: url.Values{"daily_budget_amount_local_micro": {"20000000"}},
			bad:   url.Values{"total_budget_amount_local_micro": {"10000000"}}, code: inv, param: "total_budget_amount_local_micro"},
		{name: "daily budget alone above the stored total budget", updateOnly: true,
			valid: url.Values{"total_budget_amount_local_micro": {"10000000"}},
			bad:   url.Values{"daily_budget_amount_local_micro": {"20000000"}}, code: inv, param: "daily_budget_amount_local_micro"},
		{name: "daily budget only with LINE_ITEM optimization", campaign: campaignOpt,
			bad: url.Values{"daily_budget_amount_local_micro": {"10000000"}}, code: inv, param: "daily_budget_amount_local_micro"},
		{name: "standard_delivery only with LINE_ITEM optimization", campaign: campaignOpt, createOnly: true,
			bad: url.Values{"standard_delivery": {"true"}}, code: inv, param: "standard_delivery"},
		{name: "app objectives need an app store id", createOnly: true,
			bad: url.Values{"objective": {"APP_ENGAGEMENTS"}}, code: miss, param: "android_app_store_identifier"},
		{name: "iOS app store id numeric", valid: url.Values{"objective": {"APP_INSTALLS"}, "android_app_store_identifier": {"com.example.app"}},
			bad: url.Values{"ios_app_store_identifier": {"id333903271"}}, code: inv, param: "ios_app_store_identifier"},
		{name: "PUBLISHER_NETWORK needs advertiser_domain", createOnly: true,
			bad: url.Values{"placements": {"PUBLISHER_NETWORK"}, "categories": {"IAB1"}}, code: miss, param: "advertiser_domain"},
		{name: "advertiser_domain without protocol", bad: url.Values{"advertiser_domain": {"https://example.com"}}, code: inv, param: "advertiser_domain"},
		{name: "PUBLISHER_NETWORK needs categories", createOnly: true,
			bad: url.Values{"placements": {"PUBLISHER_NETWORK"}, "advertiser_domain": {"example.com"}}, code: miss, param: "categories"},
		{name: "categories are IAB categories", bad: url.Values{"categories": {"IAB1,Sports"}}, code: inv, param: "categories"},
		{name: "PREROLL_VIEWS needs a category", createOnly: true,
			bad: url.Values{"objective": {"PREROLL_VIEWS"}, "product_type": {"MEDIA"}}, code: miss, param: "categories"},
		{name: "PREROLL_VIEWS takes at most two advertiser business categories",
			valid: url.Values{"objective": {"PREROLL_VIEWS"}, "product_type": {"MEDIA"}, "categories": {"IAB7"}},
			bad:   url.Values{"categories": {"IAB7,IAB18,IAB20"}}, code: inv, param: "categories"},
		{name: "PREROLL_VIEWS categories belong to advertiser business categories",
			valid: url.Values{"objective": {"PREROLL_VIEWS"}, "product_type": {"MEDIA"}, "categories": {"IAB8-5,IAB8-18,IAB7"}},
			bad:   url.Values{"categories": {"IAB7,IAB2-3"}}, code: inv, param: "categories"},
		{name: "PREROLL_VIEWS advertiser business category sent whole",
			valid: url.Values{"objective": {"PREROLL_VIEWS"}, "product_type": {"MEDIA"}, "categories": {"IAB3,IAB13,IAB21"}},
			bad:   url.Values{"categories": {"IAB3,IAB13"}}, code: inv, param: "categories"},
		{name: "audience_expansion enum", bad: url.Values{"audience_expansion": {"WIDE"}}, code: inv, param: "audience_expansion"},
		{name: "entity_status enum", bad: url.Values{"entity_status": {"RUNNING"}}, code: inv, param: "entity_status"},
		{name: "entity_status DRAFT only on create", updateOnly: true, bad: url.Values{"entity_status": {"DRAFT"}}, code: inv, param: "entity_status"},
		{name: "start_time ISO 8601", bad: url.Values{"start_time": {"tomorrow"}}, code: inv, param: "start_time"},
		{name: "end_time after start_time", bad: url.Values{"start_time": {"2030-01-02T00:00:00Z"}, "end_time": {"2030-01-01T00:00:00Z"}},
			code: inv, param: "end_time"},
		{name: "goal enum", bad: url.Values{"goal": {"CLICKS"}}, code: inv, param: "goal"},
		{name: "goal for objective", bad: url.Values{"goal": {"APP_PURCHASES"}}, code: inv, param: "goal"},
		{name: "WEBSITE_CONVERSIONS needs primary_web_event_tag", createOnly: true,
			bad: url.Values{"objective": {"WEBSITE_CLICKS"}, "goal": {"WEBSITE_CONVERSIONS"}}, code: miss, param: "primary_web_event_tag"},
		{name: "objective enum", createOnly: true, bad: url.Values{"objective": {"SALES"}}, code: inv, param: "objective"},
		{name: "product_type enum", createOnly: true, bad: url.Values{"product_type": {"TREND"}}, code: inv, param: "product_type"},
		{name: "placements valid for product type", createOnly: true, bad: url.Values{"placements": {"TAP_BANNER"}}, code: inv, param: "placements"},
		{name: "placements not SERVICE_PROFILE alone", createOnly: true, bad: url.Values{"placements": {"SERVICE_PROFILE"}}, code: inv, param: "placements"},
		{name: "name at most 255", bad: url.Values{"name": {strings.Repeat("n", 256)}}, code: inv, param: "name"},
	}
	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			campaign := e.campaignID
			if rw.campaign != "" {
				campaign = rw.campaign
			}
			valid := with(e.baseParams(campaign), rw.valid)
			if !rw.updateOnly {
				before := count(t, e.s, `SELECT count(*) FROM line_items WHERE account_id = $1`, e.acct.ID)
				r := e.alice.Post(t, e.path(""), with(valid, rw.bad))
				if r.Code != http.StatusBadRequest || !hasError(r, rw.code, rw.param) {
					t.Fatalf("create: got %d, want 400 %s on %s: %s", r.Code, rw.code, rw.param, r.Raw)
				}
				if after := count(t, e.s, `SELECT count(*) FROM line_items WHERE account_id = $1`, e.acct.ID); after != before {
					t.Fatalf("create refused but %d line items were added", after-before)
				}
			}
			if rw.createOnly {
				return
			}
			li := e.create(t, valid)
			id := li["id"].(string)
			r := e.alice.Put(t, e.path("/"+id), rw.bad)
			if r.Code != http.StatusBadRequest || !hasError(r, rw.code, rw.param) {
				t.Fatalf("update: got %d, want 400 %s on %s: %s", r.Code, rw.code, rw.param, r.Raw)
			}
			got := e.alice.Get(t, e.path("/"+id), nil).Status(t, 200).Data(t)
			if got["updated_at"] != li["updated_at"] || count(t, e.s, `SELECT count(*) FROM account_history WHERE entity_id = $1`, id) != 1 {
				t.Fatalf("update refused but the line item changed: %v", got)
			}
		})
	}
}

// TestPrerollCategories: a PREROLL_VIEWS line item's categories are the
// iab_categories of one or two advertiser business categories, whole; a
// refusal names categories and says what is wrong, on create and on an
// update that leaves the stored line item as it was. Other objectives take
// any IAB categories.
func TestPrerollCategories(t *testing.T) {
	e := newEnv(t)
	preroll := with(e.baseParams(e.campaignID), url.Values{"objective": {"PREROLL_VIEWS"}, "product_type": {"MEDIA"}})
	for _, ok := range []string{"IAB7", "IAB8-18,IAB8-5", "IAB11-1,IAB11-2,IAB11-3,IAB11-5,IAB20", "IAB9-30,IAB9-7"} {
		li := e.create(t, with(preroll, url.Values{"categories": {ok}}))
		if got := strings.Join(toStrings(li["categories"]), ","); got != ok {
			t.Errorf("categories %s stored as %s", ok, got)
		}
	}
	li := e.create(t, with(preroll, url.Values{"categories": {"IAB7"}}))
	id := li["id"].(string)
	for _, tc := range []struct{ categories, message string }{
		{"IAB2-3", "IAB2-3 is not an IAB category of any advertiser business category"},
		{"IAB7,IAB99", "IAB99 is not an IAB category of any advertiser business category"},
		{"IAB7,IAB18,IAB20", "one or two advertiser business categories, got 3"},
		{"IAB8-5", "Alcohol (1jn) is incomplete"},
		{"IAB7,IAB3,IAB21", "Financial Services (1jp) is incomplete: categories must carry all of its iab_categories, missing IAB13"},
	} {
		before := count(t, e.s, `SELECT count(*) FROM line_items WHERE account_id = $1`, e.acct.ID)
		r := e.alice.Post(t, e.path(""), with(preroll, url.Values{"categories": {tc.categories}}))
		if r.Code != 400 || !hasError(r, "INVALID_PARAMETER", "categories") || !strings.Contains(r.Raw, tc.message) {
			t.Errorf("create with %s: %d %s, want 400 INVALID_PARAMETER on categories saying %q", tc.categories, r.Code, r.Raw, tc.message)
		}
		if after := count(t, e.s, `SELECT count(*) FROM line_items WHERE account_id = $1`, e.acct.ID); after != before {
			t.Errorf("create with %s refused but stored", tc.categories)
		}
		r = e.alice.Put(t, e.path("/"+id), url.Values{"categories": {tc.categories}})
		if r.Code != 400 || !hasError(r, "INVALID_PARAMETER", "categories") || !strings.Contains(r.Raw, tc.message) {
			t.Errorf("update with %s: %d %s, want 400 INVALID_PARAMETER on categories saying %q", tc.categories, r.Code, r.Raw, tc.message)
		}
		got := e.alice.Get(t, e.path("/"+id), nil).Status(t, 200).Data(t)
		if got["updated_at"] != li["updated_at"] || strings.Join(toStrings(got["categories"]), ",") != "IAB7" {
			t.Errorf("update with %s refused but changed: %v", tc.categories, got)
		}
	}
	if n := count(t, e.s, `SELECT count(*) FROM account_history WHERE entity_id = $1`, id); n != 1 {
		t.Errorf("refused updates wrote history: %d entries", n)
	}
	// an update not sending categories checks the stored ones
	e.s.Exec(t, `UPDATE line_items SET categories = '{IAB8-5}' WHERE id = $1`, id)
	e.alice.Put(t, e.path("/"+id), url.Values{"name": {"renamed"}}).Fails(t, 400, "INVALID_PARAMETER", "categories")
	e.alice.Put(t, e.path("/"+id), url.Values{"name": {"renamed"}, "categories": {"IAB8-5,IAB8-18"}}).Status(t, 200)
	// other objectives take IAB categories of no business category, in part
	e.create(t, with(e.baseParams(e.campaignID), url.Values{"categories": {"IAB2-3,IAB8-5"}}))
}

func toStrings(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}
