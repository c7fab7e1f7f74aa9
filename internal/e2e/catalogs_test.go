package e2e

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// catalogImageServer serves product images for the catalog test: a good
// PNG, a small one, text named .png, and a redirect to target (a loopback
// address that is not on the allow-list).
func catalogImageServer(t *testing.T, target string) *httptest.Server {
	t.Helper()
	encode := func(side int) []byte {
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		for i := range side {
			img.Set(i, i, color.RGBA{R: 200, A: 255})
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	files := map[string][]byte{"/ok.png": encode(600), "/small.png": encode(100), "/notes.png": []byte("not an image")}
	mux := http.NewServeMux()
	for path, b := range files {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) { w.Write(b) })
	}
	mux.HandleFunc("GET /redirect.png", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// refusedTarget is a loopback listener that counts connections: image
// checks must never reach it.
func refusedTarget(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int64{}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	return ln.Addr().String(), accepted
}

func catalogProduct(id, imageLink string, extra ...string) map[string]any {
	p := map[string]any{
		"id": id, "title": "Product " + id, "description": "A product.", "availability": "in stock",
		"condition": "new", "price": "12.50 USD", "link": "https://shop.example/" + id,
		"image_link": imageLink, "brand": "Aviary", "inventory": 5,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i]] = extra[i+1]
	}
	return p
}

// catalogCall sends a signed ads request as the demo user.
func (s *stack) catalogCall(method, path string, body any) response {
	s.t.Helper()
	if body != nil {
		return s.signedJSONAt(s.demoToken(), s.baseURL, method, path, body)
	}
	return s.signedAt(s.demoToken(), s.baseURL, method, path, nil, "")
}

// productsByID lists a catalog's products (one page) by id.
func (s *stack) productsByID(catalog, query string) map[string]map[string]any {
	s.t.Helper()
	r := s.catalogCall(http.MethodGet, "/12/product_catalogs/"+catalog+"/products?count=100"+query, nil)
	raw, ok := r.Body["data"].([]any)
	if r.Status != http.StatusOK || !ok {
		s.t.Fatalf("list products: %d %s", r.Status, r.Raw)
	}
	out := map[string]map[string]any{}
	for _, item := range raw {
		p := item.(map[string]any)
		out[p["id"].(string)] = p
	}
	return out
}

// awaitChecks polls the catalog until no listed product is PENDING.
func (s *stack) awaitChecks(catalog, query string) map[string]map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		products := s.productsByID(catalog, query)
		pending := 0
		for _, p := range products {
			if p["review_status"] == "PENDING" {
				pending++
			}
		}
		if pending == 0 {
			return products
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d products still PENDING after 60s: %v", pending, products)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func issueRules(p map[string]any, key string) []string {
	var out []string
	list, _ := p[key].([]any)
	for _, i := range list {
		m := i.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s", m["field"], m["rule"]))
	}
	return out
}

// TestCatalogImageChecks drives product catalogs through the HTTP API with
// a worker checking images against a local image server (allow-listed):
// a mixed batch (valid, invalid, duplicate ids, variants), image checks
// accepted and rejected (too small, not an image, the metadata address, a
// redirect to loopback — never connected to), listing with and without
// item_group_key, an update re-checked, and the catalog deleted.
func TestCatalogImageChecks(t *testing.T) {
	targetAddr, accepted := refusedTarget(t)
	images := catalogImageServer(t, "http://"+targetAddr+"/secret.png")
	imagesAddr := strings.TrimPrefix(images.URL, "http://")
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{"AVIARY_FETCH_ALLOWLIST=" + imagesAddr, clientTestTimeout}})

	created := s.catalogCall(http.MethodPost, "/12/product_catalogs?"+url.Values{"name": {"e2e"}, "user_id": {s.creds.UserID}}.Encode(), nil)
	catalog, _ := created.Body["data"].(map[string]any)
	if created.Status != http.StatusOK || catalog == nil {
		t.Fatalf("create catalog: %d %s", created.Status, created.Raw)
	}
	id := catalog["id"].(string)
	base := images.URL
	batch := []any{
		catalogProduct("ok", base+"/ok.png", "additional_image_link", base+"/ok.png, "+base+"/ok.png"),
		catalogProduct("small", base+"/small.png"),
		catalogProduct("notimage", base+"/notes.png"),
		catalogProduct("metadata", "http://169.254.169.254/latest/meta-data/iam.png"),
		catalogProduct("redirect", base+"/redirect.png"),
		catalogProduct("invalid", base+"/ok.png", "condition", "like new"),
		catalogProduct("dup", base+"/ok.png"),
		catalogProduct("dup", base+"/ok.png"),
		catalogProduct("v1", base+"/ok.png", "item_group_id", "shoe", "color", "red"),
		catalogProduct("v2", base+"/ok.png", "item_group_id", "shoe", "color", "blue",
			"additional_image_link", base+"/ok.png,"+base+"/small.png"),
	}
	put := s.catalogCall(http.MethodPut, "/12/product_catalogs/"+id+"/products", map[string]any{"products": batch})
	if put.Status != http.StatusOK {
		t.Fatalf("PUT products: %d %s", put.Status, put.Raw)
	}
	answer, _ := put.Body["data"].(map[string]any)["products_response"].([]any)
	statuses := make([]string, len(answer))
	for i, a := range answer {
		statuses[i], _ = a.(map[string]any)["status"].(string)
	}
	if len(statuses) != len(batch) || statuses[0] != "CREATE_SUCCESS" || statuses[5] != "ERROR" || statuses[6] != "ERROR" || statuses[7] != "ERROR" {
		t.Fatalf("batch outcomes %v: want CREATE_SUCCESS for valid items, ERROR for the invalid and duplicate ones", statuses)
	}

	listed := s.awaitChecks(id, "")
	want := map[string]struct {
		status string
		errors string
	}{
		"ok":       {"ACCEPTED", ""},
		"small":    {"REJECTED", "image_link:too_small"},
		"notimage": {"REJECTED", "image_link:not_an_image"},
		"metadata": {"REJECTED", "image_link:refused_address"},
		"redirect": {"REJECTED", "image_link:refused_address"},
		"v1":       {"ACCEPTED", ""},
	}
	if len(listed) != len(want) {
		t.Fatalf("listed %d products (%v), want %d: no invalid, duplicate or second variant", len(listed), productIDs(listed), len(want))
	}
	for pid, w := range want {
		p := listed[pid]
		if p == nil || p["review_status"] != w.status || strings.Join(issueRules(p, "errors"), ",") != w.errors {
			t.Fatalf("product %s: %v, want %s with errors %q", pid, p, w.status, w.errors)
		}
	}
	if w := issueRules(listed["ok"], "warnings"); len(w) == 0 {
		t.Fatalf("product ok: the validation warnings (http image links) were not kept: %v", listed["ok"])
	}

	groupKey, _ := listed["v1"]["item_group_key"].(string)
	variants := s.awaitChecks(id, "&item_group_key="+url.QueryEscape(groupKey))
	if len(variants) != 2 || variants["v2"]["review_status"] != "REJECTED" ||
		strings.Join(issueRules(variants["v2"], "errors"), ",") != "additional_image_link[1]:too_small" {
		t.Fatalf("variants of %s: %v", groupKey, variants)
	}

	fixed := s.catalogCall(http.MethodPut, "/12/product_catalogs/"+id+"/products",
		map[string]any{"products": []any{catalogProduct("small", base+"/ok.png")}})
	if fixed.Status != http.StatusOK {
		t.Fatalf("update: %d %s", fixed.Status, fixed.Raw)
	}
	if p := s.awaitChecks(id, "")["small"]; p["review_status"] != "ACCEPTED" || len(issueRules(p, "errors")) != 0 {
		t.Fatalf("updated product: %v, want ACCEPTED without errors", p)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the loopback target behind the redirect accepted %d connections", n)
	}

	if r := s.catalogCall(http.MethodDelete, "/12/product_catalogs/"+id, nil); r.Status != http.StatusOK {
		t.Fatalf("delete catalog: %d %s", r.Status, r.Raw)
	}
	if r := s.catalogCall(http.MethodGet, "/12/product_catalogs/"+id+"/products", nil); r.Status != http.StatusNotFound {
		t.Fatalf("products of a deleted catalog: %d %s, want 404", r.Status, r.Raw)
	}
}

func productIDs(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
