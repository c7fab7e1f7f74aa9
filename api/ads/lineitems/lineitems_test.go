package lineitems_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// lineItemFields are every attribute of the line item object.
var lineItemFields = []string{"id", "name", "campaign_id", "currency", "objective", "product_type", "placements", "goal",
	"bid_strategy", "bid_amount_local_micro", "pay_by", "start_time", "end_time", "entity_status",
	"total_budget_amount_local_micro", "daily_budget_amount_local_micro", "frequency_cap", "duration_in_days",
	"advertiser_user_id", "advertiser_domain", "categories", "android_app_store_identifier", "ios_app_store_identifier",
	"audience_expansion", "target_cpa_local_micro", "primary_web_event_tag", "standard_delivery",
	"automatic_tweet_promotion", "creative_source", "created_at", "updated_at", "deleted"}

// TestCreateAndGetLineItem: a create returns every field (unset ones
// null), GET returns the same object, and the creation is in the account
// history.
func TestCreateAndGetLineItem(t *testing.T) {
	e := newEnv(t)
	li := e.create(t, with(e.baseParams(e.campaignID), url.Values{"name": {"Spring"}, "bid_amount_local_micro": {"1500000"},
		"frequency_cap": {"3"}, "duration_in_days": {"7"}, "total_budget_amount_local_micro": {"9000000"},
		"daily_budget_amount_local_micro": {"1000000"}, "start_time": {"2030-01-01T00:00:00Z"}, "end_time": {"2030-02-01"},
		"audience_expansion": {"broad"}, "entity_status": {"PAUSED"}, "placements": {"SERVICE_TIMELINE,SERVICE_SEARCH"}}))
	for _, f := range lineItemFields {
		if _, ok := li[f]; !ok {
			t.Errorf("field %s missing", f)
		}
	}
	want := map[string]any{"name": "Spring", "campaign_id": e.campaignID, "currency": "USD", "objective": "ENGAGEMENTS",
		"goal": "ENGAGEMENT", "bid_strategy": "MAX", "bid_amount_local_micro": 1500000.0, "pay_by": nil,
		"start_time": "2030-01-01T00:00:00Z", "end_time": "2030-02-01T00:00:00Z", "entity_status": "PAUSED",
		"audience_expansion": "BROAD", "frequency_cap": 3.0, "duration_in_days": 7.0, "advertiser_domain": nil,
		"target_cpa_local_micro": nil, "creative_source": "MANUAL", "deleted": false}
	for k, v := range want {
		if li[k] != v {
			t.Errorf("%s = %v, want %v", k, li[k], v)
		}
	}
	if fmt.Sprint(li["placements"]) != "[SERVICE_TIMELINE SERVICE_SEARCH]" || fmt.Sprint(li["categories"]) != "[]" {
		t.Errorf("placements %v categories %v", li["placements"], li["categories"])
	}
	got := e.alice.Get(t, e.path("/"+li["id"].(string)), nil).Status(t, 200).Data(t)
	if a, b := jsonOf(t, got), jsonOf(t, li); a != b {
		t.Fatalf("GET differs from create:\n%s\n%s", a, b)
	}
	if n := count(t, e.s, `SELECT count(*) FROM account_history WHERE entity_type = 'LINE_ITEM' AND entity_id = $1
		AND change_type = 'CREATE' AND entity_data->>'name' = 'Spring'`, li["id"]); n != 1 {
		t.Fatalf("%d CREATE history entries", n)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLineItemDefaults: goal, bid_strategy and pay_by follow the objective
// and the bid; AUTO drops the bid amount.
func TestLineItemDefaults(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name                  string
		params                url.Values
		goal, strategy, payBy any
		bid                   any
	}{
		{"engagements auto", url.Values{}, "ENGAGEMENT", "AUTO", nil, nil},
		{"engagements with bid is MAX", url.Values{"bid_amount_local_micro": {"5000000"}}, "ENGAGEMENT", "MAX", nil, 5000000.0},
		{"AUTO ignores the bid", url.Values{"bid_strategy": {"AUTO"}, "bid_amount_local_micro": {"5000000"}}, "ENGAGEMENT", "AUTO", nil, nil},
		{"reach with bid is TARGET", url.Values{"objective": {"REACH"}, "bid_amount_local_micro": {"5000000"}}, "MAX_REACH", "TARGET", nil, 5000000.0},
		{"followers with bid is AUTO", url.Values{"objective": {"FOLLOWERS"}, "bid_amount_local_micro": {"5000000"}}, "FOLLOWERS", "AUTO", nil, nil},
		{"website clicks pay by impression", url.Values{"objective": {"WEBSITE_CLICKS"}}, "LINK_CLICKS", "AUTO", "IMPRESSION", nil},
		{"website clicks TARGET pays by link click", url.Values{"objective": {"WEBSITE_CLICKS"}, "bid_strategy": {"TARGET"},
			"bid_amount_local_micro": {"5000000"}}, "LINK_CLICKS", "TARGET", "LINK_CLICK", 5000000.0},
		{"app installs", url.Values{"objective": {"APP_INSTALLS"}, "ios_app_store_identifier": {"1"}}, "APP_INSTALLS", "AUTO", "IMPRESSION", nil},
		{"app installs pay by app click", url.Values{"objective": {"APP_INSTALLS"}, "android_app_store_identifier": {"com.x"},
			"pay_by": {"APP_CLICK"}}, "APP_INSTALLS", "AUTO", "APP_CLICK", nil},
		{"app engagements", url.Values{"objective": {"APP_ENGAGEMENTS"}, "ios_app_store_identifier": {"1"}}, "APP_CLICKS", "AUTO", nil, nil},
		{"video views", url.Values{"objective": {"VIDEO_VIEWS"}}, "VIDEO_VIEW", "AUTO", nil, nil},
		{"preroll", url.Values{"objective": {"PREROLL_VIEWS"}, "product_type": {"MEDIA"}, "categories": {"IAB1,IAB9-30"}}, "PREROLL", "AUTO", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			li := e.create(t, with(e.baseParams(e.campaignID), tt.params))
			if li["goal"] != tt.goal || li["bid_strategy"] != tt.strategy || li["pay_by"] != tt.payBy || li["bid_amount_local_micro"] != tt.bid {
				t.Fatalf("goal %v strategy %v pay_by %v bid %v, want %v %v %v %v", li["goal"], li["bid_strategy"], li["pay_by"],
					li["bid_amount_local_micro"], tt.goal, tt.strategy, tt.payBy, tt.bid)
			}
		})
	}
}

// TestUpdateLineItem: PUT changes only what it is given, answers the line
// item, and history records old and new values.
func TestUpdateLineItem(t *testing.T) {
	e := newEnv(t)
	li := e.create(t, with(e.baseParams(e.campaignID), url.Values{"name": {"before"}, "bid_amount_local_micro": {"1000000"}}))
	id := li["id"].(string)
	got := e.alice.Put(t, e.path("/"+id), url.Values{"bid_amount_local_micro": {"140000"}, "entity_status": {"PAUSED"}}).Status(t, 200).Data(t)
	if got["bid_amount_local_micro"] != 140000.0 || got["entity_status"] != "PAUSED" || got["name"] != "before" || got["bid_strategy"] != "MAX" {
		t.Fatalf("updated: %v", got)
	}
	var changes string
	e.s.Scan(t, `SELECT changes::text FROM account_history WHERE entity_id = $1 AND change_type = 'UPDATE'`, []any{id}, &changes)
	var c map[string]map[string]any
	if err := json.Unmarshal([]byte(changes), &c); err != nil {
		t.Fatal(err)
	}
	if c["bid_amount_local_micro"]["old"] != 1000000.0 || c["bid_amount_local_micro"]["new"] != 140000.0 ||
		c["entity_status"]["new"] != "PAUSED" || c["name"] != nil {
		t.Fatalf("changes: %s", changes)
	}
	// Switching to AUTO drops the bid; MAX again needs one.
	auto := e.alice.Put(t, e.path("/"+id), url.Values{"bid_strategy": {"AUTO"}}).Status(t, 200).Data(t)
	if auto["bid_amount_local_micro"] != nil {
		t.Fatalf("AUTO kept the bid: %v", auto["bid_amount_local_micro"])
	}
	e.alice.Put(t, e.path("/"+id), url.Values{"bid_strategy": {"MAX"}}).Fails(t, 400, "MISSING_PARAMETER", "bid_amount_local_micro")
}

// TestDeleteLineItem: soft delete returns the entity, a second DELETE and
// GET answer 404, with_deleted shows it, promoted tweets are untouched.
func TestDeleteLineItem(t *testing.T) {
	e := newEnv(t)
	id := e.create(t, e.baseParams(e.campaignID))["id"].(string)
	post := factory.Post(t, e.s.DB, &factory.PostOpts{Author: e.alice.User})
	e.s.Exec(t, `INSERT INTO promoted_tweets (account_id, line_item_id, tweet_id) VALUES ($1, $2, $3)`, e.acct.ID, id, post.ID)
	d := e.alice.Delete(t, e.path("/"+id), nil).Status(t, 200).Data(t)
	if d["deleted"] != true {
		t.Fatalf("deleted = %v", d["deleted"])
	}
	e.alice.Delete(t, e.path("/"+id), nil).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
	e.alice.Get(t, e.path("/"+id), nil).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
	e.alice.Put(t, e.path("/"+id), url.Values{"name": {"x"}}).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
	if g := e.alice.Get(t, e.path("/"+id), url.Values{"with_deleted": {"true"}}).Status(t, 200).Data(t); g["deleted"] != true {
		t.Fatalf("with_deleted: %v", g)
	}
	if n := count(t, e.s, `SELECT count(*) FROM promoted_tweets WHERE line_item_id = $1 AND NOT deleted`, id); n != 1 {
		t.Fatalf("promoted tweets not deleted: %d, want 1", n)
	}
	if n := count(t, e.s, `SELECT count(*) FROM account_history WHERE entity_id = $1 AND change_type = 'DELETE'
		AND changes->'deleted'->>'new' = 'true'`, id); n != 1 {
		t.Fatalf("%d DELETE history entries", n)
	}
	list := e.alice.Get(t, e.path(""), nil).Status(t, 200).List(t)
	withDeleted := e.alice.Get(t, e.path(""), url.Values{"with_deleted": {"true"}}).Status(t, 200).List(t)
	if len(withDeleted) != len(list)+1 {
		t.Fatalf("list %d, with_deleted %d", len(list), len(withDeleted))
	}
}

// TestLineItemTenancy: another account's campaign answers like a missing
// one, another user's account is ACCOUNT_NOT_FOUND on every route, and
// another account's line item is LINE_ITEM_NOT_FOUND.
func TestLineItemTenancy(t *testing.T) {
	e := newEnv(t)
	bob := e.s.User(t, "bob")
	bobAcct := bob.Account(t)
	_, bobCampaign, bobLineItem := factory.AdsChain(t, e.s.DB, bobAcct.ID)
	for _, campaign := range []string{bobCampaign, "zzzzzz"} {
		e.alice.Post(t, e.path(""), e.baseParams(campaign)).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")
	}
	deleted := factory.Campaign(t, e.s.DB, e.acct.ID, e.fundingID)
	e.s.Exec(t, `UPDATE campaigns SET deleted = true WHERE id = $1`, deleted)
	e.alice.Post(t, e.path(""), e.baseParams(deleted)).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")

	for _, id := range []string{bobLineItem, "zzzzzz"} {
		e.alice.Get(t, e.path("/"+id), nil).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
		e.alice.Put(t, e.path("/"+id), url.Values{"name": {"x"}}).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
		e.alice.Delete(t, e.path("/"+id), nil).Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
	}
	bobPath := "/12/accounts/" + bobAcct.ID + "/line_items"
	for _, acctPath := range []string{bobPath, "/12/accounts/zzzzzz/line_items"} {
		e.alice.Get(t, acctPath, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
		e.alice.Get(t, acctPath+"/"+bobLineItem, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
		e.alice.Post(t, acctPath, e.baseParams(bobCampaign)).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
		e.alice.Put(t, acctPath+"/"+bobLineItem, url.Values{"name": {"x"}}).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
		e.alice.Delete(t, acctPath+"/"+bobLineItem, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	}
	if n := count(t, e.s, `SELECT count(*) FROM line_items WHERE id = $1 AND NOT deleted AND name NOT LIKE 'x'`, bobLineItem); n != 1 {
		t.Fatal("bob's line item was changed")
	}
	// The sandbox listener does not see production accounts.
	e.alice.Sandbox().Get(t, e.path(""), nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
}

// TestListLineItemFilters: every filter narrows the list.
func TestListLineItemFilters(t *testing.T) {
	e := newEnv(t)
	otherFI := factory.FundingInstrument(t, e.s.DB, e.acct.ID)
	otherCampaign := factory.Campaign(t, e.s.DB, e.acct.ID, otherFI)
	a := e.create(t, with(e.baseParams(e.campaignID), url.Values{"name": {"Alpha_1"}}))["id"].(string)
	b := e.create(t, with(e.baseParams(e.campaignID), url.Values{"name": {"alphabet"}}))["id"].(string)
	c := e.create(t, with(e.baseParams(otherCampaign), url.Values{"name": {"Beta"}}))["id"].(string)
	d := e.create(t, with(e.baseParams(otherCampaign), url.Values{"name": {"Draft"}, "entity_status": {"DRAFT"}}))["id"].(string)
	tests := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"all but drafts", url.Values{}, []string{a, b, c}},
		{"with_draft", url.Values{"with_draft": {"true"}}, []string{a, b, c, d}},
		{"campaign_ids", url.Values{"campaign_ids": {otherCampaign}}, []string{c}},
		{"line_item_ids", url.Values{"line_item_ids": {a + "," + c}}, []string{a, c}},
		{"funding_instrument_ids", url.Values{"funding_instrument_ids": {e.fundingID}}, []string{a, b}},
		{"q prefix, case-insensitive", url.Values{"q": {"ALPHA"}}, []string{a, b}},
		{"q escapes LIKE", url.Values{"q": {"alpha_"}}, []string{a}},
		{"sort_by name desc", url.Values{"sort_by": {"name-desc"}, "line_item_ids": {a + "," + c}}, []string{c, a}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := e.alice.Get(t, e.path(""), tt.params).Status(t, 200).List(t)
			var got []string
			for _, it := range items {
				got = append(got, it["id"].(string))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestListLineItemsBadInput: every bad list, get, create and update
// parameter answers the ads error naming it.
func TestListLineItemsBadInput(t *testing.T) {
	e := newEnv(t)
	id := e.create(t, e.baseParams(e.campaignID))["id"].(string)
	e.create(t, e.baseParams(e.campaignID))
	cursor := e.alice.Get(t, e.path(""), url.Values{"count": {"1"}}).Status(t, 200).NextCursor()
	ids := strings.TrimSuffix(strings.Repeat("a,", 201), ",")
	tests := []struct {
		name, method, path string
		params             url.Values
		code, param        string
	}{
		{"count 0", "GET", "", url.Values{"count": {"0"}}, "INVALID_PARAMETER", "count"},
		{"count 1001", "GET", "", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"count not a number", "GET", "", url.Values{"count": {"ten"}}, "INVALID_PARAMETER", "count"},
		{"sort_by nullable attribute", "GET", "", url.Values{"sort_by": {"goal-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"sort_by direction", "GET", "", url.Values{"sort_by": {"name-up"}}, "INVALID_PARAMETER", "sort_by"},
		{"201 campaign ids", "GET", "", url.Values{"campaign_ids": {ids}}, "INVALID_PARAMETER", "campaign_ids"},
		{"201 line item ids", "GET", "", url.Values{"line_item_ids": {ids}}, "INVALID_PARAMETER", "line_item_ids"},
		{"201 funding ids", "GET", "", url.Values{"funding_instrument_ids": {ids}}, "INVALID_PARAMETER", "funding_instrument_ids"},
		{"bad id", "GET", "", url.Values{"line_item_ids": {"a b"}}, "INVALID_PARAMETER", "line_item_ids"},
		{"q too long", "GET", "", url.Values{"q": {strings.Repeat("q", 256)}}, "INVALID_PARAMETER", "q"},
		{"with_deleted not boolean", "GET", "", url.Values{"with_deleted": {"yes"}}, "INVALID_PARAMETER", "with_deleted"},
		{"with_total_count and cursor", "GET", "", url.Values{"count": {"1"}, "with_total_count": {"true"}, "cursor": {cursor}}, "EXCLUSIVE_PARAMETERS", "cursor"},
		{"tampered cursor", "GET", "", url.Values{"count": {"1"}, "cursor": {cursor + "x"}}, "INVALID_PARAMETER", "cursor"},
		{"cursor of another query", "GET", "", url.Values{"count": {"1"}, "sort_by": {"name-desc"}, "cursor": {cursor}}, "INVALID_PARAMETER", "cursor"},
		{"unknown parameter", "GET", "", url.Values{"colour": {"red"}}, "INVALID_PARAMETER", "colour"},
		{"get with_deleted", "GET", "/" + id, url.Values{"with_deleted": {"1"}}, "INVALID_PARAMETER", "with_deleted"},
		{"missing campaign_id", "POST", "", url.Values{"objective": {"REACH"}, "product_type": {"MEDIA"}, "placements": {"ALL_ON_SERVICE"}}, "MISSING_PARAMETER", "campaign_id"},
		{"missing objective", "POST", "", url.Values{"campaign_id": {e.campaignID}, "product_type": {"MEDIA"}, "placements": {"ALL_ON_SERVICE"}}, "MISSING_PARAMETER", "objective"},
		{"missing product_type", "POST", "", url.Values{"campaign_id": {e.campaignID}, "objective": {"REACH"}, "placements": {"ALL_ON_SERVICE"}}, "MISSING_PARAMETER", "product_type"},
		{"missing placements", "POST", "", url.Values{"campaign_id": {e.campaignID}, "objective": {"REACH"}, "product_type": {"MEDIA"}}, "MISSING_PARAMETER", "placements"},
		{"unknown placement", "POST", "", with(e.baseParams(e.campaignID), url.Values{"placements": {"TWITTER_TIMELINE"}}), "INVALID_PARAMETER", "placements"},
		{"empty name", "POST", "", with(e.baseParams(e.campaignID), url.Values{"name": {""}}), "INVALID_PARAMETER", "name"},
		{"bid not a number", "POST", "", with(e.baseParams(e.campaignID), url.Values{"bid_amount_local_micro": {"1.5"}}), "INVALID_PARAMETER", "bid_amount_local_micro"},
		{"negative total budget", "POST", "", with(e.baseParams(e.campaignID), url.Values{"total_budget_amount_local_micro": {"-1"}}), "INVALID_PARAMETER", "total_budget_amount_local_micro"},
		{"frequency cap zero", "POST", "", with(e.baseParams(e.campaignID), url.Values{"frequency_cap": {"0"}}), "INVALID_PARAMETER", "frequency_cap"},
		{"empty category", "POST", "", with(e.baseParams(e.campaignID), url.Values{"categories": {"IAB1,"}}), "INVALID_PARAMETER", "categories"},
		{"advertiser_user_id not an id", "POST", "", with(e.baseParams(e.campaignID), url.Values{"advertiser_user_id": {"@alice"}}), "INVALID_PARAMETER", "advertiser_user_id"},
		{"PUT campaign_id", "PUT", "/" + id, url.Values{"campaign_id": {e.campaignID}}, "INVALID_PARAMETER", "campaign_id"},
		{"PUT objective", "PUT", "/" + id, url.Values{"objective": {"REACH"}}, "INVALID_PARAMETER", "objective"},
		{"PUT standard_delivery", "PUT", "/" + id, url.Values{"standard_delivery": {"true"}}, "INVALID_PARAMETER", "standard_delivery"},
		{"PUT end_time", "PUT", "/" + id, url.Values{"end_time": {"2030-13-01"}}, "INVALID_PARAMETER", "end_time"},
		{"DELETE parameter", "DELETE", "/" + id, url.Values{"with_deleted": {"true"}}, "INVALID_PARAMETER", "with_deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.alice.Do(t, tt.method, e.path(tt.path), tt.params).Fails(t, http.StatusBadRequest, tt.code, tt.param)
		})
	}
	if n := count(t, e.s, `SELECT count(*) FROM line_items WHERE account_id = $1`, e.acct.ID); n != 2 {
		t.Fatalf("bad input created line items: %d, want 2", n)
	}
}

// TestListLineItemsPaginationConcurrentInserts walks every page of each
// sort while line items are being created: every line item that existed
// before the walk is seen exactly once, and no row twice.
func TestListLineItemsPaginationConcurrentInserts(t *testing.T) {
	e := newEnv(t)
	var existing []string
	for i := range 45 {
		existing = append(existing, e.create(t, with(e.baseParams(e.campaignID), url.Values{"name": {fmt.Sprintf("li %02d", i%15)}}))["id"].(string))
	}
	e.s.Exec(t, `UPDATE line_items SET name = NULL WHERE id = $1`, existing[0])
	for _, sortBy := range []string{"", "name-asc", "name-desc", "created_at-desc", "updated_at-asc", "entity_status-asc", "objective-desc"} {
		t.Run("sort "+sortBy, func(t *testing.T) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				insertUntil(t, e, stop, errs)
			}()
			seen := map[string]int{}
			params := url.Values{"count": {"7"}}
			if sortBy != "" {
				params.Set("sort_by", sortBy)
			}
			for pages := 0; ; pages++ {
				r := e.alice.Get(t, e.path(""), params).Status(t, 200)
				for _, it := range r.List(t) {
					seen[it["id"].(string)]++
				}
				next := r.NextCursor()
				if next == "" || pages > 100 {
					break
				}
				params.Set("cursor", next)
			}
			close(stop)
			wg.Wait()
			select {
			case err := <-errs:
				t.Fatalf("concurrent insert: %v", err)
			default:
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("line item %s seen %d times", id, n)
				}
			}
			for _, id := range existing {
				if seen[id] != 1 {
					t.Errorf("line item %s seen %d times, want 1", id, seen[id])
				}
			}
		})
	}
}

// insertUntil creates line items through the store until stop is closed.
func insertUntil(t *testing.T, e env, stop <-chan struct{}, errs chan<- error) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		name := fmt.Sprintf("li %02d new", i%20)
		_, err := e.s.DB.CreateLineItem(t.Context(), e.alice.User.ID, e.acct.ID, e.campaignID,
			func(c storage.LineItemCampaign) (storage.LineItem, error) {
				return storage.LineItem{Name: &name, Currency: c.Currency, Objective: "ENGAGEMENTS", ProductType: "PROMOTED_TWEETS",
					Placements: []string{"ALL_ON_SERVICE"}, BidStrategy: "AUTO", EntityStatus: "ACTIVE"}, nil
			})
		if err != nil {
			select {
			case errs <- err:
			default:
			}
			return
		}
	}
}

// TestUpdateLineItemWithoutChangeWritesNothing: a PUT with no parameter,
// or with the stored values, answers the line item as stored, keeps
// updated_at and records no history entry.
func TestUpdateLineItemWithoutChangeWritesNothing(t *testing.T) {
	e := newEnv(t)
	li := e.create(t, with(e.baseParams(e.campaignID), url.Values{"name": {"same"}, "bid_amount_local_micro": {"1000000"},
		"total_budget_amount_local_micro": {"50000000"}, "categories": {"IAB1,IAB2"}}))
	id := li["id"].(string)
	stamp := func() string {
		var at string
		e.s.Scan(t, `SELECT updated_at::text FROM line_items WHERE id = $1`, []any{id}, &at)
		return at
	}
	before := stamp()
	for _, params := range []url.Values{
		nil,
		{"name": {"same"}},
		{"name": {"same"}, "bid_strategy": {"MAX"}, "bid_amount_local_micro": {"1000000"}, "total_budget_amount_local_micro": {"50000000"},
			"categories": {"IAB1,IAB2"}, "entity_status": {"ACTIVE"}},
	} {
		got := e.alice.Put(t, e.path("/"+id), params).Status(t, 200).Data(t)
		if jsonOf(t, got) != jsonOf(t, li) {
			t.Errorf("PUT %v answered\n%s\nwant the stored\n%s", params, jsonOf(t, got), jsonOf(t, li))
		}
		if at := stamp(); at != before {
			t.Errorf("PUT %v moved updated_at from %s to %s", params, before, at)
		}
		if n := count(t, e.s, `SELECT count(*) FROM account_history WHERE entity_id = $1`, id); n != 1 {
			t.Errorf("PUT %v: %d history entries, want the create only", params, n)
		}
	}
	e.alice.Put(t, e.path("/"+id), url.Values{"name": {"other"}}).Status(t, 200)
	if n := count(t, e.s, `SELECT count(*) FROM account_history WHERE entity_id = $1 AND change_type = 'UPDATE'
		AND changes = '{"name": {"old": "same", "new": "other"}}'::jsonb`, id); n != 1 {
		t.Errorf("a real change: %d matching UPDATE entries, want 1", n)
	}
}
