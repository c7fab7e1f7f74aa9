package postgres_test

import (
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestSortColumnMapsFieldsPerListing: a field maps to its listing's
// column; a field of another listing, a column and an unknown listing do
// not map.
func TestSortColumnMapsFieldsPerListing(t *testing.T) {
	tests := []struct {
		listing storage.Listing
		field   string
		want    string
		ok      bool
	}{
		{storage.ListingCampaigns, "name", "c.name", true},
		{storage.ListingLineItems, "name", "coalesce(li.name, '')", true},
		{storage.ListingAdAccounts, "created_at", "ad_accounts.created_at", true},
		{storage.ListingProducts, "submission_order", "p.seq", true},
		{storage.ListingCampaigns, "list_size", "", false},
		{storage.ListingCampaigns, "c.name", "", false},
		{"nope", "created_at", "", false},
	}
	for _, tt := range tests {
		got, ok := postgres.SortColumn(tt.listing, tt.field)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SortColumn(%s, %s) = %q, %v; want %q, %v", tt.listing, tt.field, got, ok, tt.want, tt.ok)
		}
	}
}

// TestListSortsByEveryMappedField: campaigns and line items page by each
// of their fields both ways, from the start and after a cursor (the cast
// of the cursor value to the column's type), and refuse a field their
// listing does not map before running any SQL with it.
func TestListSortsByEveryMappedField(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	fi, campaign, _ := factory.AdsChain(t, db, acct.ID)
	factory.Campaign(t, db, acct.ID, fi)
	factory.LineItem(t, db, acct.ID, campaign)
	campaigns := func(opts storage.ListOptions) (*storage.Position, error) {
		p, err := db.ListCampaigns(ctx, storage.CampaignFilter{AccountID: acct.ID}, opts)
		return p.Next, err
	}
	lineItems := func(opts storage.ListOptions) (*storage.Position, error) {
		p, err := db.ListLineItems(ctx, storage.LineItemFilter{AccountID: acct.ID}, opts)
		return p.Next, err
	}
	lists := []struct {
		listing storage.Listing
		fields  []string
		list    func(storage.ListOptions) (*storage.Position, error)
	}{
		{storage.ListingCampaigns, []string{"name", "entity_status", "budget_optimization", "funding_instrument_id", "currency", "created_at", "updated_at"}, campaigns},
		{storage.ListingLineItems, []string{"name", "created_at", "updated_at", "entity_status", "objective", "product_type", "bid_strategy"}, lineItems},
	}
	for _, l := range lists {
		for _, field := range l.fields {
			for _, desc := range []bool{false, true} {
				opts := storage.ListOptions{Count: 1, Sort: storage.Sort{Field: field, Desc: desc}}
				next, err := l.list(opts)
				if err != nil {
					t.Fatalf("%s by %s (desc %v): %v", l.listing, field, desc, err)
				}
				if next == nil {
					t.Fatalf("%s by %s: one row a page, two rows, no next page", l.listing, field)
				}
				opts.After = next
				if _, err := l.list(opts); err != nil {
					t.Fatalf("%s by %s after %+v: %v", l.listing, field, *next, err)
				}
			}
		}
		_, err := l.list(storage.ListOptions{Count: 1, Sort: storage.Sort{Field: "c.name"}})
		if err == nil || !strings.Contains(err.Error(), `no sortable field "c.name"`) {
			t.Errorf("%s by a column: err %v, want no sortable field", l.listing, err)
		}
	}
}
