package categories_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// Seeded curated categories (migration 0006).
const (
	basketball = "9fg8gmz96qdg"
	soccer     = "9ddrgesiap6o"
)

func linksPath(accountID string) string {
	return "/12/accounts/" + accountID + "/line_item_curated_categories"
}

// link posts a link of lineItemID to categoryID and returns its id.
func link(t *testing.T, c *adstest.Caller, accountID, lineItemID, categoryID string) string {
	t.Helper()
	d := c.Post(t, linksPath(accountID), url.Values{"line_item_id": {lineItemID}, "curated_category_id": {categoryID}}).
		Status(t, http.StatusOK).Data(t)
	return d["id"].(string)
}

func TestLineItemCuratedCategoryLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	_, _, li := factory.AdsChain(t, s.DB, acct.ID)
	base := linksPath(acct.ID)

	created := alice.Post(t, base, url.Values{"line_item_id": {li}, "curated_category_id": {basketball}}).Status(t, http.StatusOK).Data(t)
	id, _ := created["id"].(string)
	if id == "" || created["line_item_id"] != li || created["curated_category_id"] != basketball || created["deleted"] != false {
		t.Fatalf("created %v", created)
	}
	for _, f := range []string{"created_at", "updated_at"} {
		if v, _ := created[f].(string); !strings.HasSuffix(v, "Z") {
			t.Errorf("%s = %v, want ISO 8601 UTC", f, created[f])
		}
	}

	got := alice.Get(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
	if got["id"] != id || got["curated_category_id"] != basketball {
		t.Errorf("get %v", got)
	}
	if items := alice.Get(t, base, nil).Status(t, http.StatusOK).List(t); len(items) != 1 || items[0]["id"] != id {
		t.Errorf("list %v", items)
	}

	up := alice.Put(t, base+"/"+id, url.Values{"curated_category_id": {soccer}}).Status(t, http.StatusOK).Data(t)
	if up["curated_category_id"] != soccer || up["line_item_id"] != li || up["deleted"] != false {
		t.Errorf("put %v", up)
	}

	del := alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
	if del["deleted"] != true || del["id"] != id || del["curated_category_id"] != soccer {
		t.Errorf("delete %v", del)
	}
	alice.Delete(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "line_item_curated_category_id")
	alice.Get(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "line_item_curated_category_id")
	alice.Put(t, base+"/"+id, url.Values{"curated_category_id": {basketball}}).
		Fails(t, http.StatusNotFound, "NOT_FOUND", "line_item_curated_category_id")
	if d := alice.Get(t, base+"/"+id, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).Data(t); d["deleted"] != true {
		t.Errorf("get with_deleted %v", d)
	}
	if items := alice.Get(t, base, nil).Status(t, http.StatusOK).List(t); len(items) != 0 {
		t.Errorf("list without deleted %v", items)
	}
	if items := alice.Get(t, base, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(items) != 1 {
		t.Errorf("list with_deleted %v", items)
	}
	// The line item is free again once its link is deleted.
	link(t, alice, acct.ID, li, basketball)
}

func TestLineItemCuratedCategoryBadInput(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	_, campaign, li := factory.AdsChain(t, s.DB, acct.ID)
	free := factory.LineItem(t, s.DB, acct.ID, campaign)
	gone := factory.LineItem(t, s.DB, acct.ID, campaign)
	s.Exec(t, `UPDATE line_items SET deleted = true WHERE id = $1`, gone)
	_, _, bobsLI := factory.AdsChain(t, s.DB, bob.Account(t).ID)
	id := link(t, alice, acct.ID, li, basketball)
	base := linksPath(acct.ID)

	posts := []struct {
		name   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"nothing", nil, 400, "MISSING_PARAMETER", "line_item_id"},
		{"no curated category", url.Values{"line_item_id": {free}}, 400, "MISSING_PARAMETER", "curated_category_id"},
		{"no line item", url.Values{"curated_category_id": {soccer}}, 400, "MISSING_PARAMETER", "line_item_id"},
		{"empty line item", url.Values{"line_item_id": {""}, "curated_category_id": {soccer}}, 400, "INVALID_PARAMETER", "line_item_id"},
		{"unknown parameter", url.Values{"line_item_id": {free}, "curated_category_id": {soccer}, "name": {"x"}}, 400, "INVALID_PARAMETER", "name"},
		{"missing line item", url.Values{"line_item_id": {"nosuchli"}, "curated_category_id": {soccer}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"other account's line item", url.Values{"line_item_id": {bobsLI}, "curated_category_id": {soccer}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"deleted line item", url.Values{"line_item_id": {gone}, "curated_category_id": {soccer}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"missing curated category", url.Values{"line_item_id": {free}, "curated_category_id": {"nosuchcat"}}, 404, "NOT_FOUND", "curated_category_id"},
		{"line item already targeting one", url.Values{"line_item_id": {li}, "curated_category_id": {soccer}}, 400, "INVALID_PARAMETER", "line_item_id"},
	}
	for _, tt := range posts {
		t.Run("POST "+tt.name, func(t *testing.T) {
			alice.Post(t, base, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	puts := []struct {
		name   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"empty curated category", url.Values{"curated_category_id": {""}}, 400, "INVALID_PARAMETER", "curated_category_id"},
		{"other account's line item", url.Values{"line_item_id": {bobsLI}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"deleted line item", url.Values{"line_item_id": {gone}}, 404, "LINE_ITEM_NOT_FOUND", "line_item_id"},
		{"missing curated category", url.Values{"curated_category_id": {"nosuchcat"}}, 404, "NOT_FOUND", "curated_category_id"},
		{"with_deleted not taken", url.Values{"with_deleted": {"true"}}, 400, "INVALID_PARAMETER", "with_deleted"},
	}
	for _, tt := range puts {
		t.Run("PUT "+tt.name, func(t *testing.T) {
			alice.Put(t, base+"/"+id, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	alice.Get(t, base+"/"+id, url.Values{"with_deleted": {"maybe"}}).Fails(t, 400, "INVALID_PARAMETER", "with_deleted")
	alice.Delete(t, base+"/"+id, url.Values{"force": {"true"}}).Fails(t, 400, "INVALID_PARAMETER", "force")

	// Nothing changed: still one link, as created.
	items := alice.Get(t, base, url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t)
	if len(items) != 1 || items[0]["line_item_id"] != li || items[0]["curated_category_id"] != basketball || items[0]["deleted"] != false {
		t.Errorf("after refused requests: %v", items)
	}
}

func TestLineItemCuratedCategoryList(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	_, campaign, _ := factory.AdsChain(t, s.DB, acct.ID)
	base := linksPath(acct.ID)
	var ids []string
	for range 7 {
		ids = append(ids, link(t, alice, acct.ID, factory.LineItem(t, s.DB, acct.ID, campaign), soccer))
	}

	bad := []struct {
		name   string
		params url.Values
		code   string
		param  string
	}{
		{"unknown sort attribute", url.Values{"sort_by": {"name-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"bad sort direction", url.Values{"sort_by": {"created_at-up"}}, "INVALID_PARAMETER", "sort_by"},
		{"count zero", url.Values{"count": {"0"}}, "INVALID_PARAMETER", "count"},
		{"count over 1000", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"count not a number", url.Values{"count": {"ten"}}, "INVALID_PARAMETER", "count"},
		{"total count with cursor", url.Values{"with_total_count": {"true"}, "cursor": {"x.y"}}, "EXCLUSIVE_PARAMETERS", "cursor"},
		{"tampered cursor", url.Values{"cursor": {"eyJ2IjoiIn0.AAAA"}}, "INVALID_PARAMETER", "cursor"},
		{"line_item_ids not taken", url.Values{"line_item_ids": {strings.Repeat("a,", 200) + "a"}}, "INVALID_PARAMETER", "line_item_ids"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			alice.Get(t, base, tt.params).Fails(t, http.StatusBadRequest, tt.code, tt.param)
		})
	}

	if r := alice.Get(t, base, url.Values{"with_total_count": {"true"}, "count": {"2"}}).Status(t, http.StatusOK); r.Body["total_count"] != float64(7) {
		t.Errorf("total_count %v, want 7", r.Body["total_count"])
	}

	// Walk three at a time while links are added: each of the first seven
	// is seen exactly once, in creation order.
	seen := map[string]int{}
	var order []string
	q := url.Values{"count": {"3"}}
	for page := 0; page < 10; page++ {
		r := alice.Get(t, base, q).Status(t, http.StatusOK)
		for _, it := range r.List(t) {
			id := it["id"].(string)
			seen[id]++
			order = append(order, id)
		}
		if page == 0 {
			link(t, alice, acct.ID, factory.LineItem(t, s.DB, acct.ID, campaign), basketball)
		}
		if r.NextCursor() == "" {
			break
		}
		q.Set("cursor", r.NextCursor())
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("link %s seen %d times", id, seen[id])
		}
	}
	if !slices.Equal(order[:7], ids) {
		t.Errorf("walk order %v, want %v first", order, ids)
	}

	// sort_by line_item_id descending, and its cursor is bound to it.
	r := alice.Get(t, base, url.Values{"sort_by": {"line_item_id-desc"}, "count": {"4"}}).Status(t, http.StatusOK)
	items := r.List(t)
	for i := 1; i < len(items); i++ {
		if items[i-1]["line_item_id"].(string) < items[i]["line_item_id"].(string) {
			t.Errorf("not sorted by line_item_id desc: %v then %v", items[i-1]["line_item_id"], items[i]["line_item_id"])
		}
	}
	alice.Get(t, base, url.Values{"cursor": {r.NextCursor()}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
}

func TestLineItemCuratedCategoryTenancy(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct, bobs := alice.Account(t), bob.Account(t)
	_, _, li := factory.AdsChain(t, s.DB, acct.ID)
	_, _, bobsLI := factory.AdsChain(t, s.DB, bobs.ID)
	aliceLink := link(t, alice, acct.ID, li, basketball)

	// Bob names Alice's link through his own account: the same 404 as an
	// id no link has.
	for _, id := range []string{aliceLink, "nosuchlink"} {
		p := linksPath(bobs.ID) + "/" + id
		bob.Get(t, p, url.Values{"with_deleted": {"true"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "line_item_curated_category_id")
		bob.Put(t, p, url.Values{"line_item_id": {bobsLI}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "line_item_curated_category_id")
		bob.Delete(t, p, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "line_item_curated_category_id")
	}
	// Alice's line item through Bob's account, and Bob's through Alice's.
	bob.Post(t, linksPath(bobs.ID), url.Values{"line_item_id": {li}, "curated_category_id": {soccer}}).
		Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
	alice.Put(t, linksPath(acct.ID)+"/"+aliceLink, url.Values{"line_item_id": {bobsLI}}).
		Fails(t, http.StatusNotFound, "LINE_ITEM_NOT_FOUND", "line_item_id")
	// Alice's account in Bob's hands: 403 ACCOUNT_NOT_FOUND on every route.
	p := linksPath(acct.ID)
	for _, r := range []adstest.Reply{
		bob.Get(t, p, nil),
		bob.Get(t, p+"/"+aliceLink, nil),
		bob.Post(t, p, url.Values{"line_item_id": {li}, "curated_category_id": {soccer}}),
		bob.Put(t, p+"/"+aliceLink, url.Values{"curated_category_id": {soccer}}),
		bob.Delete(t, p+"/"+aliceLink, nil),
		bob.Get(t, "/12/accounts/"+acct.ID+"/curated_categories", url.Values{"country_codes": {"US"}}),
	} {
		r.Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	}
	if items := bob.Get(t, linksPath(bobs.ID), url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(items) != 0 {
		t.Errorf("bob lists %v", items)
	}
	// Alice's link is untouched.
	if d := alice.Get(t, p+"/"+aliceLink, nil).Status(t, http.StatusOK).Data(t); d["curated_category_id"] != basketball || d["line_item_id"] != li {
		t.Errorf("alice's link %v", d)
	}
	// Sandbox accounts are another world: Alice's production account is
	// not found there.
	alice.Sandbox().Get(t, p, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	reader := s.ReadOnlyUser(t, "reader")
	ra := reader.Account(t)
	_, _, rli := factory.AdsChain(t, s.DB, ra.ID)
	reader.Post(t, linksPath(ra.ID), url.Values{"line_item_id": {rli}, "curated_category_id": {soccer}}).
		Fails(t, http.StatusForbidden, "READONLY_CLIENT_APPLICATION", "")
}
