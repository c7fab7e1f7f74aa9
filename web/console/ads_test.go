package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// adsFixture is alice's and bob's ads data: an account each with a
// campaign and a line item, a custom audience with an applied and a
// pending batch, a product catalog, and a logged insights query.
type adsFixture struct {
	aliceAcct, bobAcct, sharedAcct storage.AdAccount
	campaign, lineItem, funding    string
	audience, bobAudience          string
	applied, pending               storage.AudienceBatch
	catalog, bobCatalog            storage.ProductCatalog
}

func setupAds(t *testing.T, f *fixture) adsFixture {
	t.Helper()
	ctx := t.Context()
	var a adsFixture
	a.aliceAcct = factory.AdAccount(t, f.db, &factory.AdAccountOpts{Owner: &f.alice, Name: "alice-ads"})
	a.bobAcct = factory.AdAccount(t, f.db, &factory.AdAccountOpts{Owner: &f.bob, Name: "bob-ads"})
	a.sharedAcct = factory.AdAccount(t, f.db, &factory.AdAccountOpts{Owner: &f.bob, Name: "bob-shared-ads", Sandbox: true})
	if err := f.db.GrantAdAccount(ctx, a.sharedAcct.ID, f.alice.ID); err != nil {
		t.Fatal(err)
	}
	a.funding, a.campaign, a.lineItem = factory.AdsChain(t, f.db, a.aliceAcct.ID)
	aud := func(acct storage.AdAccount, name string) string {
		v, err := f.db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return v.ID
	}
	a.audience, a.bobAudience = aud(a.aliceAcct, "alice-audience"), aud(a.bobAcct, "bob-audience")
	now := time.Now().UTC()
	record := func(key string, n int) storage.AudienceBatch {
		keys := make([]storage.MemberKey, n)
		for i := range keys {
			keys[i] = factory.MemberKey(storage.IdentEmail, key+string(rune('a'+i)))
		}
		b, err := f.db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: a.aliceAcct.ID, AudienceID: a.audience, IdempotencyKey: key,
			Operations: []storage.AudienceOperation{{Type: storage.AudienceUpdate, Users: n, Keys: keys, EffectiveAt: now, ExpiresAt: now.AddDate(1, 0, 0)}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a.applied = record("first", 3)
	if _, err := f.db.ApplyAudienceBatch(ctx, a.applied.ID, func([]storage.AudienceOperation) error { return nil }); err != nil {
		t.Fatal(err)
	}
	a.pending = record("second", 2)
	var err error
	if a.catalog, err = f.db.CreateProductCatalog(ctx, f.alice.ID, false, "alice-shop"); err != nil {
		t.Fatal(err)
	}
	if a.bobCatalog, err = f.db.CreateProductCatalog(ctx, f.bob.ID, false, "bob-shop"); err != nil {
		t.Fatal(err)
	}
	fields := storage.ProductFields{ID: "sku-1", Title: "Blue mug", Description: "d", Availability: "in stock", Condition: "new",
		Price: "1.00 USD", Link: "https://shop.example/1", ImageLink: "https://shop.example/1.png"}
	if _, err := f.db.UpsertProducts(ctx, f.alice.ID, false, a.catalog.ID, []storage.ProductUpsert{{Fields: fields}}); err != nil {
		t.Fatal(err)
	}
	for acct, kw := range map[string]string{a.aliceAcct.ID: "alicekeyword", a.bobAcct.ID: "bobkeyword"} {
		if err := f.db.RecordInsightQuery(ctx, storage.InsightQueryLog{AppID: f.aliceApp.ID, UserID: f.alice.ID, AccountID: acct,
			Granularity: "HOUR", Keywords: []string{kw}, Location: "US", Start: now.Add(-time.Hour), End: now, Buckets: 1, TotalVolume: 42}); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// TestConsoleAds: a user sees the ads accounts they own or were granted,
// with campaigns, line items, audiences and their batches, catalogs and
// insights queries; another user's account, audience or catalog answers
// 404 as an unknown one; the administrator sees all.
func TestConsoleAds(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a := setupAds(t, f)
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)
	acct := "/console/ads/accounts/" + a.aliceAcct.ID
	bob := "/console/ads/accounts/" + a.bobAcct.ID
	for _, tc := range []struct {
		name   string
		who    *browser
		path   string
		status int
		want   []string
		absent []string
	}{
		{"alice's accounts", alice, "/console/ads/accounts", http.StatusOK,
			[]string{a.aliceAcct.ID, "alice-ads", a.sharedAcct.ID, "sandbox", `href="/console/ads/accounts" aria-current="page"`}, []string{a.bobAcct.ID, "bob-ads<"}},
		{"alice's account", alice, acct, http.StatusOK,
			[]string{"campaign-" + a.campaign, "line-item-" + a.lineItem, "funding-" + a.funding, "100 USD", "ENGAGEMENTS", "AUTO", "Card ending 4242"}, nil},
		{"a granted account", alice, "/console/ads/accounts/" + a.sharedAcct.ID, http.StatusOK, []string{"bob-shared-ads", "@" + f.bob.Username}, nil},
		{"alice's audiences", alice, acct + "/audiences", http.StatusOK, []string{"alice-audience", "owner"}, []string{"bob-audience"}},
		{"alice's audience", alice, acct + "/audiences/" + a.audience, http.StatusOK,
			[]string{"batch-" + a.applied.ID + `-status">APPLIED`, "batch-" + a.pending.ID + `-status">PENDING`, "Update 3 / 3", `hx-trigger="every 2s"`}, nil},
		{"alice's insights", alice, acct + "/insights", http.StatusOK, []string{"alicekeyword", "42", "US"}, []string{"bobkeyword"}},
		{"alice's catalogs", alice, "/console/ads/catalogs", http.StatusOK, []string{"alice-shop"}, []string{"bob-shop"}},
		{"alice's catalog", alice, "/console/ads/catalogs/" + a.catalog.ID, http.StatusOK, []string{"sku-1", "Blue mug", "PENDING", `hx-trigger="every 2s"`}, nil},
		{"bob's account", alice, bob, http.StatusNotFound, nil, []string{"bob-ads"}},
		{"bob's audiences", alice, bob + "/audiences", http.StatusNotFound, nil, []string{"bob-audience"}},
		{"bob's audience", alice, bob + "/audiences/" + a.bobAudience, http.StatusNotFound, nil, nil},
		{"bob's audience under alice's account", alice, acct + "/audiences/" + a.bobAudience, http.StatusNotFound, nil, nil},
		{"bob's audience batches", alice, bob + "/audiences/" + a.bobAudience + "/batches", http.StatusNotFound, nil, nil},
		{"bob's insights", alice, bob + "/insights", http.StatusNotFound, nil, []string{"bobkeyword"}},
		{"bob's catalog", alice, "/console/ads/catalogs/" + a.bobCatalog.ID, http.StatusNotFound, nil, []string{"bob-shop"}},
		{"bob's catalog products", alice, "/console/ads/catalogs/" + a.bobCatalog.ID + "/products", http.StatusNotFound, nil, nil},
		{"an unknown account", alice, "/console/ads/accounts/zzzz", http.StatusNotFound, nil, nil},
		{"every account", admin, "/console/ads/accounts", http.StatusOK, []string{a.aliceAcct.ID, a.bobAcct.ID, a.sharedAcct.ID}, nil},
		{"bob's account, administrator", admin, bob, http.StatusOK, []string{"bob-ads"}, nil},
		{"bob's audience, administrator", admin, bob + "/audiences/" + a.bobAudience, http.StatusOK, []string{"bob-audience", "No batch yet"}, nil},
		{"bob's insights, administrator", admin, bob + "/insights", http.StatusOK, []string{"bobkeyword"}, nil},
		{"every catalog", admin, "/console/ads/catalogs", http.StatusOK, []string{"alice-shop", "bob-shop"}, nil},
		{"bob's catalog, administrator", admin, "/console/ads/catalogs/" + a.bobCatalog.ID, http.StatusOK, []string{"bob-shop", "No product yet"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.who.get(tc.path)
			if p.status != tc.status {
				t.Fatalf("GET %s: %d, want %d\n%s", tc.path, p.status, tc.status, p.body)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.body, w) {
					t.Errorf("GET %s lacks %q", tc.path, w)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(p.body, w) {
					t.Errorf("GET %s shows %q", tc.path, w)
				}
			}
		})
	}
}

// TestConsoleAdsPolling: an audience's batch table and a catalog's
// product table poll their fragment while work is pending, and stop once
// it is settled.
func TestConsoleAdsPolling(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a := setupAds(t, f)
	ctx := t.Context()
	alice := f.login(t, f.alice)
	batches := "/console/ads/accounts/" + a.aliceAcct.ID + "/audiences/" + a.audience + "/batches"
	products := "/console/ads/catalogs/" + a.catalog.ID + "/products"
	fragment := func(path string, polls bool, want string) {
		t.Helper()
		p := alice.htmx(path)
		if p.status != http.StatusOK || strings.Contains(p.body, "<html") || strings.Contains(p.body, `hx-trigger="every 2s"`) != polls ||
			!strings.Contains(p.body, want) {
			t.Errorf("fragment %s (polls %v, want %q): %d\n%s", path, polls, want, p.status, p.body)
		}
	}
	fragment(batches, true, "batch-"+a.pending.ID+`-status">PENDING`)
	fragment(products, true, `-status">PENDING`)
	if _, err := f.db.ApplyAudienceBatch(ctx, a.pending.ID, func([]storage.AudienceOperation) error { return nil }); err != nil {
		t.Fatal(err)
	}
	broken := storage.ProductIssue{Field: "image_link", Rule: "not_an_image", Message: "the link is not an image"}
	list, err := f.db.ConsoleCatalogProducts(ctx, a.catalog.ID, 10)
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	if err := f.db.RecordProductImages(ctx, a.catalog.ID, "sku-1", list[0].Version, storage.ProductRejected, []storage.ProductIssue{broken}, nil); err != nil {
		t.Fatal(err)
	}
	fragment(batches, false, "batch-"+a.pending.ID+`-status">APPLIED`)
	fragment(products, false, "the link is not an image")
	if p := alice.get("/console/ads/catalogs"); !strings.Contains(p.body, "<td>1</td><td>1</td><td>0</td>") {
		t.Errorf("catalog counts (1 product, 1 with errors, none pending):\n%s", p.body)
	}
}
