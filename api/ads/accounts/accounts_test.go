package accounts_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// ids are the ids of a list reply, in order.
func ids(t *testing.T, r adstest.Reply) []string {
	t.Helper()
	var out []string
	for _, it := range r.List(t) {
		out = append(out, it["id"].(string))
	}
	return out
}

func TestAccountsReadAndUpdate(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	first := factory.AdAccount(t, s.DB, &factory.AdAccountOpts{Owner: &alice.User, Name: "Zebra Shoes"})
	second := factory.AdAccount(t, s.DB, &factory.AdAccountOpts{Owner: &alice.User, Name: "zeta_% books"})
	third := factory.AdAccount(t, s.DB, &factory.AdAccountOpts{Owner: &alice.User, Name: "Apple Farm"})
	granted := factory.AdAccount(t, s.DB, &factory.AdAccountOpts{Name: "Granted Co"})
	if err := s.DB.GrantAdAccount(t.Context(), granted.ID, alice.User.ID); err != nil {
		t.Fatal(err)
	}
	factory.AdAccount(t, s.DB, &factory.AdAccountOpts{Name: "Zed not alice's"})

	lists := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"default order created_at asc", nil, []string{first.ID, second.ID, third.ID, granted.ID}},
		{"name desc", url.Values{"sort_by": {"name-desc"}}, []string{second.ID, first.ID, granted.ID, third.ID}},
		{"q prefix any case", url.Values{"q": {"ZE"}}, []string{first.ID, second.ID}},
		{"q wildcards are literal", url.Values{"q": {"zeta_%"}}, []string{second.ID}},
		{"q underscore literal", url.Values{"q": {"z_"}}, nil},
		{"account_ids", url.Values{"account_ids": {third.ID + "," + first.ID + ",zzzzzz"}}, []string{first.ID, third.ID}},
		{"updated_at desc", url.Values{"sort_by": {"updated_at-desc"}, "count": {"1"}}, []string{granted.ID}},
	}
	for _, tc := range lists {
		r := alice.Get(t, "/12/accounts", tc.params).Status(t, http.StatusOK)
		if got := ids(t, r); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if _, has := r.Body["total_count"]; has {
			t.Errorf("%s: total_count without with_total_count", tc.name)
		}
	}

	r := alice.Get(t, "/12/accounts", url.Values{"with_total_count": {"true"}, "count": {"2"}}).Status(t, http.StatusOK)
	if r.Body["total_count"] != float64(4) || r.NextCursor() == "" {
		t.Errorf("with_total_count: %s", r.Raw)
	}

	d := alice.Get(t, "/12/accounts/"+first.ID, nil).Status(t, http.StatusOK).Data(t)
	want := map[string]any{"id": first.ID, "name": "Zebra Shoes", "business_id": first.ID, "business_name": "Zebra Shoes Business",
		"timezone": "America/New_York", "timezone_switch_at": nil, "approval_status": "ACCEPTED", "industry_type": "OTHER", "deleted": false}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("account %s = %v, want %v", k, d[k], v)
		}
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if s, _ := d[k].(string); len(s) != len("2006-01-02T15:04:05Z") || !strings.HasSuffix(s, "Z") {
			t.Errorf("account %s = %v", k, d[k])
		}
	}

	r = alice.Put(t, "/12/accounts/"+first.ID, url.Values{"name": {"Zebra Boots"}, "industry_type": {"retail"}}).Status(t, http.StatusOK)
	if d := r.Data(t); d["name"] != "Zebra Boots" || d["industry_type"] != "RETAIL" {
		t.Errorf("PUT: %s", r.Raw)
	}
	if p := r.Body["request"].(map[string]any)["params"].(map[string]any); p["industry_type"] != "RETAIL" || p["account_id"] != first.ID {
		t.Errorf("PUT request.params: %v", p)
	}
	r = alice.Put(t, "/12/accounts/"+first.ID, url.Values{"industry_type": {"TRAVEL"}}).Status(t, http.StatusOK)
	if d := r.Data(t); d["name"] != "Zebra Boots" || d["industry_type"] != "TRAVEL" {
		t.Errorf("PUT industry_type only: %s", r.Raw)
	}
	// A granted user may use the account like its owner.
	alice.Put(t, "/12/accounts/"+granted.ID, url.Values{"name": {"Granted Renamed"}}).Status(t, http.StatusOK)
}

func TestAccountsBadInput(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	factory.FundingInstrument(t, s.DB, acct.ID)
	factory.FundingInstrument(t, s.DB, acct.ID)
	base := "/12/accounts/" + acct.ID
	tooMany := strings.TrimSuffix(strings.Repeat("abc,", 201), ",")
	cursor := alice.Get(t, "/12/accounts/"+acct.ID+"/funding_instruments", url.Values{"count": {"1"}}).Status(t, http.StatusOK).NextCursor()
	if cursor == "" {
		t.Fatal("no cursor")
	}
	hist := func(over map[string]string) url.Values {
		v := url.Values{"entity_type": {"CAMPAIGN"}, "entity_id": {"abc"}, "start_time": {"2024-01-01T00:00:00Z"}, "end_time": {"2024-01-02T00:00:00Z"}}
		for k, val := range over {
			if val == "" {
				v.Del(k)
			} else {
				v.Set(k, val)
			}
		}
		return v
	}
	tests := []struct {
		name, method, path string
		params             url.Values
		code, param        string
	}{
		{"count zero", "GET", "/12/accounts", url.Values{"count": {"0"}}, "INVALID_PARAMETER", "count"},
		{"count too big", "GET", "/12/accounts", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"count not a number", "GET", "/12/accounts", url.Values{"count": {"ten"}}, "INVALID_PARAMETER", "count"},
		{"sort_by unknown attribute", "GET", "/12/accounts", url.Values{"sort_by": {"business_id-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"sort_by no direction", "GET", "/12/accounts", url.Values{"sort_by": {"name"}}, "INVALID_PARAMETER", "sort_by"},
		{"total count with cursor", "GET", "/12/accounts", url.Values{"with_total_count": {"true"}, "cursor": {"x"}}, "EXCLUSIVE_PARAMETERS", "cursor"},
		{"too many account ids", "GET", "/12/accounts", url.Values{"account_ids": {tooMany}}, "INVALID_PARAMETER", "account_ids"},
		{"bad account id", "GET", "/12/accounts", url.Values{"account_ids": {"a b"}}, "INVALID_PARAMETER", "account_ids"},
		{"empty q", "GET", "/12/accounts", url.Values{"q": {""}}, "INVALID_PARAMETER", "q"},
		{"long q", "GET", "/12/accounts", url.Values{"q": {strings.Repeat("a", 256)}}, "INVALID_PARAMETER", "q"},
		{"tampered cursor", "GET", "/12/accounts", url.Values{"cursor": {"eyJ2IjoiMSJ9.AAAA"}}, "INVALID_PARAMETER", "cursor"},
		{"cursor of another query", "GET", "/12/accounts", url.Values{"cursor": {cursor}}, "INVALID_PARAMETER", "cursor"},
		{"with_deleted not boolean", "GET", "/12/accounts", url.Values{"with_deleted": {"yes"}}, "INVALID_PARAMETER", "with_deleted"},
		{"unknown parameter", "GET", "/12/accounts", url.Values{"name": {"x"}}, "INVALID_PARAMETER", "name"},
		{"get with_deleted not boolean", "GET", base, url.Values{"with_deleted": {"1"}}, "INVALID_PARAMETER", "with_deleted"},
		{"put nothing", "PUT", base, nil, "MISSING_PARAMETER", "name"},
		{"put unknown industry", "PUT", base, url.Values{"industry_type": {"SPACE"}}, "INVALID_PARAMETER", "industry_type"},
		{"put empty name", "PUT", base, url.Values{"name": {""}}, "INVALID_PARAMETER", "name"},
		{"put blank name", "PUT", base, url.Values{"name": {"   "}}, "INVALID_PARAMETER", "name"},
		{"put long name", "PUT", base, url.Values{"name": {strings.Repeat("n", 256)}}, "INVALID_PARAMETER", "name"},
		{"put unknown parameter", "PUT", base, url.Values{"name": {"x"}, "timezone": {"UTC"}}, "INVALID_PARAMETER", "timezone"},
		{"apps count", "GET", base + "/account_apps", url.Values{"count": {"-1"}}, "INVALID_PARAMETER", "count"},
		{"apps sort_by", "GET", base + "/account_apps", url.Values{"sort_by": {"deep_link_pattern-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"apps total with cursor", "GET", base + "/account_apps", url.Values{"with_total_count": {"true"}, "cursor": {cursor}}, "EXCLUSIVE_PARAMETERS", "cursor"},
		{"features unknown key", "GET", base + "/features", url.Values{"feature_keys": {"CATALOGS,FLYING"}}, "INVALID_PARAMETER", "feature_keys"},
		{"funding too many ids", "GET", base + "/funding_instruments", url.Values{"funding_instrument_ids": {tooMany}}, "INVALID_PARAMETER", "funding_instrument_ids"},
		{"funding sort_by nullable", "GET", base + "/funding_instruments", url.Values{"sort_by": {"end_time-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"funding count", "GET", base + "/funding_instruments", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"funding tampered cursor", "GET", base + "/funding_instruments", url.Values{"cursor": {cursor + "x"}}, "INVALID_PARAMETER", "cursor"},
		{"funding cursor other sort", "GET", base + "/funding_instruments", url.Values{"cursor": {cursor}, "sort_by": {"name-asc"}}, "INVALID_PARAMETER", "cursor"},
		{"funding get with_deleted", "GET", base + "/funding_instruments/abc", url.Values{"with_deleted": {"no"}}, "INVALID_PARAMETER", "with_deleted"},
		{"history no entity_type", "GET", base + "/account_history", hist(map[string]string{"entity_type": ""}), "MISSING_PARAMETER", "entity_type"},
		{"history bad entity_type", "GET", base + "/account_history", hist(map[string]string{"entity_type": "ACCOUNT"}), "INVALID_PARAMETER", "entity_type"},
		{"history no entity_id", "GET", base + "/account_history", hist(map[string]string{"entity_id": ""}), "MISSING_PARAMETER", "entity_id"},
		{"history no start_time", "GET", base + "/account_history", hist(map[string]string{"start_time": ""}), "MISSING_PARAMETER", "start_time"},
		{"history no end_time", "GET", base + "/account_history", hist(map[string]string{"end_time": ""}), "MISSING_PARAMETER", "end_time"},
		{"history start minutes", "GET", base + "/account_history", hist(map[string]string{"start_time": "2024-01-01T00:30:00Z"}), "INVALID_PARAMETER", "start_time"},
		{"history end seconds", "GET", base + "/account_history", hist(map[string]string{"end_time": "2024-01-02T00:00:01Z"}), "INVALID_PARAMETER", "end_time"},
		{"history end fraction", "GET", base + "/account_history", hist(map[string]string{"end_time": "2024-01-02T00:00:00.5Z"}), "INVALID_PARAMETER", "end_time"},
		{"history start not a time", "GET", base + "/account_history", hist(map[string]string{"start_time": "yesterday"}), "INVALID_PARAMETER", "start_time"},
		{"history end before start", "GET", base + "/account_history", hist(map[string]string{"end_time": "2023-12-31T00:00:00Z"}), "INVALID_PARAMETER", "end_time"},
		{"history end equals start", "GET", base + "/account_history", hist(map[string]string{"end_time": "2024-01-01T00:00:00Z"}), "INVALID_PARAMETER", "end_time"},
		{"history user_id not long", "GET", base + "/account_history", hist(map[string]string{"user_id": "bob"}), "INVALID_PARAMETER", "user_id"},
		{"history count", "GET", base + "/account_history", hist(map[string]string{"count": "0"}), "INVALID_PARAMETER", "count"},
		{"history no sort_by", "GET", base + "/account_history", hist(map[string]string{"sort_by": "change_time-asc"}), "INVALID_PARAMETER", "sort_by"},
		{"history no total count", "GET", base + "/account_history", hist(map[string]string{"with_total_count": "true"}), "INVALID_PARAMETER", "with_total_count"},
		{"history tampered cursor", "GET", base + "/account_history", hist(map[string]string{"cursor": "abc.def"}), "INVALID_PARAMETER", "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alice.Do(t, tc.method, tc.path, tc.params).Fails(t, http.StatusBadRequest, tc.code, tc.param)
		})
	}
	// Nothing changed by the refused PUTs.
	d := alice.Get(t, base, nil).Status(t, http.StatusOK).Data(t)
	if d["name"] != acct.Name || d["industry_type"] != "OTHER" || d["updated_at"] != adsTime(acct) {
		t.Errorf("refused PUTs changed the account: %v", d)
	}
	// All errors of a request are reported at once.
	r := alice.Get(t, base+"/account_history", url.Values{"entity_type": {"X"}, "start_time": {"2024-01-01T00:10:00Z"}})
	if errs, _ := r.Body["errors"].([]any); len(errs) != 4 {
		t.Errorf("history errors: %s", r.Raw)
	}
}

func adsTime(a storage.AdAccount) string { return a.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z") }

// TestAccountsPaginationConcurrentInserts walks every page of GET
// /12/accounts while accounts are being created: each account that exists
// for the whole walk is seen exactly once, and no account twice.
func TestAccountsPaginationConcurrentInserts(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	const initial = 23
	want := map[string]bool{}
	for i := range initial {
		a := factory.AdAccount(t, s.DB, &factory.AdAccountOpts{Owner: &alice.User, Name: fmt.Sprintf("acct %02d", (i*7)%initial)})
		want[a.ID] = true
	}
	for _, sortBy := range []string{"", "name-asc", "created_at-desc"} {
		t.Run("sort "+sortBy, func(t *testing.T) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var insertErr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.DB.CreateAdAccount(context.Background(), alice.User.ID, fmt.Sprintf("acct %02d new %d", i%initial, i), false); err != nil {
						insertErr = err
						return
					}
				}
			}()
			seen := map[string]int{}
			params := url.Values{"count": {"4"}}
			if sortBy != "" {
				params.Set("sort_by", sortBy)
			}
			for pages := 0; ; pages++ {
				if pages > 200 {
					t.Fatal("too many pages")
				}
				r := alice.Get(t, "/12/accounts", params).Status(t, http.StatusOK)
				for _, id := range ids(t, r) {
					seen[id]++
				}
				next := r.NextCursor()
				if next == "" {
					break
				}
				params.Set("cursor", next)
				params.Set("count", fmt.Sprint(3+pages%3))
			}
			close(stop)
			wg.Wait()
			if insertErr != nil {
				t.Fatal(insertErr)
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("account %s seen %d times", id, n)
				}
			}
			for id := range want {
				if seen[id] != 1 {
					t.Errorf("account %s seen %d times, want once", id, seen[id])
				}
			}
		})
	}
}

// TestAccountsTenancy: another user's account answers exactly like an
// account that does not exist, on every route.
func TestAccountsTenancy(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	bob := s.User(t, "bob")
	bobs := bob.Account(t)
	bobFunding := factory.FundingInstrument(t, s.DB, bobs.ID)
	bobSandbox := bob.Sandbox().Account(t)
	const missing = "zzzzzzzzz"
	hist := url.Values{"entity_type": {"CAMPAIGN"}, "entity_id": {"abc"}, "start_time": {"2024-01-01T00:00:00Z"}, "end_time": {"2024-01-02T00:00:00Z"}}
	routes := []struct {
		method, suffix string
		params         url.Values
		sandbox        bool
	}{
		{"GET", "", nil, false},
		{"GET", "", url.Values{"with_deleted": {"true"}}, false},
		{"PUT", "", url.Values{"name": {"mine now"}}, false},
		{"DELETE", "", nil, true},
		{"GET", "/account_apps", nil, false},
		{"GET", "/features", nil, false},
		{"GET", "/funding_instruments", nil, false},
		{"GET", "/funding_instruments/" + bobFunding, nil, false},
		{"GET", "/account_history", hist, false},
	}
	for _, rt := range routes {
		caller, other := alice, bobs.ID
		if rt.sandbox {
			caller, other = alice.Sandbox(), bobSandbox.ID
		}
		theirs := caller.Do(t, rt.method, "/12/accounts/"+other+rt.suffix, rt.params)
		none := caller.Do(t, rt.method, "/12/accounts/"+missing+rt.suffix, rt.params)
		theirs.Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
		none.Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
		if a, b := strings.ReplaceAll(theirs.Raw, other, "ID"), strings.ReplaceAll(none.Raw, missing, "ID"); a != b {
			t.Errorf("%s %s: another user's account answers\n%s\nbut a missing one\n%s", rt.method, rt.suffix, a, b)
		}
	}
	r := alice.Get(t, "/12/accounts", url.Values{"account_ids": {bobs.ID}}).Status(t, http.StatusOK)
	if len(r.List(t)) != 0 {
		t.Errorf("another user's account listed: %s", r.Raw)
	}
	if d := bob.Get(t, "/12/accounts/"+bobs.ID, nil).Status(t, http.StatusOK).Data(t); d["name"] != bobs.Name {
		t.Errorf("alice's refused PUT changed bob's account: %v", d)
	}
	// Another account's funding instrument is as missing as a made-up one.
	mine := alice.Account(t)
	alice.Get(t, "/12/accounts/"+mine.ID+"/funding_instruments/"+bobFunding, nil).
		Fails(t, http.StatusNotFound, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id")
}

// TestAccountsSandbox: accounts are created and deleted in the sandbox
// only, and sandbox and production accounts never meet.
func TestAccountsSandbox(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	box := alice.Sandbox()
	prod := alice.Account(t)

	alice.Post(t, "/12/accounts", nil).Fails(t, http.StatusForbidden, "ACTION_NOT_ALLOWED", "")
	alice.Delete(t, "/12/accounts/"+prod.ID, nil).Fails(t, http.StatusForbidden, "ACTION_NOT_ALLOWED", "")
	box.Post(t, "/12/accounts", url.Values{"name": {"x"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "name")

	r := box.Post(t, "/12/accounts", nil).Status(t, http.StatusOK)
	created := r.List(t)
	if len(created) != 1 || r.Body["next_cursor"] != nil {
		t.Fatalf("POST /12/accounts: %s", r.Raw)
	}
	id := created[0]["id"].(string)
	if created[0]["name"] != "Sandbox account" || created[0]["deleted"] != false {
		t.Errorf("created: %v", created[0])
	}
	funding := box.Get(t, "/12/accounts/"+id+"/funding_instruments", nil).Status(t, http.StatusOK).List(t)
	if len(funding) != 1 || funding[0]["entity_status"] != "ACTIVE" || funding[0]["able_to_fund"] != true || funding[0]["account_id"] != id {
		t.Errorf("sandbox account funding: %v", funding)
	}

	if got := ids(t, box.Get(t, "/12/accounts", nil).Status(t, http.StatusOK)); strings.Join(got, ",") != id {
		t.Errorf("sandbox list = %v, want only %s", got, id)
	}
	if got := ids(t, alice.Get(t, "/12/accounts", nil).Status(t, http.StatusOK)); strings.Join(got, ",") != prod.ID {
		t.Errorf("production list = %v, want only %s", got, prod.ID)
	}
	alice.Get(t, "/12/accounts/"+id, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	alice.Get(t, "/12/accounts/"+id+"/funding_instruments", nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	box.Get(t, "/12/accounts/"+prod.ID, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	box.Put(t, "/12/accounts/"+prod.ID, url.Values{"name": {"x"}}).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	box.Delete(t, "/12/accounts/"+prod.ID, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")

	d := box.Delete(t, "/12/accounts/"+id, nil).Status(t, http.StatusOK).Data(t)
	if d["id"] != id || d["deleted"] != true {
		t.Errorf("DELETE: %v", d)
	}
	box.Delete(t, "/12/accounts/"+id, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	box.Get(t, "/12/accounts/"+id, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	box.Put(t, "/12/accounts/"+id, url.Values{"name": {"x"}}).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	if d := box.Get(t, "/12/accounts/"+id, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t); d["deleted"] != true {
		t.Errorf("GET with_deleted: %v", d)
	}
	if got := ids(t, box.Get(t, "/12/accounts", nil).Status(t, http.StatusOK)); len(got) != 0 {
		t.Errorf("deleted account listed: %v", got)
	}
	if got := ids(t, box.Get(t, "/12/accounts", url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK)); strings.Join(got, ",") != id {
		t.Errorf("with_deleted list = %v", got)
	}
	if prod.Sandbox || alice.Get(t, "/12/accounts/"+prod.ID, nil).Status(t, http.StatusOK).Data(t)["deleted"] != false {
		t.Error("production account touched")
	}
}

func TestAccountsReadOnlyToken(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	reader := s.ReadOnlyUser(t, "reader")
	acct := reader.Account(t)
	reader.Put(t, "/12/accounts/"+acct.ID, url.Values{"name": {"changed"}}).Fails(t, http.StatusForbidden, "READONLY_CLIENT_APPLICATION", "")
	reader.Sandbox().Post(t, "/12/accounts", nil).Fails(t, http.StatusForbidden, "READONLY_CLIENT_APPLICATION", "")
	if d := reader.Get(t, "/12/accounts/"+acct.ID, nil).Status(t, http.StatusOK).Data(t); d["name"] != acct.Name {
		t.Errorf("read-only PUT changed the account: %v", d)
	}
	// Bearer (app-only) tokens are refused by every ads endpoint.
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/12/accounts", nil)
	req.Header.Set("Authorization", s.Bearer)
	adstest.Send(t, req).Fails(t, http.StatusForbidden, "UNAUTHORIZED_ACCESS", "")
}
