package accounts_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func TestAccountApps(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	other := alice.Account(t)
	s.Exec(t, `INSERT INTO account_apps (id, account_id, app_store_identifier, os_type, deep_link_pattern, conversion_tracking_enabled, created_at)
		VALUES ('app1', $1, 'com.example.b', 'Android', 'example://', true, now() - interval '2 hours'),
		       ('app2', $1, 'com.example.a', 'iOS', NULL, false, now() - interval '1 hour'),
		       ('app3', $1, 'com.example.c', 'Android', NULL, false, now()),
		       ('app4', $2, 'com.example.d', 'Android', NULL, false, now())`, acct.ID, other.ID)
	s.Exec(t, `UPDATE account_apps SET deleted = true WHERE id = 'app3'`)
	path := "/12/accounts/" + acct.ID + "/account_apps"
	tests := []struct {
		params url.Values
		want   string
	}{
		{nil, "app1,app2"},
		{url.Values{"with_deleted": {"true"}}, "app1,app2,app3"},
		{url.Values{"sort_by": {"app_store_identifier-asc"}, "with_deleted": {"true"}}, "app2,app1,app3"},
		{url.Values{"sort_by": {"created_at-desc"}}, "app2,app1"},
	}
	for _, tc := range tests {
		r := alice.Get(t, path, tc.params).Status(t, http.StatusOK)
		if got := strings.Join(ids(t, r), ","); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.params, got, tc.want)
		}
	}
	r := alice.Get(t, path, url.Values{"count": {"1"}}).Status(t, http.StatusOK)
	app := r.List(t)[0]
	want := map[string]any{"id": "app1", "app_store_identifier": "com.example.b", "os_type": "Android", "deep_link_pattern": "example://",
		"conversion_tracking_enabled": true, "deleted": false}
	for k, v := range want {
		if app[k] != v {
			t.Errorf("app %s = %v, want %v", k, app[k], v)
		}
	}
	r = alice.Get(t, path, url.Values{"count": {"1"}, "cursor": {r.NextCursor()}}).Status(t, http.StatusOK)
	if got := ids(t, r); len(got) != 1 || got[0] != "app2" || r.Body["next_cursor"] != nil || r.List(t)[0]["deep_link_pattern"] != nil {
		t.Errorf("second page: %s", r.Raw)
	}
}

func TestAccountFeatures(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	path := "/12/accounts/" + acct.ID + "/features"
	r := alice.Get(t, path, nil).Status(t, http.StatusOK)
	if items, ok := r.Body["data"].([]any); !ok || len(items) != 0 {
		t.Errorf("no features: %s", r.Raw)
	}
	for _, f := range []string{storage.FeatureCatalogs, storage.FeaturePromotedMediaPolls, "REACH_FREQUENCY_CAP"} {
		if err := s.DB.SetAdAccountFeature(t.Context(), acct.ID, f, true); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		params url.Values
		want   string
	}{
		{nil, "CATALOGS,PROMOTED_MEDIA_POLLS,REACH_FREQUENCY_CAP"},
		{url.Values{"feature_keys": {"catalogs,REACH_AND_FREQUENCY_ANALYTICS"}}, "CATALOGS"},
		{url.Values{"feature_keys": {"CITY_TARGETING"}}, ""},
	}
	for _, tc := range tests {
		r := alice.Get(t, path, tc.params).Status(t, http.StatusOK)
		var got []string
		for _, f := range r.Body["data"].([]any) {
			got = append(got, f.(string))
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%v: got %v, want %s", tc.params, got, tc.want)
		}
	}
	if err := s.DB.SetAdAccountFeature(t.Context(), acct.ID, storage.FeatureCatalogs, false); err != nil {
		t.Fatal(err)
	}
	r = alice.Get(t, path, nil).Status(t, http.StatusOK)
	if len(r.Body["data"].([]any)) != 2 {
		t.Errorf("after withdrawing CATALOGS: %s", r.Raw)
	}
}

func TestFundingInstruments(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	card := factory.FundingInstrument(t, s.DB, acct.ID)
	credit := limit(int64(500_000_000))
	io, err := s.DB.CreateFundingInstrument(t.Context(), acct.ID, storage.NewFundingInstrument{Type: "INSERTION_ORDER", Currency: "EUR", CreditLimitLocalMicro: credit})
	if err != nil {
		t.Fatal(err)
	}
	gone := factory.FundingInstrument(t, s.DB, acct.ID)
	s.Exec(t, `UPDATE funding_instruments SET deleted = true WHERE id = $1`, gone)
	base := "/12/accounts/" + acct.ID + "/funding_instruments"

	tests := []struct {
		params url.Values
		want   []string
	}{
		{nil, []string{card, io.ID}},
		{url.Values{"with_deleted": {"true"}}, []string{card, io.ID, gone}},
		{url.Values{"funding_instrument_ids": {io.ID + ",nope"}}, []string{io.ID}},
		{url.Values{"sort_by": {"type-desc"}}, []string{io.ID, card}},
		{url.Values{"sort_by": {"currency-asc"}, "with_deleted": {"true"}, "count": {"1"}}, []string{io.ID}},
	}
	for _, tc := range tests {
		r := alice.Get(t, base, tc.params).Status(t, http.StatusOK)
		if got := ids(t, r); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%v: got %v, want %v", tc.params, got, tc.want)
		}
	}
	r := alice.Get(t, base, url.Values{"with_total_count": {"true"}}).Status(t, http.StatusOK)
	if r.Body["total_count"] != float64(2) {
		t.Errorf("total_count: %s", r.Raw)
	}

	d := alice.Get(t, base+"/"+io.ID, nil).Status(t, http.StatusOK).Data(t)
	want := map[string]any{"id": io.ID, "account_id": acct.ID, "type": "INSERTION_ORDER", "currency": "EUR", "entity_status": "ACTIVE",
		"credit_limit_local_micro": float64(500_000_000), "funded_amount_local_micro": nil, "credit_remaining_local_micro": nil,
		"io_header": nil, "end_time": nil, "cancelled": false, "able_to_fund": true, "deleted": false}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("funding instrument %s = %v, want %v", k, d[k], v)
		}
	}
	if reasons, ok := d["reasons_not_able_to_fund"].([]any); !ok || len(reasons) != 0 {
		t.Errorf("reasons_not_able_to_fund = %v", d["reasons_not_able_to_fund"])
	}
	for _, k := range []string{"name", "description", "start_time", "created_at", "updated_at"} {
		if v, _ := d[k].(string); v == "" {
			t.Errorf("funding instrument %s = %v", k, d[k])
		}
	}

	alice.Get(t, base+"/"+gone, nil).Fails(t, http.StatusNotFound, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id")
	alice.Get(t, base+"/nothere", nil).Fails(t, http.StatusNotFound, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id")
	d = alice.Get(t, base+"/"+gone, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t)
	if d["deleted"] != true || d["able_to_fund"] != false || !containsAny(d["reasons_not_able_to_fund"], "DELETED") {
		t.Errorf("deleted funding instrument: %v", d)
	}
}

func limit(v int64) *int64 { return &v }

func containsAny(list any, want string) bool {
	items, _ := list.([]any)
	for _, it := range items {
		if it == want {
			return true
		}
	}
	return false
}

func TestAccountHistory(t *testing.T) {
	t.Parallel()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	other := alice.Account(t)
	by := alice.User.ID
	s.Exec(t, `INSERT INTO account_history (id, account_id, entity_type, entity_id, change_type, change_by_user_id, changes, entity_data, change_time) VALUES
		(101, $1, 'CAMPAIGN', 'c1', 'CREATE', $3, '{"name":{"old":null,"new":"one"}}', '{"name":"one","deleted":false}', '2024-03-01T10:15:00Z'),
		(102, $1, 'CAMPAIGN', 'c1', 'UPDATE', 42, '{"name":{"old":"one","new":"two"}}', '{"name":"two","deleted":false}', '2024-03-01T11:00:00Z'),
		(103, $1, 'CAMPAIGN', 'c1', 'DELETE', $3, '{"deleted":{"old":false,"new":true}}', '{"name":"two","deleted":true}', '2024-03-01T12:00:00Z'),
		(104, $1, 'LINE_ITEM', 'c1', 'CREATE', $3, '{}', '{}', '2024-03-01T10:30:00Z'),
		(105, $2, 'CAMPAIGN', 'c1', 'CREATE', $3, '{}', '{}', '2024-03-01T10:30:00Z'),
		(106, $1, 'CAMPAIGN', 'c1', 'UPDATE', NULL, '{}', '{}', '2024-03-01T09:59:59Z')`, acct.ID, other.ID, by)
	path := "/12/accounts/" + acct.ID + "/account_history"
	q := func(extra ...string) url.Values {
		v := url.Values{"entity_type": {"campaign"}, "entity_id": {"c1"}, "start_time": {"2024-03-01T10:00:00Z"}, "end_time": {"2024-03-01T12:00:00Z"}}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		return v
	}
	changeTypes := func(r adstest.Reply) string {
		var out []string
		for _, e := range r.List(t) {
			out = append(out, e["change_type"].(string))
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		params url.Values
		want   string
	}{
		{q(), "CREATE,UPDATE"},
		{q("end_time", "2024-03-01T13:00:00Z"), "CREATE,UPDATE,DELETE"},
		{q("start_time", "2024-03-01T09:00:00Z"), "UPDATE,CREATE,UPDATE"},
		{q("user_id", "42"), "UPDATE"},
		{q("entity_type", "LINE_ITEM"), "CREATE"},
		{q("entity_id", "c2"), ""},
		{q("start_time", "2024-03-01T12:00:00+02:00", "end_time", "2024-03-01T13:00:00+01:00"), "CREATE,UPDATE"},
	}
	for _, tc := range tests {
		if got := changeTypes(alice.Get(t, path, tc.params).Status(t, http.StatusOK)); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.params, got, tc.want)
		}
	}

	r := alice.Get(t, path, q("count", "1")).Status(t, http.StatusOK)
	e := r.List(t)[0]
	if cb := e["change_by"].(map[string]any); cb["user_id"] != strconv.FormatInt(by, 10) || cb["platform"] != "API" {
		t.Errorf("change_by = %v", cb)
	}
	if e["entity"] != "CAMPAIGN" || e["entity_id"] != "c1" || e["change_time"] != "2024-03-01T10:15:00Z" ||
		e["entity_data"].(map[string]any)["name"] != "one" || e["changes"].(map[string]any)["name"] == nil {
		t.Errorf("entry = %v", e)
	}
	p := r.Body["request"].(map[string]any)["params"].(map[string]any)
	if p["entity_type"] != "CAMPAIGN" || p["count"] != float64(1) || p["account_id"] != acct.ID {
		t.Errorf("request.params = %v", p)
	}
	first := r.NextCursor()
	r = alice.Get(t, path, q("count", "1", "cursor", first)).Status(t, http.StatusOK)
	if changeTypes(r) != "UPDATE" || r.Body["next_cursor"] != nil {
		t.Errorf("second page: %s", r.Raw)
	}
	if cb := r.List(t)[0]["change_by"].(map[string]any); cb["user_id"] != "42" {
		t.Errorf("change_by of user 42 = %v", cb)
	}
	alice.Get(t, path, q("entity_id", "c9", "cursor", first)).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
}
