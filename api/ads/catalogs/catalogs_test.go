package catalogs_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
)

// early gives the caller an account with the CATALOGS feature.
func early(t testing.TB, s *adstest.Server, c *adstest.Caller) {
	t.Helper()
	acct := c.Account(t)
	if err := s.DB.SetAdAccountFeature(t.Context(), acct.ID, storage.FeatureCatalogs, true); err != nil {
		t.Fatalf("feature: %v", err)
	}
}

// newCatalog creates the caller's catalog and returns its id.
func newCatalog(t testing.TB, c *adstest.Caller) string {
	t.Helper()
	d := c.Post(t, "/12/product_catalogs", url.Values{"name": {"shop"}}).Status(t, http.StatusOK).Data(t)
	return d["id"].(string)
}

func productsPath(id string) string { return "/12/product_catalogs/" + id + "/products" }

// product is a valid product; kv overrides attributes (nil deletes).
func product(id string, kv ...any) map[string]any {
	p := map[string]any{
		"id": id, "title": "Canvas shoe " + id, "description": "A comfortable shoe.", "availability": "in stock",
		"condition": "new", "price": "60.00 USD", "link": "https://shop.example/" + id,
		"image_link": "https://img.example/" + id + ".jpg", "brand": "Aviary", "inventory": 2,
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(p, kv[i].(string))
		} else {
			p[kv[i].(string)] = kv[i+1]
		}
	}
	return p
}

func batch(items ...map[string]any) map[string]any { return map[string]any{"products": items} }

// upsert sends a batch and returns products_response.
func upsert(t testing.TB, c *adstest.Caller, catalog string, items ...map[string]any) []map[string]any {
	t.Helper()
	d := c.DoJSON(t, http.MethodPut, productsPath(catalog), batch(items...)).Status(t, http.StatusOK).Data(t)
	raw, _ := d["products_response"].([]any)
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		out[i] = r.(map[string]any)
	}
	if len(out) != len(items) {
		t.Fatalf("%d answers for %d items", len(out), len(items))
	}
	return out
}

// issueKeys are an answer item's errors (or warnings) as field:rule.
func issueKeys(item map[string]any, key string) []string {
	var out []string
	list, _ := item[key].([]any)
	for _, e := range list {
		m := e.(map[string]any)
		out = append(out, fmt.Sprint(m["field"], ":", m["rule"]))
	}
	return out
}

func TestCatalogLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	early(t, s, alice)

	r := alice.Get(t, "/12/product_catalogs", nil).Status(t, http.StatusOK)
	if len(r.List(t)) != 0 || r.Body["next_cursor"] != nil {
		t.Fatalf("new user lists catalogs: %s", r.Raw)
	}
	id := newCatalog(t, alice)
	alice.Post(t, "/12/product_catalogs", url.Values{"name": {"again"}}).Fails(t, http.StatusBadRequest, "CATALOG_ALREADY_EXISTS", "name")
	alice.Post(t, "/12/product_catalogs", nil).Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "name")

	cases := []struct {
		name   string
		params url.Values
		want   int
	}{
		{"default user", nil, 1},
		{"own user_id", url.Values{"user_id": {fmt.Sprint(alice.User.ID)}}, 1},
		{"another user's id", url.Values{"user_id": {fmt.Sprint(bob.User.ID)}}, 0},
	}
	for _, c := range cases {
		list := alice.Get(t, "/12/product_catalogs", c.params).Status(t, http.StatusOK).List(t)
		if len(list) != c.want || (c.want == 1 && (list[0]["id"] != id || list[0]["name"] != "shop")) {
			t.Errorf("%s: %v, want %d catalog(s)", c.name, list, c.want)
		}
	}

	d := alice.Put(t, "/12/product_catalogs/"+id, url.Values{"name": {"renamed"}}).Status(t, http.StatusOK).Data(t)
	if d["name"] != "renamed" || d["id"] != id {
		t.Fatalf("rename: %v", d)
	}
	alice.Put(t, "/12/product_catalogs/"+id, nil).Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "name")

	upsert(t, alice, id, product("a"), product("b"))
	d = alice.Delete(t, "/12/product_catalogs/"+id, nil).Status(t, http.StatusOK).Data(t)
	if d["id"] != id || d["name"] != "renamed" {
		t.Fatalf("delete: %v", d)
	}
	var left int
	s.Scan(t, `SELECT count(*) FROM products WHERE catalog_id = $1`, []any{id}, &left)
	if left != 0 {
		t.Fatalf("%d products left after the catalog's delete", left)
	}
	alice.Delete(t, "/12/product_catalogs/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	alice.Get(t, productsPath(id), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	// permanent: a new catalog can be made
	if newCatalog(t, alice) == id {
		t.Fatal("the deleted catalog came back")
	}
}

func TestCatalogFeatureGate(t *testing.T) {
	s := adstest.New(t)
	noAccount, noFeature, other := s.User(t, "none"), s.User(t, "plain"), s.User(t, "other")
	noFeature.Account(t)
	early(t, s, other)
	catalog := newCatalog(t, other)
	for _, c := range []*adstest.Caller{noAccount, noFeature} {
		c.Get(t, "/12/product_catalogs", nil).Fails(t, http.StatusBadRequest, "FEATURE_NOT_AVAILABLE", "")
		c.Post(t, "/12/product_catalogs", url.Values{"name": {"x"}}).Fails(t, http.StatusBadRequest, "FEATURE_NOT_AVAILABLE", "")
		// another user's catalog stays a 404, feature or not
		c.Get(t, productsPath(catalog), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	}
	// a granted account with the feature opens catalogs
	acct := other.Account(t)
	if err := s.DB.SetAdAccountFeature(t.Context(), acct.ID, storage.FeatureCatalogs, true); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.GrantAdAccount(t.Context(), acct.ID, noFeature.User.ID); err != nil {
		t.Fatal(err)
	}
	noFeature.Get(t, "/12/product_catalogs", nil).Status(t, http.StatusOK)
	mine := newCatalog(t, noFeature)
	// the feature withdrawn: the catalog is kept but refused
	for _, a := range []string{acct.ID} {
		if err := s.DB.SetAdAccountFeature(t.Context(), a, storage.FeatureCatalogs, false); err != nil {
			t.Fatal(err)
		}
	}
	noFeature.Get(t, productsPath(mine), nil).Fails(t, http.StatusBadRequest, "FEATURE_NOT_AVAILABLE", "")
	noFeature.Post(t, "/12/product_catalogs", url.Values{"name": {"x"}, "user_id": {fmt.Sprint(other.User.ID)}}).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "user_id")
}

func TestCatalogTenancy(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	early(t, s, alice)
	early(t, s, bob)
	bobs := newCatalog(t, bob)
	upsert(t, bob, bobs, product("b1"))
	missing := "zz" + bobs
	for _, id := range []string{bobs, missing} {
		alice.Get(t, productsPath(id), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
		alice.DoJSON(t, http.MethodPut, productsPath(id), batch(product("x"))).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
		alice.Put(t, "/12/product_catalogs/"+id, url.Values{"name": {"mine"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
		alice.Delete(t, "/12/product_catalogs/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	}
	list := bob.Get(t, productsPath(bobs), nil).Status(t, http.StatusOK).List(t)
	if len(list) != 1 || list[0]["id"] != "b1" {
		t.Fatalf("bob's products changed: %v", list)
	}
	if d := bob.Get(t, "/12/product_catalogs", nil).Status(t, http.StatusOK).List(t); d[0]["name"] != "shop" {
		t.Fatalf("bob's catalog renamed: %v", d)
	}
}

// TestCatalogSides: production and sandbox catalogs never mix. A
// production catalog is missing on the sandbox listener (every endpoint
// answers the 404 of a missing catalog, the list is empty) and the other
// way round; a user has one catalog per side; the CATALOGS feature counts
// only on accounts of the listener's side.
func TestCatalogSides(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	box := alice.Sandbox()
	early(t, s, alice)
	// a production account's feature does not open sandbox catalogs
	box.Get(t, "/12/product_catalogs", nil).Fails(t, http.StatusBadRequest, "FEATURE_NOT_AVAILABLE", "")
	prod := newCatalog(t, alice)
	upsert(t, alice, prod, product("p1"))
	early(t, s, box)

	if list := box.Get(t, "/12/product_catalogs", nil).Status(t, http.StatusOK).List(t); len(list) != 0 {
		t.Fatalf("sandbox lists production catalogs: %v", list)
	}
	box.Get(t, productsPath(prod), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	box.DoJSON(t, http.MethodPut, productsPath(prod), batch(product("x"))).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	box.Put(t, "/12/product_catalogs/"+prod, url.Values{"name": {"boxed"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	box.Delete(t, "/12/product_catalogs/"+prod, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")

	// one catalog per side: the sandbox one is created beside it
	sand := newCatalog(t, box)
	if sand == prod {
		t.Fatal("the sandbox catalog is the production one")
	}
	box.Post(t, "/12/product_catalogs", url.Values{"name": {"again"}}).Fails(t, http.StatusBadRequest, "CATALOG_ALREADY_EXISTS", "name")
	upsert(t, box, sand, product("s1"))
	alice.Get(t, productsPath(sand), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	alice.DoJSON(t, http.MethodPut, productsPath(sand), batch(product("x"))).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	alice.Put(t, "/12/product_catalogs/"+sand, url.Values{"name": {"prod"}}).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")
	alice.Delete(t, "/12/product_catalogs/"+sand, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "product_catalog_id")

	for _, side := range []struct {
		name             string
		c                *adstest.Caller
		catalog, product string
	}{{"production", alice, prod, "p1"}, {"sandbox", box, sand, "s1"}} {
		list := side.c.Get(t, "/12/product_catalogs", nil).Status(t, http.StatusOK).List(t)
		if len(list) != 1 || list[0]["id"] != side.catalog || list[0]["name"] != "shop" {
			t.Errorf("%s catalogs: %v, want only %s", side.name, list, side.catalog)
		}
		products := side.c.Get(t, productsPath(side.catalog), nil).Status(t, http.StatusOK).List(t)
		if len(products) != 1 || products[0]["id"] != side.product {
			t.Errorf("%s products: %v, want only %s", side.name, products, side.product)
		}
	}
	box.Delete(t, "/12/product_catalogs/"+sand, nil).Status(t, http.StatusOK)
	alice.Get(t, productsPath(prod), nil).Status(t, http.StatusOK)

	// a sandbox account's feature does not open production catalogs
	carol := s.User(t, "carol")
	early(t, s, carol.Sandbox())
	carol.Sandbox().Get(t, "/12/product_catalogs", nil).Status(t, http.StatusOK)
	carol.Get(t, "/12/product_catalogs", nil).Fails(t, http.StatusBadRequest, "FEATURE_NOT_AVAILABLE", "")
}

func TestProductBatchBody(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	early(t, s, alice)
	id := newCatalog(t, alice)
	items := make([]map[string]any, 26)
	for i := range items {
		items[i] = product(fmt.Sprintf("p%d", i))
	}
	alice.DoJSON(t, http.MethodPut, productsPath(id), batch(items...)).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "products")
	upsert(t, alice, id, items[:25]...)
	alice.DoJSON(t, http.MethodPut, productsPath(id), map[string]any{}).Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "products")
	alice.DoJSON(t, http.MethodPut, productsPath(id), map[string]any{"products": []any{}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "products")
	alice.DoJSON(t, http.MethodPut, productsPath(id), map[string]any{"products": nil}).Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "products")
	alice.DoJSON(t, http.MethodPut, productsPath(id), map[string]any{"products": []any{}, "extra": 1}).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "body")
	alice.DoJSON(t, http.MethodPut, productsPath(id), "text").Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "body")
	r := alice.Put(t, productsPath(id), url.Values{"products": {"[]"}})
	if r.Code != http.StatusUnsupportedMediaType {
		t.Fatalf("form body: %d %s", r.Code, r.Raw)
	}
}

// TestProductBatchMixed sends valid, invalid, duplicate and variant items:
// each answered in order, only the valid ones stored and their image
// checks queued.
func TestProductBatchMixed(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	early(t, s, alice)
	id := newCatalog(t, alice)
	items := []map[string]any{
		product("ok", "title", "PLAIN SHOES"),
		product("bad", "price", "60,00 USD", "link", "http://shop.example/bad", "brand", nil),
		product("dup", "title", "One"),
		product("v1", "title", "Tee", "size", "S", "item_group_id", "tee"),
		product("dup", "title", "Two"),
		product("v2", "title", "Tee", "size", "M", "item_group_id", "tee"),
		product("v3", "title", "Tee", "size", "L"),
	}
	out := upsert(t, alice, id, items...)
	want := []struct {
		status, review string
		errors         string
		warnings       string
	}{
		{"CREATE_SUCCESS", "PENDING", "", "title:all_caps"},
		{"ERROR", "", "price:price_format|link:https_url|brand:required_without_all|gtin:required_without_all|mpn:required_without_all", ""},
		{"ERROR", "", "id:duplicate_id", ""},
		{"CREATE_SUCCESS", "PENDING", "", ""},
		{"ERROR", "", "id:duplicate_id", ""},
		{"CREATE_SUCCESS", "PENDING", "", ""},
		{"ERROR", "", "item_group_id:item_group_id_required", ""},
	}
	for i, w := range want {
		o := out[i]
		if o["id"] != items[i]["id"] || o["status"] != w.status {
			t.Errorf("item %d: id %v status %v, want %v %s", i, o["id"], o["status"], items[i]["id"], w.status)
		}
		if got := strings.Join(issueKeys(o, "errors"), "|"); got != w.errors {
			t.Errorf("item %d errors %q, want %q", i, got, w.errors)
		}
		if got := strings.Join(issueKeys(o, "warnings"), "|"); got != w.warnings {
			t.Errorf("item %d warnings %q, want %q", i, got, w.warnings)
		}
		key, _ := o["product_key"].(string)
		review, _ := o["review_status"].(string)
		if review != w.review || (w.status == "ERROR") != (key == "") {
			t.Errorf("item %d: product_key %q review_status %q", i, key, review)
		}
	}
	var stored []string
	rows, err := s.SQL().Query(t.Context(), `SELECT id FROM products WHERE catalog_id = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pid string
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, pid)
	}
	if strings.Join(stored, ",") != "ok,v1,v2" {
		t.Fatalf("stored %v, want ok,v1,v2", stored)
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: s.RedisAddr, DB: s.RedisDB})
	defer insp.Close()
	for _, i := range []int{0, 3, 5} {
		info, err := insp.GetTaskInfo(tasks.QueueCatalogs, tasks.CatalogImagesTaskID(out[i]["product_key"].(string), 1))
		if err != nil || info.Type != tasks.TypeCatalogImages {
			t.Errorf("image check of %v not queued: %v", out[i]["id"], err)
		}
	}
}

// TestProductUpdate: a known id updates the product (version+1, same
// product_key, back to PENDING and queued again); the same fields again are
// NO_CHANGE; a product_key that is not the id's is refused.
func TestProductUpdate(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	early(t, s, alice)
	id := newCatalog(t, alice)
	key := upsert(t, alice, id, product("p"))[0]["product_key"].(string)
	s.Exec(t, `UPDATE products SET status = 'ACCEPTED', images_checked_version = 1 WHERE catalog_id = $1`, id)

	cases := []struct {
		name    string
		item    map[string]any
		status  string
		review  string
		version int
	}{
		{"same fields", product("p"), "NO_CHANGE", "ACCEPTED", 1},
		{"new title", product("p", "title", "Renamed shoe"), "UPDATE_SUCCESS", "PENDING", 2},
		{"with its product_key", product("p", "title", "Again", "product_key", key), "UPDATE_SUCCESS", "PENDING", 3},
		{"another product_key", product("p", "title", "No", "product_key", "123"), "ERROR", "", 3},
		{"product_key of an unknown id", product("new", "product_key", key), "ERROR", "", 0},
	}
	for _, c := range cases {
		o := upsert(t, alice, id, c.item)[0]
		review, _ := o["review_status"].(string)
		if o["status"] != c.status || review != c.review {
			t.Errorf("%s: status %v review %q, want %s %q (%v)", c.name, o["status"], review, c.status, c.review, o)
		}
		if c.status != "ERROR" && o["product_key"] != key {
			t.Errorf("%s: product_key %v, want %s", c.name, o["product_key"], key)
		}
		if c.status == "ERROR" && !strings.Contains(strings.Join(issueKeys(o, "errors"), "|"), "product_key:product_key_mismatch") {
			t.Errorf("%s: errors %v", c.name, o["errors"])
		}
		var version int
		s.Scan(t, `SELECT coalesce(max(version), 0) FROM products WHERE catalog_id = $1 AND id = $2`, []any{id, c.item["id"]}, &version)
		if version != c.version {
			t.Errorf("%s: version %d, want %d", c.name, version, c.version)
		}
	}
	list := alice.Get(t, productsPath(id), nil).Status(t, http.StatusOK).List(t)
	if len(list) != 1 || list[0]["title"] != "Again" || list[0]["product_key"] != key {
		t.Fatalf("list after updates: %v", list)
	}
}

// TestProductListGrouping: only the first submitted variant of a group is
// listed, item_group_key lists the group, pages follow submission order.
func TestProductListGrouping(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	early(t, s, alice)
	id := newCatalog(t, alice)
	upsert(t, alice, id, product("solo1"),
		product("red-s", "title", "Tee", "color", "red", "size", "S", "item_group_id", "tee"),
		product("red-m", "title", "Tee", "color", "red", "size", "M", "item_group_id", "tee"))
	upsert(t, alice, id, product("solo2"), product("red-l", "title", "Tee", "color", "red", "size", "L", "item_group_id", "tee"))
	// updating the first variant keeps it first
	upsert(t, alice, id, product("red-s", "title", "Tee", "color", "red", "size", "S", "item_group_id", "tee", "inventory", 9))

	ids := func(list []map[string]any) string {
		var out []string
		for _, p := range list {
			out = append(out, p["id"].(string))
		}
		return strings.Join(out, ",")
	}
	all := alice.Get(t, productsPath(id), nil).Status(t, http.StatusOK).List(t)
	if got := ids(all); got != "solo1,red-s,solo2" {
		t.Fatalf("listed %s, want solo1,red-s,solo2", got)
	}
	group, _ := all[1]["item_group_key"].(string)
	if group == "" || all[0]["item_group_key"] != nil {
		t.Fatalf("item_group_key %v / %v", all[1]["item_group_key"], all[0]["item_group_key"])
	}
	variants := alice.Get(t, productsPath(id), url.Values{"item_group_key": {group}}).Status(t, http.StatusOK).List(t)
	if got := ids(variants); got != "red-s,red-m,red-l" {
		t.Fatalf("group listed %s", got)
	}
	// pages of one
	var walked []map[string]any
	q := url.Values{"count": {"1"}}
	for range 5 {
		r := alice.Get(t, productsPath(id), q).Status(t, http.StatusOK)
		walked = append(walked, r.List(t)...)
		if r.NextCursor() == "" {
			break
		}
		q = url.Values{"count": {"1"}, "cursor": {r.NextCursor()}}
	}
	if got := ids(walked); got != "solo1,red-s,solo2" {
		t.Fatalf("walked %s", got)
	}
	alice.Get(t, productsPath(id), url.Values{"count": {"101"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "count")
	alice.Get(t, productsPath(id), url.Values{"item_group_key": {"a b"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "item_group_key")
	p := all[0]
	for _, k := range []string{"price", "link", "image_link", "brand", "gtin", "mpn", "sale_price", "custom_label_4", "age_group", "review_status", "errors", "warnings"} {
		if _, ok := p[k]; !ok {
			t.Errorf("product object without %s: %v", k, p)
		}
	}
}

// TestProductReviewStatus: what the image-check worker writes (simulated
// in SQL as its store does) shows in the list.
func TestProductReviewStatus(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	early(t, s, alice)
	id := newCatalog(t, alice)
	upsert(t, alice, id, product("a"), product("b"))
	list := alice.Get(t, productsPath(id), nil).Status(t, http.StatusOK).List(t)
	for _, p := range list {
		if p["review_status"] != storage.ProductPendingImages {
			t.Fatalf("new product %v: review_status %v", p["id"], p["review_status"])
		}
	}
	s.Exec(t, `UPDATE products SET status = $2, images_checked_version = version WHERE catalog_id = $1 AND id = 'a'`, id, storage.ProductAccepted)
	s.Exec(t, `UPDATE products SET status = $2, images_checked_version = version,
		errors = errors || '[{"field":"image_link","rule":"image_size","message":"image_link is 320x240 px"}]'::jsonb
		WHERE catalog_id = $1 AND id = 'b'`, id, storage.ProductRejected)
	list = alice.Get(t, productsPath(id), nil).Status(t, http.StatusOK).List(t)
	got := map[string]string{}
	for _, p := range list {
		got[p["id"].(string)] = fmt.Sprint(p["review_status"], " ", issueKeys(p, "errors"))
	}
	if got["a"] != "ACCEPTED []" || got["b"] != "REJECTED [image_link:image_size]" {
		t.Fatalf("review: %v", got)
	}
}
