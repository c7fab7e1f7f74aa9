package categories_test

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

func TestBusinessCategories(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	r := alice.Get(t, "/12/advertiser_business_categories", nil).Status(t, http.StatusOK)
	items := r.List(t)
	if len(items) < 15 || len(items) > 25 {
		t.Fatalf("%d categories, want 15 to 25", len(items))
	}
	if r.Body["next_cursor"] != nil {
		t.Errorf("next_cursor %v, want null", r.Body["next_cursor"])
	}
	first := items[0]
	if first["id"] != "1jl" || first["name"] != "Consumer Packaged Goods" {
		t.Errorf("first category %v", first)
	}
	for _, it := range items {
		iab, ok := it["iab_categories"].([]any)
		if !ok || len(iab) == 0 || !strings.HasPrefix(iab[0].(string), "IAB") {
			t.Errorf("category %v: iab_categories %v", it["id"], it["iab_categories"])
		}
	}
	alice.Get(t, "/12/advertiser_business_categories", url.Values{"count": {"5"}}).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "count")
	alice.Sandbox().Get(t, "/12/advertiser_business_categories", nil).Status(t, http.StatusOK)
}

func TestCuratedCategoriesBadInput(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	path := "/12/accounts/" + acct.ID + "/curated_categories"
	many := strings.Repeat("US,", 200) + "US"
	tests := []struct {
		name   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"missing country_codes", nil, 400, "MISSING_PARAMETER", "country_codes"},
		{"empty country_codes", url.Values{"country_codes": {""}}, 400, "INVALID_PARAMETER", "country_codes"},
		{"alpha-3 code", url.Values{"country_codes": {"USA"}}, 400, "INVALID_PARAMETER", "country_codes"},
		{"unassigned code", url.Values{"country_codes": {"US,XX"}}, 400, "INVALID_PARAMETER", "country_codes"},
		{"digits", url.Values{"country_codes": {"12"}}, 400, "INVALID_PARAMETER", "country_codes"},
		{"empty entry", url.Values{"country_codes": {"US,,GB"}}, 400, "INVALID_PARAMETER", "country_codes"},
		{"over 200 codes", url.Values{"country_codes": {many}}, 400, "INVALID_PARAMETER", "country_codes"},
		{"count zero", url.Values{"country_codes": {"US"}, "count": {"0"}}, 400, "INVALID_PARAMETER", "count"},
		{"count over 1000", url.Values{"country_codes": {"US"}, "count": {"1001"}}, 400, "INVALID_PARAMETER", "count"},
		{"forged cursor", url.Values{"country_codes": {"US"}, "cursor": {"abc.def"}}, 400, "INVALID_PARAMETER", "cursor"},
		{"sort_by not taken", url.Values{"country_codes": {"US"}, "sort_by": {"name-asc"}}, 400, "INVALID_PARAMETER", "sort_by"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alice.Get(t, path, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	bob := s.User(t, "bob")
	bob.Get(t, path, url.Values{"country_codes": {"US"}}).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
}

func TestCuratedCategoriesByCountry(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	path := "/12/accounts/" + acct.ID + "/curated_categories"

	r := alice.Get(t, path, url.Values{"country_codes": {"us,US"}}).Status(t, http.StatusOK)
	params := r.Body["request"].(map[string]any)["params"].(map[string]any)
	if !reflect.DeepEqual(params["country_codes"], []any{"US"}) {
		t.Errorf("echoed country_codes %v, want [US]", params["country_codes"])
	}
	names := map[string]bool{}
	for _, c := range r.List(t) {
		names[c["name"].(string)] = true
		if !slices.Contains(c["country_codes"].([]any), any("US")) {
			t.Errorf("%v is not available in US: %v", c["name"], c["country_codes"])
		}
		for _, field := range []string{"id", "description", "publisher_user_ids", "videos_monetized_in_last_thirty_days", "created_at", "updated_at"} {
			if c[field] == nil {
				t.Errorf("%v: %s is null", c["name"], field)
			}
		}
	}
	if !names["Basketball"] || names["Anime"] {
		t.Errorf("US categories %v: want Basketball, not Anime", names)
	}

	// Walk US and JP three at a time: every category once, in order.
	all := alice.Get(t, path, url.Values{"country_codes": {"US,JP"}}).Status(t, http.StatusOK).List(t)
	var walked []string
	q := url.Values{"country_codes": {"US,JP"}, "count": {"3"}}
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatal("the walk does not end")
		}
		r := alice.Get(t, path, q).Status(t, http.StatusOK)
		for _, c := range r.List(t) {
			walked = append(walked, c["id"].(string))
		}
		if r.NextCursor() == "" {
			break
		}
		q.Set("cursor", r.NextCursor())
	}
	var want []string
	for _, c := range all {
		want = append(want, c["id"].(string))
	}
	if !slices.Equal(walked, want) || len(want) < 4 {
		t.Errorf("walked %v, want %v", walked, want)
	}
	// A cursor of the US+JP query does not page another query.
	alice.Get(t, path, url.Values{"country_codes": {"GB"}, "cursor": {q.Get("cursor")}}).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")

	one := alice.Get(t, path+"/"+want[0], nil).Status(t, http.StatusOK).Data(t)
	if one["id"] != want[0] || one["name"] != all[0]["name"] {
		t.Errorf("get %s: %v", want[0], one)
	}
	alice.Get(t, path+"/nosuchcategory", nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "curated_category_id")
	alice.Get(t, path+"/"+want[0], url.Values{"with_deleted": {"true"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "with_deleted")
	s.User(t, "bob").Get(t, path+"/"+want[0], nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")

	none := alice.Get(t, path, url.Values{"country_codes": {"AQ"}}).Status(t, http.StatusOK).List(t)
	if len(none) != 0 {
		t.Errorf("Antarctica has %d curated categories, want none", len(none))
	}
}

func TestPlacements(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	tests := []struct {
		name   string
		params url.Values
		types  []string
	}{
		{"every product type", nil, []string{"MEDIA", "PROMOTED_ACCOUNT", "PROMOTED_TWEETS"}},
		{"one product type", url.Values{"product_type": {"PROMOTED_ACCOUNT"}}, []string{"PROMOTED_ACCOUNT"}},
		{"any case", url.Values{"product_type": {"media"}}, []string{"MEDIA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := alice.Get(t, "/12/line_items/placements", tt.params).Status(t, http.StatusOK)
			items := r.List(t)
			var types []string
			for _, it := range items {
				types = append(types, it["product_type"].(string))
				combos, ok := it["placements"].([]any)
				if !ok || len(combos) == 0 {
					t.Errorf("%v: placements %v", it["product_type"], it["placements"])
				}
			}
			if !slices.Equal(types, tt.types) {
				t.Errorf("product types %v, want %v", types, tt.types)
			}
		})
	}
	r := alice.Get(t, "/12/line_items/placements", url.Values{"product_type": {"PROMOTED_ACCOUNT"}}).Status(t, http.StatusOK)
	want := []any{[]any{"ALL_ON_SERVICE"}, []any{"SERVICE_TIMELINE"}}
	if got := r.List(t)[0]["placements"]; !reflect.DeepEqual(got, want) {
		t.Errorf("PROMOTED_ACCOUNT placements %v, want %v", got, want)
	}
	for _, bad := range []url.Values{{"product_type": {"PROMOTED_TRENDS"}}, {"product_type": {""}}, {"placement": {"ALL_ON_SERVICE"}}} {
		param := "product_type"
		if bad.Has("placement") {
			param = "placement"
		}
		alice.Get(t, "/12/line_items/placements", bad).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", param)
	}
}
