package postgres_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/postgres"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func catalogProduct(id string, group *string, size string) storage.ProductUpsert {
	f := storage.ProductFields{ID: id, Title: "t " + id, Description: "d", Availability: "in stock", Condition: "new",
		Price: "1.00 USD", Link: "https://s.example/" + id, ImageLink: "https://i.example/" + id + ".png", ItemGroupID: group}
	if size != "" {
		f.Size = &size
	}
	return storage.ProductUpsert{Fields: f, Warnings: []storage.ProductIssue{{Field: "title", Rule: "all_caps", Message: "m"}}}
}

func TestProductCatalogStore(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	acct := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &alice})

	for _, c := range []struct {
		name string
		on   bool
		want bool
	}{{"without", false, false}, {"with", true, true}} {
		if err := db.SetAdAccountFeature(ctx, acct.ID, storage.FeatureCatalogs, c.on); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.UserHasAdFeature(ctx, alice.ID, storage.FeatureCatalogs, false); err != nil || ok != c.want {
			t.Errorf("%s feature: %v %v, want %v", c.name, ok, err, c.want)
		}
	}
	if ok, _ := db.UserHasAdFeature(ctx, alice.ID, storage.FeatureCatalogs, true); ok {
		t.Error("a production account's feature counted on the sandbox side")
	}

	cat, err := db.CreateProductCatalog(ctx, alice.ID, false, "shop")
	if err != nil || cat.Sandbox {
		t.Fatalf("create: %+v, %v", cat, err)
	}
	if _, err := db.CreateProductCatalog(ctx, alice.ID, false, "second"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("second catalog: %v, want ErrConflict", err)
	}
	if _, err := db.ProductCatalog(ctx, bob.ID, false, cat.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("bob loads alice's catalog: %v", err)
	}
	if _, err := db.UpsertProducts(ctx, bob.ID, false, cat.ID, []storage.ProductUpsert{catalogProduct("x", nil, "")}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("bob upserts into alice's catalog: %v", err)
	}
	sideCatalogs(t, db, alice.ID, cat)

	g := "tee"
	first, err := db.UpsertProducts(ctx, alice.ID, false, cat.ID, []storage.ProductUpsert{
		catalogProduct("solo", nil, ""), catalogProduct("tee-s", &g, "S"), catalogProduct("tee-m", &g, "M")})
	if err != nil {
		t.Fatal(err)
	}
	changed := catalogProduct("solo", nil, "")
	changed.Fields.Title = "changed"
	wrongKey := "nope"
	keyed := catalogProduct("tee-s", &g, "S")
	keyed.Key = &wrongKey
	second, err := db.UpsertProducts(ctx, alice.ID, false, cat.ID, []storage.ProductUpsert{
		changed, catalogProduct("tee-m", &g, "M"), keyed, catalogProduct("tee-l", &g, "L")})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		got     storage.ProductUpserted
		outcome string
		version int64
		key     string
	}{
		{"create", first[0], storage.ProductCreateSuccess, 1, ""},
		{"update", second[0], storage.ProductUpdateSuccess, 2, first[0].Key},
		{"no change", second[1], storage.ProductNoChange, 1, first[2].Key},
		{"wrong key", second[2], storage.ProductError, 0, ""},
		{"create in a known group", second[3], storage.ProductCreateSuccess, 1, ""},
	}
	for _, c := range cases {
		if c.got.Outcome != c.outcome || c.got.Version != c.version || (c.key != "" && c.got.Key != c.key) {
			t.Errorf("%s: %+v, want %s version %d key %q", c.name, c.got, c.outcome, c.version, c.key)
		}
	}

	page, err := db.ListProducts(ctx, storage.ProductFilter{CatalogID: cat.ID, Sandbox: false}, storage.ListOptions{Count: 10,
		Sort: storage.Sort{Field: "submission_order"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range page.Items {
		ids = append(ids, p.Fields.ID)
	}
	if strings.Join(ids, ",") != "solo,tee-s" || page.Items[0].Status != storage.ProductPendingImages ||
		page.Items[0].Fields.Title != "changed" || len(page.Items[0].Warnings) != 1 {
		t.Fatalf("list: %v %+v", ids, page.Items[0])
	}
	groupKey := *page.Items[1].ItemGroupKey
	page, err = db.ListProducts(ctx, storage.ProductFilter{CatalogID: cat.ID, ItemGroupKey: groupKey}, storage.ListOptions{Count: 10,
		Sort: storage.Sort{Field: "submission_order"}})
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("group list: %v %d items", err, len(page.Items))
	}
	for _, p := range page.Items {
		if *p.ItemGroupKey != groupKey {
			t.Errorf("%s in group %s, want %s", p.Fields.ID, *p.ItemGroupKey, groupKey)
		}
	}

	if _, err := db.DeleteProductCatalog(ctx, bob.ID, false, cat.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("bob deletes alice's catalog: %v", err)
	}
	if _, err := db.DeleteProductCatalog(ctx, alice.ID, false, cat.ID); err != nil {
		t.Fatal(err)
	}
	page, err = db.ListProducts(ctx, storage.ProductFilter{CatalogID: cat.ID, Sandbox: false}, storage.ListOptions{Count: 10,
		Sort: storage.Sort{Field: "submission_order"}})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("products after delete: %v %d", err, len(page.Items))
	}
}

// sideCatalogs: the production catalog prod of user is missing to every
// query of the sandbox side (load, rename, delete, upsert, list), and the
// user may have one sandbox catalog besides it, missing on production.
func sideCatalogs(t *testing.T, db *postgres.DB, user int64, prod storage.ProductCatalog) {
	t.Helper()
	ctx := t.Context()
	if _, err := db.ProductCatalog(ctx, user, true, prod.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("sandbox side loads the production catalog: %v", err)
	}
	if _, err := db.RenameProductCatalog(ctx, user, true, prod.ID, "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("sandbox side renames the production catalog: %v", err)
	}
	if _, err := db.DeleteProductCatalog(ctx, user, true, prod.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("sandbox side deletes the production catalog: %v", err)
	}
	if _, err := db.UpsertProducts(ctx, user, true, prod.ID, []storage.ProductUpsert{catalogProduct("x", nil, "")}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("sandbox side upserts into the production catalog: %v", err)
	}
	if cats, err := db.ProductCatalogsOf(ctx, user, true); err != nil || len(cats) != 0 {
		t.Fatalf("sandbox side lists %+v, %v; want none", cats, err)
	}
	box, err := db.CreateProductCatalog(ctx, user, true, "sandbox shop")
	if err != nil || !box.Sandbox || box.ID == prod.ID {
		t.Fatalf("sandbox catalog beside the production one: %+v, %v", box, err)
	}
	if _, err := db.CreateProductCatalog(ctx, user, true, "again"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("second sandbox catalog: %v, want ErrConflict", err)
	}
	if _, err := db.UpsertProducts(ctx, user, true, box.ID, []storage.ProductUpsert{catalogProduct("boxed", nil, "")}); err != nil {
		t.Fatal(err)
	}
	opts := storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "submission_order"}}
	if page, err := db.ListProducts(ctx, storage.ProductFilter{CatalogID: box.ID}, opts); err != nil || len(page.Items) != 0 {
		t.Fatalf("production side lists the sandbox catalog's products: %d, %v", len(page.Items), err)
	}
	if page, err := db.ListProducts(ctx, storage.ProductFilter{CatalogID: box.ID, Sandbox: true}, opts); err != nil || len(page.Items) != 1 {
		t.Fatalf("sandbox side lists %d products, %v; want 1", len(page.Items), err)
	}
	for _, sandbox := range []bool{false, true} {
		cats, err := db.ProductCatalogsOf(ctx, user, sandbox)
		if err != nil || len(cats) != 1 || cats[0].Sandbox != sandbox {
			t.Fatalf("catalogs of side sandbox=%v: %+v, %v", sandbox, cats, err)
		}
	}
	if _, err := db.ProductCatalog(ctx, user, false, box.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("production side loads the sandbox catalog: %v", err)
	}
}
