package creatives_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func strPtr(s string) *string { return &s }

// accountMedia records an account media of the account.
func accountMedia(t *testing.T, s *adstest.Server, accountID, creativeType string) storage.AccountMedia {
	t.Helper()
	a := storage.AccountMedia{AccountID: accountID, CreativeType: creativeType}
	if creativeType == storage.CreativePreroll {
		a.VideoID = strPtr("13_" + accountID)
	} else {
		a.MediaURL = strPtr("https://media.example/" + strings.ToLower(creativeType) + ".jpg")
	}
	out, err := s.DB.CreateAccountMedia(t.Context(), a)
	if err != nil {
		t.Fatalf("CreateAccountMedia: %v", err)
	}
	return out
}

func ids(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["id"].(string)
	}
	return out
}

// TestAccountMediaGetDelete: the object's shape, soft delete answering the
// entity, 404 afterwards unless with_deleted, a second DELETE 404.
func TestAccountMediaGetDelete(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	am := accountMedia(t, s, acct.ID, storage.CreativeInterstitialLandscapeTablet)
	path := "/12/accounts/" + acct.ID + "/account_media/" + am.ID

	d := alice.Get(t, path, nil).Status(t, http.StatusOK).Data(t)
	want := map[string]any{"id": am.ID, "video_id": nil, "media_url": *am.MediaURL,
		"creative_type": "INTERSTITIAL_LANDSCAPE_TABLET", "deleted": false}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if s, _ := d[k].(string); !strings.HasSuffix(s, "Z") {
			t.Errorf("%s = %v, want an ISO 8601 UTC time", k, d[k])
		}
	}
	if got := alice.Delete(t, path, nil).Status(t, http.StatusOK).Data(t); got["deleted"] != true || got["id"] != am.ID {
		t.Fatalf("DELETE = %v", got)
	}
	alice.Get(t, path, nil).Fails(t, http.StatusNotFound, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id")
	if got := alice.Get(t, path, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t); got["deleted"] != true {
		t.Fatalf("GET with_deleted = %v", got)
	}
	alice.Delete(t, path, nil).Fails(t, http.StatusNotFound, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id")
}

// TestAccountMediaTenancy: another account's account media answers exactly
// like a missing one, on GET and DELETE, and is never listed.
func TestAccountMediaTenancy(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct, bobs := alice.Account(t), bob.Account(t)
	theirs := accountMedia(t, s, bobs.ID, storage.CreativeBanner)
	base := "/12/accounts/" + acct.ID + "/account_media/"
	for _, id := range []string{theirs.ID, "nope"} {
		missing := alice.Get(t, base+id, nil)
		missing.Fails(t, http.StatusNotFound, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id")
		alice.Delete(t, base+id, nil).Fails(t, http.StatusNotFound, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id")
		if e := missing.FirstError(); !strings.Contains(e.Message, id) {
			t.Errorf("message %q does not name %s", e.Message, id)
		}
	}
	list := alice.Get(t, "/12/accounts/"+acct.ID+"/account_media", url.Values{"account_media_ids": {theirs.ID}}).Status(t, http.StatusOK)
	if got := list.List(t); len(got) != 0 {
		t.Fatalf("listed another account's media: %v", got)
	}
	bob.Get(t, "/12/accounts/"+bobs.ID+"/account_media/"+theirs.ID, nil).Status(t, http.StatusOK)
	alice.Get(t, "/12/accounts/"+bobs.ID+"/account_media", nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
}

// TestAccountMediaListFilters: creative_types and account_media_ids narrow
// the list; deleted media show only with with_deleted.
func TestAccountMediaListFilters(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	banner := accountMedia(t, s, acct.ID, storage.CreativeBanner)
	preroll := accountMedia(t, s, acct.ID, storage.CreativePreroll)
	gone := accountMedia(t, s, acct.ID, storage.CreativeMediumRectangle)
	if _, err := s.DB.DeleteAccountMedia(t.Context(), acct.ID, gone.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	path := "/12/accounts/" + acct.ID + "/account_media"
	tests := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"all", nil, []string{banner.ID, preroll.ID}},
		{"with deleted", url.Values{"with_deleted": {"true"}}, []string{banner.ID, preroll.ID, gone.ID}},
		{"one type", url.Values{"creative_types": {"PREROLL"}}, []string{preroll.ID}},
		{"types any case", url.Values{"creative_types": {"banner,preroll"}}, []string{banner.ID, preroll.ID}},
		{"ids", url.Values{"account_media_ids": {banner.ID + "," + gone.ID}}, []string{banner.ID}},
		{"sorted", url.Values{"sort_by": {"creative_type-desc"}}, []string{preroll.ID, banner.ID}},
	}
	for _, tc := range tests {
		got := ids(alice.Get(t, path, tc.params).Status(t, http.StatusOK).List(t))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAccountMediaListBadInput: every bad list parameter is a 400 naming it.
func TestAccountMediaListBadInput(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	path := "/12/accounts/" + acct.ID + "/account_media"
	many := make([]string, 201)
	for i := range many {
		many[i] = fmt.Sprintf("id%d", i)
	}
	tests := []struct {
		name        string
		params      url.Values
		code, param string
	}{
		{"unknown creative type", url.Values{"creative_types": {"BANNER,HOLOGRAM"}}, "INVALID_PARAMETER", "creative_types"},
		{"empty creative type", url.Values{"creative_types": {"BANNER,"}}, "INVALID_PARAMETER", "creative_types"},
		{"201 ids", url.Values{"account_media_ids": {strings.Join(many, ",")}}, "INVALID_PARAMETER", "account_media_ids"},
		{"bad id", url.Values{"account_media_ids": {"a b"}}, "INVALID_PARAMETER", "account_media_ids"},
		{"count 0", url.Values{"count": {"0"}}, "INVALID_PARAMETER", "count"},
		{"count 1001", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"count text", url.Values{"count": {"ten"}}, "INVALID_PARAMETER", "count"},
		{"nullable sort", url.Values{"sort_by": {"video_id-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"sort direction", url.Values{"sort_by": {"created_at-up"}}, "INVALID_PARAMETER", "sort_by"},
		{"with_deleted", url.Values{"with_deleted": {"yes"}}, "INVALID_PARAMETER", "with_deleted"},
		{"total with cursor", url.Values{"with_total_count": {"true"}, "cursor": {"abc"}}, "EXCLUSIVE_PARAMETERS", "cursor"},
		{"forged cursor", url.Values{"cursor": {"abc.def"}}, "INVALID_PARAMETER", "cursor"},
		{"unknown parameter", url.Values{"media_key": {"3_1"}}, "INVALID_PARAMETER", "media_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alice.Get(t, path, tc.params).Fails(t, http.StatusBadRequest, tc.code, tc.param)
		})
	}
}

// TestAccountMediaPagination walks every page and finds each row once,
// also with rows inserted during the walk; a cursor of another query is
// refused; total_count counts the rows.
func TestAccountMediaPagination(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	want := map[string]bool{}
	for range 7 {
		want[accountMedia(t, s, acct.ID, storage.CreativeBanner).ID] = true
	}
	path := "/12/accounts/" + acct.ID + "/account_media"
	for _, sortBy := range []string{"", "created_at-desc", "updated_at-asc"} {
		seen := map[string]bool{}
		params := url.Values{"count": {"3"}}
		if sortBy != "" {
			params.Set("sort_by", sortBy)
		}
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatalf("%s: too many pages", sortBy)
			}
			r := alice.Get(t, path, params).Status(t, http.StatusOK)
			for _, id := range ids(r.List(t)) {
				if seen[id] || !want[id] {
					t.Fatalf("%s: row %s seen twice or unexpected", sortBy, id)
				}
				seen[id] = true
			}
			if r.NextCursor() == "" {
				break
			}
			if sortBy == "" {
				alice.Get(t, path, url.Values{"cursor": {r.NextCursor()}, "creative_types": {"BANNER"}}).
					Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
				// a row inserted mid-walk lands after the cursor in
				// created_at order and is seen exactly once
				want[accountMedia(t, s, acct.ID, storage.CreativeBanner).ID] = true
			}
			params.Set("cursor", r.NextCursor())
		}
		if len(seen) != len(want) {
			t.Fatalf("%s: saw %d rows, want %d", sortBy, len(seen), len(want))
		}
	}
	r := alice.Get(t, path, url.Values{"with_total_count": {"true"}, "count": {"1"}}).Status(t, http.StatusOK)
	if r.Body["total_count"] != float64(len(want)) {
		t.Fatalf("total_count = %v, want %d", r.Body["total_count"], len(want))
	}
}

// setObjective changes a line item's objective (fixtures only make
// ENGAGEMENTS line items).
func setObjective(t *testing.T, s *adstest.Server, lineItemID, objective string) {
	t.Helper()
	s.Exec(t, `UPDATE line_items SET objective = $2 WHERE id = $1`, lineItemID, objective)
}

// TestMediaCreativesLifecycle: create, get, list with each filter, delete,
// and the 404s after it.
func TestMediaCreativesLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	funding, campaign, lineItem := factory.AdsChain(t, s.DB, acct.ID)
	otherCampaign := factory.Campaign(t, s.DB, acct.ID, funding)
	otherLineItem := factory.LineItem(t, s.DB, acct.ID, otherCampaign)
	banner := accountMedia(t, s, acct.ID, storage.CreativeBanner)
	base := "/12/accounts/" + acct.ID + "/media_creatives"

	created := alice.Post(t, base, url.Values{"account_media_id": {banner.ID}, "line_item_id": {lineItem},
		"landing_url": {"https://example.com/shop"}}).Status(t, http.StatusOK).Data(t)
	want := map[string]any{"line_item_id": lineItem, "account_media_id": banner.ID, "creative_type": "BANNER",
		"landing_url": "https://example.com/shop", "entity_status": "ACTIVE", "approval_status": "ACCEPTED", "deleted": false}
	for k, v := range want {
		if created[k] != v {
			t.Errorf("%s = %v, want %v", k, created[k], v)
		}
	}
	id, _ := created["id"].(string)
	second := alice.Post(t, base, url.Values{"account_media_id": {banner.ID}, "line_item_id": {otherLineItem}}).
		Status(t, http.StatusOK).Data(t)
	secondID, _ := second["id"].(string)
	if second["landing_url"] != nil {
		t.Errorf("landing_url = %v, want null", second["landing_url"])
	}
	if got := alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t); got["id"] != id {
		t.Fatalf("GET = %v", got)
	}
	tests := []struct {
		name   string
		params url.Values
		want   []string
	}{
		{"all", nil, []string{id, secondID}},
		{"campaign", url.Values{"campaign_id": {campaign}}, []string{id}},
		{"line items", url.Values{"line_item_ids": {otherLineItem}}, []string{secondID}},
		{"ids", url.Values{"media_creative_ids": {secondID + "," + id}}, []string{id, secondID}},
		{"desc", url.Values{"sort_by": {"created_at-desc"}}, []string{secondID, id}},
	}
	for _, tc := range tests {
		got := ids(alice.Get(t, base, tc.params).Status(t, http.StatusOK).List(t))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t); got["deleted"] != true {
		t.Fatalf("DELETE = %v", got)
	}
	alice.Get(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "MEDIA_CREATIVE_NOT_FOUND", "media_creative_id")
	alice.Get(t, base+"/"+id, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK)
	alice.Delete(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "MEDIA_CREATIVE_NOT_FOUND", "media_creative_id")
	if got := ids(alice.Get(t, base, nil).Status(t, http.StatusOK).List(t)); strings.Join(got, ",") != secondID {
		t.Fatalf("after delete: %v", got)
	}
}

// TestMediaCreativeCreateRules: landing_url is ignored for PREROLL media
// and required for display media on WEBSITE_CLICKS line items.
func TestMediaCreativeCreateRules(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	_, _, lineItem := factory.AdsChain(t, s.DB, acct.ID)
	setObjective(t, s, lineItem, "WEBSITE_CLICKS")
	banner := accountMedia(t, s, acct.ID, storage.CreativeBanner)
	preroll := accountMedia(t, s, acct.ID, storage.CreativePreroll)
	base := "/12/accounts/" + acct.ID + "/media_creatives"

	alice.Post(t, base, url.Values{"account_media_id": {banner.ID}, "line_item_id": {lineItem}}).
		Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "landing_url")
	got := alice.Post(t, base, url.Values{"account_media_id": {preroll.ID}, "line_item_id": {lineItem},
		"landing_url": {"https://example.com"}}).Status(t, http.StatusOK).Data(t)
	if got["landing_url"] != nil || got["creative_type"] != "PREROLL" {
		t.Fatalf("preroll creative = %v", got)
	}
	alice.Post(t, base, url.Values{"account_media_id": {banner.ID}, "line_item_id": {lineItem},
		"landing_url": {"https://example.com"}}).Status(t, http.StatusOK)
}

// TestMediaCreativeBadInput: each bad parameter or foreign id, and that
// nothing was created.
func TestMediaCreativeBadInput(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct, bobs := alice.Account(t), bob.Account(t)
	_, _, lineItem := factory.AdsChain(t, s.DB, acct.ID)
	_, _, bobsLineItem := factory.AdsChain(t, s.DB, bobs.ID)
	banner := accountMedia(t, s, acct.ID, storage.CreativeBanner)
	bobsBanner := accountMedia(t, s, bobs.ID, storage.CreativeBanner)
	base := "/12/accounts/" + acct.ID + "/media_creatives"
	ok := url.Values{"account_media_id": {banner.ID}, "line_item_id": {lineItem}}
	with := func(k, v string) url.Values {
		p := url.Values{}
		for name, vs := range ok {
			p[name] = vs
		}
		if v == "" {
			p.Del(k)
		} else {
			p.Set(k, v)
		}
		return p
	}
	tests := []struct {
		name        string
		params      url.Values
		status      int
		code, param string
	}{
		{"no account media", with("account_media_id", ""), 400, "MISSING_PARAMETER", "account_media_id"},
		{"no line item", with("line_item_id", ""), 400, "MISSING_PARAMETER", "line_item_id"},
		{"http landing url", with("landing_url", "http://example.com"), 400, "INVALID_PARAMETER", "landing_url"},
		{"relative landing url", with("landing_url", "/shop"), 400, "INVALID_PARAMETER", "landing_url"},
		{"long landing url", with("landing_url", "https://example.com/"+strings.Repeat("a", 2048)), 400, "INVALID_PARAMETER", "landing_url"},
		{"other account's line item", with("line_item_id", bobsLineItem), 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"unknown line item", with("line_item_id", "nope"), 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"other account's media", with("account_media_id", bobsBanner.ID), 404, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id"},
		{"unknown media", with("account_media_id", "nope"), 404, "ACCOUNT_MEDIA_NOT_FOUND", "account_media_id"},
		{"unknown parameter", with("creative_type", "BANNER"), 400, "INVALID_PARAMETER", "creative_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alice.Post(t, base, tc.params).Fails(t, tc.status, tc.code, tc.param)
		})
	}
	if got := alice.Get(t, base, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("bad requests created %v", got)
	}
	alice.Get(t, base+"/x", url.Values{"with_deleted": {"maybe"}}).Fails(t, 400, "INVALID_PARAMETER", "with_deleted")
	alice.Get(t, base, url.Values{"line_item_ids": {strings.Repeat("a,", 200) + "a"}}).Fails(t, 400, "INVALID_PARAMETER", "line_item_ids")
	alice.Get(t, base, url.Values{"media_creative_ids": {strings.Repeat("a,", 200) + "a"}}).Fails(t, 400, "INVALID_PARAMETER", "media_creative_ids")
	alice.Get(t, base, url.Values{"sort_by": {"landing_url-asc"}}).Fails(t, 400, "INVALID_PARAMETER", "sort_by")
	carol := s.ReadOnlyUser(t, "carol")
	carols := carol.Account(t)
	carolsMedia := accountMedia(t, s, carols.ID, storage.CreativeBanner)
	carol.Delete(t, "/12/accounts/"+carols.ID+"/account_media/"+carolsMedia.ID, nil).
		Fails(t, http.StatusForbidden, "READONLY_CLIENT_APPLICATION", "")
	carol.Get(t, "/12/accounts/"+carols.ID+"/account_media/"+carolsMedia.ID, nil).Status(t, http.StatusOK)
}
