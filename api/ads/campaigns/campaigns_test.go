package campaigns_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

type historyEntry struct {
	ChangeType string
	Changes    map[string]map[string]any
}

// history reads the account history of one campaign, oldest first.
func history(t *testing.T, s *adstest.Server, id string) []historyEntry {
	t.Helper()
	rows, err := s.SQL().Query(t.Context(), `SELECT change_type, changes FROM account_history
		WHERE entity_type = 'CAMPAIGN' AND entity_id = $1 ORDER BY change_time, id`, id)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	defer rows.Close()
	var out []historyEntry
	for rows.Next() {
		var h historyEntry
		var raw []byte
		if err := rows.Scan(&h.ChangeType, &raw); err != nil {
			t.Fatalf("scan: %v", err)
		}
		if err := json.Unmarshal(raw, &h.Changes); err != nil {
			t.Fatalf("changes: %v", err)
		}
		out = append(out, h)
	}
	return out
}

// TestCampaignLifecycle: create, get, update and delete a campaign, with
// the reference's object shape and a history entry for each change.
func TestCampaignLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	base := "/12/accounts/" + acct.ID + "/campaigns"
	r := alice.Post(t, base, url.Values{"funding_instrument_id": {fi}, "name": {"demo"}, "daily_budget_amount_local_micro": {"140000000"},
		"entity_status": {"paused"}, "budget_optimization": {"CAMPAIGN"}}).Status(t, http.StatusOK)
	c := r.Data(t)
	id, _ := c["id"].(string)
	want := map[string]any{"name": "demo", "budget_optimization": "CAMPAIGN", "entity_status": "PAUSED", "servable": false,
		"effective_status": "UNKNOWN", "daily_budget_amount_local_micro": float64(140000000), "funding_instrument_id": fi,
		"currency": "USD", "deleted": false, "purchase_order_number": nil, "total_budget_amount_local_micro": nil,
		"duration_in_days": nil, "standard_delivery": nil, "frequency_cap": nil}
	for k, v := range want {
		got, ok := c[k]
		if !ok || got != v {
			t.Errorf("created %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if reasons := fmt.Sprint(c["reasons_not_servable"]); reasons != "[PAUSED_BY_ADVERTISER INCOMPLETE]" {
		t.Errorf("reasons_not_servable = %s", reasons)
	}
	if params := r.Body["request"].(map[string]any)["params"].(map[string]any); params["entity_status"] != "PAUSED" || params["account_id"] != acct.ID {
		t.Errorf("request.params = %v", params)
	}
	if c["created_at"] == nil || !strings.HasSuffix(c["created_at"].(string), "Z") {
		t.Errorf("created_at = %v", c["created_at"])
	}
	alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK)
	u := alice.Put(t, base+"/"+id, url.Values{"name": {"renamed"}, "total_budget_amount_local_micro": {"500000000"},
		"entity_status": {"ACTIVE"}, "purchase_order_number": {"PO-1"}}).Status(t, http.StatusOK).Data(t)
	if u["name"] != "renamed" || u["total_budget_amount_local_micro"] != float64(500000000) || u["purchase_order_number"] != "PO-1" ||
		u["daily_budget_amount_local_micro"] != float64(140000000) {
		t.Errorf("updated = %v", u)
	}
	d := alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
	if d["deleted"] != true || d["servable"] != nil {
		t.Errorf("deleted = %v", d)
	}
	alice.Delete(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")
	alice.Get(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")
	alice.Put(t, base+"/"+id, url.Values{"name": {"x"}}).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")
	if g := alice.Get(t, base+"/"+id, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t); g["deleted"] != true {
		t.Errorf("with_deleted get = %v", g)
	}
	h := history(t, s, id)
	wantChanges := []struct {
		change string
		attrs  []string
	}{
		{"CREATE", []string{"name", "daily_budget_amount_local_micro", "entity_status"}},
		{"UPDATE", []string{"name", "total_budget_amount_local_micro", "entity_status", "purchase_order_number"}},
		{"DELETE", []string{"deleted"}},
	}
	if len(h) != len(wantChanges) {
		t.Fatalf("history = %+v, want %d entries", h, len(wantChanges))
	}
	for i, w := range wantChanges {
		if h[i].ChangeType != w.change || len(h[i].Changes) < len(w.attrs) {
			t.Errorf("entry %d = %+v, want %s", i, h[i], w.change)
		}
		for _, a := range w.attrs {
			if _, ok := h[i].Changes[a]; !ok {
				t.Errorf("entry %d (%s) lacks change of %s: %v", i, w.change, a, h[i].Changes)
			}
		}
	}
	if len(h[1].Changes) != 4 || h[1].Changes["entity_status"]["old"] != "PAUSED" {
		t.Errorf("update changes = %v, want exactly the 4 attributes sent", h[1].Changes)
	}
}

// TestCreateCampaignRejects: every bad input is a 400 (or the funding
// instrument's 404) naming the parameter, and nothing is created.
func TestCreateCampaignRejects(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	bobsFI := factory.FundingInstrument(t, s.DB, bob.Account(t).ID)
	cancelled := factory.FundingInstrument(t, s.DB, acct.ID)
	s.Exec(t, `UPDATE funding_instruments SET cancelled = true WHERE id = $1`, cancelled)
	deletedFI := factory.FundingInstrument(t, s.DB, acct.ID)
	s.Exec(t, `UPDATE funding_instruments SET deleted = true WHERE id = $1`, deletedFI)
	minimal := url.Values{"funding_instrument_id": {fi}, "name": {"c"}}
	valid := func(kv ...string) url.Values { return adstest.With(minimal, kv...) }
	tests := []struct {
		name   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"missing funding instrument", valid("funding_instrument_id", ""), 400, "MISSING_PARAMETER", "funding_instrument_id"},
		{"missing name", valid("name", ""), 400, "MISSING_PARAMETER", "name"},
		{"empty name", url.Values{"funding_instrument_id": {fi}, "name": {""}}, 400, "INVALID_PARAMETER", "name"},
		{"name too long", valid("name", strings.Repeat("n", 256)), 400, "INVALID_PARAMETER", "name"},
		{"unknown budget optimization", valid("budget_optimization", "ACCOUNT"), 400, "INVALID_PARAMETER", "budget_optimization"},
		{"unknown entity status", valid("entity_status", "RUNNING"), 400, "INVALID_PARAMETER", "entity_status"},
		{"daily budget not a number", valid("daily_budget_amount_local_micro", "ten"), 400, "INVALID_PARAMETER", "daily_budget_amount_local_micro"},
		{"daily budget zero", valid("daily_budget_amount_local_micro", "0"), 400, "INVALID_PARAMETER", "daily_budget_amount_local_micro"},
		{"total budget negative", valid("total_budget_amount_local_micro", "-5"), 400, "INVALID_PARAMETER", "total_budget_amount_local_micro"},
		{"daily above total", valid("daily_budget_amount_local_micro", "200000", "total_budget_amount_local_micro", "100000"), 400, "INVALID_PARAMETER", "daily_budget_amount_local_micro"},
		{"purchase order too long", valid("purchase_order_number", strings.Repeat("9", 51)), 400, "INVALID_PARAMETER", "purchase_order_number"},
		{"standard delivery not boolean", valid("standard_delivery", "yes"), 400, "INVALID_PARAMETER", "standard_delivery"},
		{"unknown parameter", valid("frequency_cap", "3"), 400, "INVALID_PARAMETER", "frequency_cap"},
		{"missing funding instrument id", valid("funding_instrument_id", "nosuchfi"), 404, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id"},
		{"another account's funding instrument", valid("funding_instrument_id", bobsFI), 404, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id"},
		{"deleted funding instrument", valid("funding_instrument_id", deletedFI), 404, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id"},
		{"cancelled funding instrument", valid("funding_instrument_id", cancelled), 400, "INVALID_FUNDING_INSTRUMENT", "funding_instrument_id"},
	}
	base := "/12/accounts/" + acct.ID + "/campaigns"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alice.Post(t, base, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	// another account's funding instrument and a missing one answer alike
	a := alice.Post(t, base, valid("funding_instrument_id", bobsFI))
	b := alice.Post(t, base, valid("funding_instrument_id", "nosuchfi"))
	if strings.ReplaceAll(a.Raw, bobsFI, "ID") != strings.ReplaceAll(b.Raw, "nosuchfi", "ID") {
		t.Errorf("answers differ:\n%s\n%s", a.Raw, b.Raw)
	}
	all := alice.Get(t, base, url.Values{"with_deleted": {"true"}, "with_draft": {"true"}}).Status(t, http.StatusOK).List(t)
	if len(all) != 0 {
		t.Fatalf("refused creates left %d campaigns", len(all))
	}
	s.ReadOnlyUser(t, "reader").Post(t, base, valid()).Fails(t, http.StatusForbidden, "READONLY_CLIENT_APPLICATION", "")
}

// TestUpdateCampaignRejects: the daily budget stays at most the total,
// checked against the stored values; a PUT takes no DRAFT status and no
// funding instrument; another account's campaign is not found. Refused
// updates change nothing and write no history.
func TestUpdateCampaignRejects(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	bobs := bob.Account(t)
	bobsCampaign := factory.Campaign(t, s.DB, bobs.ID, factory.FundingInstrument(t, s.DB, bobs.ID))
	base := "/12/accounts/" + acct.ID + "/campaigns"
	c := alice.Post(t, base, url.Values{"funding_instrument_id": {factory.FundingInstrument(t, s.DB, acct.ID)}, "name": {"c"},
		"daily_budget_amount_local_micro": {"1000000"}, "total_budget_amount_local_micro": {"10000000"}}).Status(t, http.StatusOK).Data(t)
	id := c["id"].(string)
	tests := []struct {
		name   string
		path   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"daily above stored total", id, url.Values{"daily_budget_amount_local_micro": {"10010000"}}, 400, "INVALID_PARAMETER", "daily_budget_amount_local_micro"},
		{"total below stored daily", id, url.Values{"total_budget_amount_local_micro": {"990000"}}, 400, "INVALID_PARAMETER", "total_budget_amount_local_micro"},
		{"both, daily above total", id, url.Values{"daily_budget_amount_local_micro": {"500000"}, "total_budget_amount_local_micro": {"400000"}}, 400, "INVALID_PARAMETER", "daily_budget_amount_local_micro"},
		{"back to draft", id, url.Values{"entity_status": {"DRAFT"}}, 400, "INVALID_PARAMETER", "entity_status"},
		{"funding instrument", id, url.Values{"funding_instrument_id": {"x"}}, 400, "INVALID_PARAMETER", "funding_instrument_id"},
		{"name too long", id, url.Values{"name": {strings.Repeat("n", 256)}}, 400, "INVALID_PARAMETER", "name"},
		{"another account's campaign", bobsCampaign, url.Values{"name": {"mine"}}, 404, "CAMPAIGN_NOT_FOUND", "campaign_id"},
		{"missing campaign", "nosuchcampaign", url.Values{"name": {"mine"}}, 404, "CAMPAIGN_NOT_FOUND", "campaign_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alice.Put(t, base+"/"+tt.path, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	alice.Delete(t, base+"/"+bobsCampaign, nil).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")
	alice.Get(t, base+"/"+bobsCampaign, nil).Fails(t, http.StatusNotFound, "CAMPAIGN_NOT_FOUND", "campaign_id")
	got := alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
	if got["daily_budget_amount_local_micro"] != float64(1000000) || got["total_budget_amount_local_micro"] != float64(10000000) || got["name"] != "c" {
		t.Fatalf("campaign changed by refused updates: %v", got)
	}
	if h := history(t, s, id); len(h) != 1 {
		t.Fatalf("history has %d entries, want the create only", len(h))
	}
	if h := history(t, s, bobsCampaign); len(h) != 0 {
		t.Fatalf("another account's campaign got history: %+v", h)
	}
	// a PUT with no parameter changes nothing and records nothing
	alice.Put(t, base+"/"+id, nil).Status(t, http.StatusOK)
	if h := history(t, s, id); len(h) != 1 {
		t.Fatalf("empty PUT wrote history: %d entries", len(h))
	}
}

// TestListCampaignsParameters: filters, sorting and the list parameter
// errors.
func TestListCampaignsParameters(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	fi1, fi2 := factory.FundingInstrument(t, s.DB, acct.ID), factory.FundingInstrument(t, s.DB, acct.ID)
	base := "/12/accounts/" + acct.ID + "/campaigns"
	mk := func(name, fi, status string) string {
		return alice.Post(t, base, url.Values{"funding_instrument_id": {fi}, "name": {name}, "entity_status": {status}}).
			Status(t, http.StatusOK).Data(t)["id"].(string)
	}
	apple, banana, cherry, draft := mk("Apple", fi1, "ACTIVE"), mk("banana", fi2, "PAUSED"), mk("apricot", fi2, "ACTIVE"), mk("Avocado", fi1, "DRAFT")
	tooMany := strings.TrimSuffix(strings.Repeat("a1,", 201), ",")
	tests := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"default created_at asc, no drafts", nil, []string{apple, banana, cherry}},
		{"with drafts", url.Values{"with_draft": {"true"}}, []string{apple, banana, cherry, draft}},
		{"q prefix any case", url.Values{"q": {"AP"}}, []string{apple, cherry}},
		{"funding instrument ids", url.Values{"funding_instrument_ids": {fi2}}, []string{banana, cherry}},
		{"campaign ids", url.Values{"campaign_ids": {cherry + "," + apple}}, []string{apple, cherry}},
		{"sort by name desc", url.Values{"sort_by": {"name-desc"}}, []string{banana, cherry, apple}},
		{"sort by entity status", url.Values{"sort_by": {"entity_status-asc"}}, []string{apple, cherry, banana}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range alice.Get(t, base, tt.params).Status(t, http.StatusOK).List(t) {
				got = append(got, c["id"].(string))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	if r := alice.Get(t, base, url.Values{"with_total_count": {"true"}}).Status(t, http.StatusOK); r.Body["total_count"] != float64(3) {
		t.Errorf("total_count = %v, want 3", r.Body["total_count"])
	}
	bad := []struct {
		name   string
		params url.Values
		code   string
		param  string
	}{
		{"unknown sort attribute", url.Values{"sort_by": {"bogus-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"nullable sort attribute", url.Values{"sort_by": {"daily_budget_amount_local_micro-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"sort direction", url.Values{"sort_by": {"name-up"}}, "INVALID_PARAMETER", "sort_by"},
		{"count zero", url.Values{"count": {"0"}}, "INVALID_PARAMETER", "count"},
		{"count too big", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"count not a number", url.Values{"count": {"many"}}, "INVALID_PARAMETER", "count"},
		{"too many campaign ids", url.Values{"campaign_ids": {tooMany}}, "INVALID_PARAMETER", "campaign_ids"},
		{"too many funding instrument ids", url.Values{"funding_instrument_ids": {tooMany}}, "INVALID_PARAMETER", "funding_instrument_ids"},
		{"q too long", url.Values{"q": {strings.Repeat("q", 256)}}, "INVALID_PARAMETER", "q"},
		{"with_draft not boolean", url.Values{"with_draft": {"1"}}, "INVALID_PARAMETER", "with_draft"},
		{"tampered cursor", url.Values{"cursor": {"abc.def"}}, "INVALID_PARAMETER", "cursor"},
		{"cursor with total count", url.Values{"cursor": {"abc.def"}, "with_total_count": {"true"}}, "EXCLUSIVE_PARAMETERS", "cursor"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			alice.Get(t, base, tt.params).Fails(t, http.StatusBadRequest, tt.code, tt.param)
		})
	}
	next := alice.Get(t, base, url.Values{"count": {"1"}}).Status(t, http.StatusOK).NextCursor()
	alice.Get(t, base, url.Values{"cursor": {next}, "q": {"a"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
}

// TestListCampaignsPagesUnderConcurrentInserts walks the list in small
// pages while campaigns are created between (and during) page requests:
// every campaign that existed before the walk is seen exactly once, and no
// campaign twice, whatever the order.
func TestListCampaignsPagesUnderConcurrentInserts(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	before := map[string]bool{}
	for range 30 {
		before[factory.Campaign(t, s.DB, acct.ID, fi)] = true
	}
	base := "/12/accounts/" + acct.ID + "/campaigns"
	for _, sortBy := range []string{"created_at-asc", "created_at-desc", "name-asc", "name-desc"} {
		t.Run(sortBy, func(t *testing.T) {
			seen := map[string]int{}
			params := url.Values{"count": {"4"}, "sort_by": {sortBy}}
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("the walk does not end")
				}
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { // an insert racing the page request
					defer wg.Done()
					factory.Campaign(t, s.DB, acct.ID, fi)
				}()
				r := alice.Get(t, base, params).Status(t, http.StatusOK)
				wg.Wait()
				factory.Campaign(t, s.DB, acct.ID, fi) // and one between pages
				for _, c := range r.List(t) {
					seen[c["id"].(string)]++
				}
				next := r.NextCursor()
				if next == "" {
					break
				}
				params.Set("cursor", next)
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("campaign %s seen %d times", id, n)
				}
			}
			for id := range before {
				if seen[id] != 1 {
					t.Errorf("campaign %s seen %d times, want once", id, seen[id])
				}
			}
		})
	}
}

// TestCampaignsTenancy: another user's account answers like a missing
// one (403 ACCOUNT_NOT_FOUND), on every campaigns route.
func TestCampaignsTenancy(t *testing.T) {
	s := adstest.New(t)
	alice, mallory := s.User(t, "alice"), s.User(t, "mallory")
	acct := alice.Account(t)
	_, campaign, _ := factory.AdsChain(t, s.DB, acct.ID)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	calls := []struct {
		method, path string
		params       url.Values
	}{
		{http.MethodGet, "/campaigns", nil},
		{http.MethodGet, "/campaigns/" + campaign, nil},
		{http.MethodPost, "/campaigns", url.Values{"funding_instrument_id": {fi}, "name": {"x"}}},
		{http.MethodPut, "/campaigns/" + campaign, url.Values{"name": {"x"}}},
		{http.MethodDelete, "/campaigns/" + campaign, nil},
	}
	for _, c := range calls {
		t.Run(c.method+c.path, func(t *testing.T) {
			theirs := mallory.Do(t, c.method, "/12/accounts/"+acct.ID+c.path, c.params)
			theirs.Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
			none := mallory.Do(t, c.method, "/12/accounts/nosuchaccount"+c.path, c.params)
			if strings.ReplaceAll(theirs.Raw, acct.ID, "ID") != strings.ReplaceAll(none.Raw, "nosuchaccount", "ID") {
				t.Errorf("answers differ:\n%s\n%s", theirs.Raw, none.Raw)
			}
		})
	}
	if g := alice.Get(t, "/12/accounts/"+acct.ID+"/campaigns/"+campaign, nil).Status(t, http.StatusOK).Data(t); g["name"] == "x" {
		t.Fatal("mallory's update went through")
	}
}

// updatedAt reads a campaign's stored updated_at exactly.
func updatedAt(t *testing.T, s *adstest.Server, id string) string {
	t.Helper()
	var at string
	s.Scan(t, `SELECT updated_at::text FROM campaigns WHERE id = $1`, []any{id}, &at)
	return at
}

// TestUpdateCampaignWithoutChangeWritesNothing: a PUT whose values are
// the stored ones answers the campaign as stored, keeps updated_at and
// records no history entry; a real change after it still does.
func TestUpdateCampaignWithoutChangeWritesNothing(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	base := "/12/accounts/" + acct.ID + "/campaigns"
	c := alice.Post(t, base, url.Values{"funding_instrument_id": {factory.FundingInstrument(t, s.DB, acct.ID)}, "name": {"same"},
		"daily_budget_amount_local_micro": {"1000000"}, "total_budget_amount_local_micro": {"10000000"}, "entity_status": {"PAUSED"},
		"purchase_order_number": {"PO-1"}, "standard_delivery": {"true"}}).Status(t, http.StatusOK).Data(t)
	id := c["id"].(string)
	stamp := updatedAt(t, s, id)
	for _, params := range []url.Values{
		{"name": {"same"}},
		{"name": {"same"}, "daily_budget_amount_local_micro": {"1000000"}, "total_budget_amount_local_micro": {"10000000"},
			"entity_status": {"paused"}, "purchase_order_number": {"PO-1"}, "standard_delivery": {"TRUE"}, "budget_optimization": {"LINE_ITEM"}},
	} {
		got := alice.Put(t, base+"/"+id, params).Status(t, http.StatusOK).Data(t)
		if got["name"] != "same" || got["updated_at"] != c["updated_at"] || got["entity_status"] != "PAUSED" {
			t.Errorf("PUT %v answered %v", params, got)
		}
		if at := updatedAt(t, s, id); at != stamp {
			t.Errorf("PUT %v moved updated_at from %s to %s", params, stamp, at)
		}
		if h := history(t, s, id); len(h) != 1 {
			t.Errorf("PUT %v wrote history: %+v", params, h)
		}
	}
	alice.Put(t, base+"/"+id, url.Values{"name": {"same"}, "purchase_order_number": {"PO-2"}}).Status(t, http.StatusOK)
	h := history(t, s, id)
	if len(h) != 2 || len(h[1].Changes) != 1 || h[1].Changes["purchase_order_number"]["new"] != "PO-2" {
		t.Fatalf("history after a real change: %+v", h)
	}
}

// TestBudgetOptimizationSwitchKeepsLineItemBudgets: a campaign whose
// non-deleted line items carry a daily budget or standard_delivery cannot
// switch to CAMPAIGN optimization (400 INVALID_PARAMETER on
// budget_optimization, nothing changed, no history); once those line items
// are gone it can.
func TestBudgetOptimizationSwitchKeepsLineItemBudgets(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	base := "/12/accounts/" + acct.ID + "/campaigns"
	lineItems := "/12/accounts/" + acct.ID + "/line_items"
	newCampaign := func() string {
		return alice.Post(t, base, url.Values{"funding_instrument_id": {fi}, "name": {"c"}}).Status(t, http.StatusOK).Data(t)["id"].(string)
	}
	newLineItem := func(campaign string, extra url.Values) string {
		v := url.Values{"campaign_id": {campaign}, "objective": {"ENGAGEMENTS"}, "product_type": {"PROMOTED_TWEETS"}, "placements": {"ALL_ON_SERVICE"}}
		for k, vs := range extra {
			v[k] = vs
		}
		return alice.Post(t, lineItems, v).Status(t, http.StatusOK).Data(t)["id"].(string)
	}
	for _, tc := range []struct {
		name  string
		extra url.Values
	}{
		{"daily budget", url.Values{"daily_budget_amount_local_micro": {"10000000"}}},
		{"standard delivery", url.Values{"standard_delivery": {"false"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			camp := newCampaign()
			newLineItem(camp, nil) // a line item without either is no obstacle
			li := newLineItem(camp, tc.extra)
			stamp := updatedAt(t, s, camp)
			alice.Put(t, base+"/"+camp, url.Values{"budget_optimization": {"CAMPAIGN"}, "name": {"switched"}}).
				Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "budget_optimization")
			got := alice.Get(t, base+"/"+camp, nil).Status(t, http.StatusOK).Data(t)
			if got["budget_optimization"] != "LINE_ITEM" || got["name"] != "c" || updatedAt(t, s, camp) != stamp {
				t.Fatalf("refused switch changed the campaign: %v", got)
			}
			if h := history(t, s, camp); len(h) != 1 {
				t.Fatalf("refused switch wrote history: %+v", h)
			}
			// a deleted line item does not hold the campaign back
			alice.Delete(t, lineItems+"/"+li, nil).Status(t, http.StatusOK)
			got = alice.Put(t, base+"/"+camp, url.Values{"budget_optimization": {"CAMPAIGN"}}).Status(t, http.StatusOK).Data(t)
			if got["budget_optimization"] != "CAMPAIGN" {
				t.Fatalf("switch after the delete: %v", got)
			}
		})
	}
}
