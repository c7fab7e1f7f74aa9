package postgres_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func TestAdvertiserBusinessCategoriesSeeded(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	cats, err := db.AdvertiserBusinessCategories(t.Context())
	if err != nil {
		t.Fatalf("AdvertiserBusinessCategories: %v", err)
	}
	if len(cats) < 15 || len(cats) > 25 {
		t.Fatalf("%d categories, want 15 to 25", len(cats))
	}
	if cats[0].ID != "1jl" || cats[0].Name != "Consumer Packaged Goods" {
		t.Errorf("first category %+v, want 1jl Consumer Packaged Goods", cats[0])
	}
	owner := map[string]string{}
	for _, c := range cats {
		if len(c.IABCategories) == 0 {
			t.Errorf("category %s has no IAB categories", c.ID)
		}
		for _, iab := range c.IABCategories {
			if prev, dup := owner[iab]; dup {
				t.Errorf("%s is in both %s and %s", iab, prev, c.ID)
			}
			owner[iab] = c.ID
		}
	}
}

func TestCuratedCategoriesByCountry(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	all := storage.ListOptions{Count: 1000, Sort: storage.Sort{Field: "created_at"}}
	tests := []struct {
		countries    []string
		want, absent []string
	}{
		{[]string{"US"}, []string{"Basketball", "Soccer"}, []string{"Anime", "Bundesliga"}},
		{[]string{"JP"}, []string{"Anime", "Technology"}, []string{"Basketball"}},
		{[]string{"DE", "BR"}, []string{"Bundesliga", "Futebol", "Motorsport"}, []string{"Anime", "Soccer"}},
		{[]string{"AQ"}, nil, []string{"Basketball", "Anime"}},
	}
	for _, tt := range tests {
		page, err := db.CuratedCategories(t.Context(), tt.countries, all)
		if err != nil {
			t.Fatalf("CuratedCategories(%v): %v", tt.countries, err)
		}
		var names []string
		for i, c := range page.Items {
			names = append(names, c.Name)
			if !slices.ContainsFunc(c.CountryCodes, func(cc string) bool { return slices.Contains(tt.countries, cc) }) {
				t.Errorf("%v: %s is available in %v only", tt.countries, c.Name, c.CountryCodes)
			}
			if i > 0 && c.CreatedAt.Before(page.Items[i-1].CreatedAt) {
				t.Errorf("%v: %s listed before an older category", tt.countries, c.Name)
			}
		}
		for _, n := range tt.want {
			if !slices.Contains(names, n) {
				t.Errorf("%v: %s missing from %v", tt.countries, n, names)
			}
		}
		for _, n := range tt.absent {
			if slices.Contains(names, n) {
				t.Errorf("%v: %s listed, want it left out", tt.countries, n)
			}
		}
	}
}

func TestLineItemCuratedCategoryLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	_, campaign, li := factory.AdsChain(t, db, acct.ID)
	li2 := factory.LineItem(t, db, acct.ID, campaign)
	other := factory.AdAccount(t, db, nil)
	_, _, foreignLI := factory.AdsChain(t, db, other.ID)
	const basketball, soccer = "9fg8gmz96qdg", "9ddrgesiap6o"

	c, err := db.CreateLineItemCuratedCategory(ctx, acct.ID, li, basketball)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if c.LineItemID != li || c.CuratedCategoryID != basketball || c.Deleted || c.AccountID != acct.ID {
		t.Fatalf("created %+v", c)
	}

	refs := []struct {
		name          string
		lineItem, cat string
		param         string
		conflict      bool
	}{
		{"missing line item", "nope", soccer, "line_item_id", false},
		{"other account's line item", foreignLI, soccer, "line_item_id", false},
		{"missing curated category", li2, "nope", "curated_category_id", false},
		{"line item already targeting one", li, soccer, "", true},
	}
	for _, tt := range refs {
		_, err := db.CreateLineItemCuratedCategory(ctx, acct.ID, tt.lineItem, tt.cat)
		var missing *storage.MissingRefError
		switch {
		case tt.conflict && !errors.Is(err, storage.ErrConflict):
			t.Errorf("%s: err %v, want ErrConflict", tt.name, err)
		case !tt.conflict && (!errors.As(err, &missing) || missing.Param != tt.param || !errors.Is(err, storage.ErrNotFound)):
			t.Errorf("%s: err %v, want MissingRefError on %s", tt.name, err, tt.param)
		}
	}

	up, err := db.UpdateLineItemCuratedCategory(ctx, acct.ID, c.ID, storage.LineItemCuratedCategoryUpdate{CuratedCategoryID: catPtr(soccer)})
	if err != nil || up.CuratedCategoryID != soccer || up.LineItemID != li {
		t.Fatalf("update category: %+v, %v", up, err)
	}
	up, err = db.UpdateLineItemCuratedCategory(ctx, acct.ID, c.ID, storage.LineItemCuratedCategoryUpdate{LineItemID: catPtr(li2)})
	if err != nil || up.LineItemID != li2 {
		t.Fatalf("move to line item 2: %+v, %v", up, err)
	}
	if _, err := db.CreateLineItemCuratedCategory(ctx, acct.ID, li, basketball); err != nil {
		t.Fatalf("line item 1 is free again: %v", err)
	}
	if _, err := db.UpdateLineItemCuratedCategory(ctx, acct.ID, c.ID, storage.LineItemCuratedCategoryUpdate{LineItemID: catPtr(li)}); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("move onto a taken line item: %v, want ErrConflict", err)
	}
	if _, err := db.UpdateLineItemCuratedCategory(ctx, other.ID, c.ID, storage.LineItemCuratedCategoryUpdate{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("update through another account: %v, want ErrNotFound", err)
	}

	del, err := db.DeleteLineItemCuratedCategory(ctx, acct.ID, c.ID)
	if err != nil || !del.Deleted {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	if _, err := db.DeleteLineItemCuratedCategory(ctx, acct.ID, c.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := db.LineItemCuratedCategory(ctx, acct.ID, c.ID, false); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get deleted: %v, want ErrNotFound", err)
	}
	if got, err := db.LineItemCuratedCategory(ctx, acct.ID, c.ID, true); err != nil || !got.Deleted {
		t.Errorf("get deleted with_deleted: %+v, %v", got, err)
	}
	if _, err := db.CreateLineItemCuratedCategory(ctx, acct.ID, li2, basketball); err != nil {
		t.Errorf("line item 2 is free after the delete: %v", err)
	}
}

func TestLineItemCuratedCategoryOnePerLineItemConcurrent(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	_, _, li := factory.AdsChain(t, db, acct.ID)
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = db.CreateLineItemCuratedCategory(t.Context(), acct.ID, li, "9fg8gmz96qdg")
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, storage.ErrConflict):
			t.Errorf("concurrent create: %v, want nil or ErrConflict", err)
		}
	}
	if created != 1 {
		t.Errorf("%d links created, want exactly 1", created)
	}
	if _, err := db.CuratedCategory(t.Context(), "9fg8gmz96qdg"); err != nil {
		t.Errorf("CuratedCategory: %v", err)
	}
	if _, err := db.CuratedCategory(t.Context(), "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("CuratedCategory(nope): %v, want ErrNotFound", err)
	}
}

func catPtr[T any](v T) *T { return &v }

// TestAdvertiserBusinessCategoriesOf: each code of a category maps to it,
// codes of none are left out, no codes give an empty map.
func TestAdvertiserBusinessCategoriesOf(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	got, err := db.AdvertiserBusinessCategoriesOf(t.Context(), []string{"IAB8-5", "IAB7", "IAB2-3", "IAB8-18", "nope"})
	if err != nil {
		t.Fatalf("AdvertiserBusinessCategoriesOf: %v", err)
	}
	if len(got) != 3 || got["IAB8-5"].ID != "1jn" || got["IAB8-18"].ID != "1jn" || got["IAB7"].ID != "1jm" {
		t.Fatalf("got %+v", got)
	}
	if !slices.Equal(got["IAB8-5"].IABCategories, []string{"IAB8-5", "IAB8-18"}) || got["IAB7"].Name != "Health & Pharma" {
		t.Errorf("category of IAB8-5 %+v, of IAB7 %+v", got["IAB8-5"], got["IAB7"])
	}
	if none, err := db.AdvertiserBusinessCategoriesOf(t.Context(), nil); err != nil || len(none) != 0 {
		t.Errorf("no codes: %v, %v", none, err)
	}
}
