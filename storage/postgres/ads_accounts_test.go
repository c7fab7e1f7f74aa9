package postgres_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

func testAdUser(t *testing.T, db *postgres.DB, name string) storage.User {
	t.Helper()
	u, err := db.CreateUser(t.Context(), name, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func testAdAccount(t *testing.T, db *postgres.DB, owner int64, name string, sandbox bool) storage.AdAccount {
	t.Helper()
	a, err := db.CreateAdAccount(t.Context(), owner, name, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func accountIDs(as []storage.AdAccount) string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID)
	}
	return strings.Join(out, ",")
}

// TestAdAccountsStore covers the account list filters, update and soft
// delete, and in subtests sharing its database funding instruments,
// features and account history.
func TestAdAccountsStore(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	alice, bob := testAdUser(t, db, "alice"), testAdUser(t, db, "bob")
	a1 := testAdAccount(t, db, alice.ID, "Shop_one", false)
	a2 := testAdAccount(t, db, alice.ID, "shopXone", false)
	a3 := testAdAccount(t, db, bob.ID, "Shop granted", false)
	box := testAdAccount(t, db, alice.ID, "Shop sandbox", true)
	testAdAccount(t, db, bob.ID, "Shop bob", false)
	if err := db.GrantAdAccount(ctx, a3.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	byCreated := storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}}
	tests := []struct {
		name string
		f    storage.AdAccountFilter
		want []storage.AdAccount
	}{
		{"production", storage.AdAccountFilter{UserID: alice.ID}, []storage.AdAccount{a1, a2, a3}},
		{"sandbox", storage.AdAccountFilter{UserID: alice.ID, Sandbox: true}, []storage.AdAccount{box}},
		{"ids", storage.AdAccountFilter{UserID: alice.ID, IDs: []string{a3.ID, box.ID}}, []storage.AdAccount{a3}},
		{"prefix, underscore literal", storage.AdAccountFilter{UserID: alice.ID, NamePrefix: "SHOP_"}, []storage.AdAccount{a1}},
		{"prefix any case", storage.AdAccountFilter{UserID: alice.ID, NamePrefix: "shop"}, []storage.AdAccount{a1, a2, a3}},
		{"prefix percent literal", storage.AdAccountFilter{UserID: alice.ID, NamePrefix: "%"}, nil},
	}
	for _, tc := range tests {
		page, err := db.ListAdAccounts(ctx, tc.f, byCreated)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if accountIDs(page.Items) != accountIDs(tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, accountIDs(page.Items), accountIDs(tc.want))
		}
	}

	name, industry := "Renamed", "RETAIL"
	up, err := db.UpdateAdAccount(ctx, a1.ID, storage.AdAccountUpdate{Name: &name})
	if err != nil || up.Name != name || up.IndustryType != a1.IndustryType || !up.UpdatedAt.After(a1.UpdatedAt) {
		t.Fatalf("update name: %+v, %v", up, err)
	}
	up, err = db.UpdateAdAccount(ctx, a1.ID, storage.AdAccountUpdate{IndustryType: &industry})
	if err != nil || up.Name != name || up.IndustryType != industry {
		t.Fatalf("update industry: %+v, %v", up, err)
	}
	del, err := db.DeleteAdAccount(ctx, a2.ID)
	if err != nil || !del.Deleted {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	for _, err := range []error{
		func() error { _, err := db.DeleteAdAccount(ctx, a2.ID); return err }(),
		func() error {
			_, err := db.UpdateAdAccount(ctx, a2.ID, storage.AdAccountUpdate{Name: &name})
			return err
		}(),
		func() error { _, err := db.DeleteAdAccount(ctx, "nope"); return err }(),
	} {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("on a deleted or missing account: %v, want ErrNotFound", err)
		}
	}
	withDeleted := byCreated
	withDeleted.WithDeleted, withDeleted.WithTotal = true, true
	page, err := db.ListAdAccounts(ctx, storage.AdAccountFilter{UserID: alice.ID}, withDeleted)
	if err != nil || accountIDs(page.Items) != accountIDs([]storage.AdAccount{a1, a2, a3}) || page.Total == nil || *page.Total != 3 {
		t.Errorf("with deleted: %s, %v", accountIDs(page.Items), err)
	}

	t.Run("funding", func(t *testing.T) { testAdFunding(t, db, alice.ID) })
	t.Run("features", func(t *testing.T) { testAdFeatures(t, db, a1.ID) })
	t.Run("history", func(t *testing.T) { testAccountHistory(t, db, a1.ID, a3.ID, alice.ID) })
}

func testAdFunding(t *testing.T, db *postgres.DB, owner int64) {
	ctx := t.Context()
	a, f, err := db.CreateAdAccountWithFunding(ctx, owner, "With funding", true, storage.NewFundingInstrument{Type: "CREDIT_LINE", Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Sandbox || f.AccountID != a.ID || f.Type != "CREDIT_LINE" || f.Currency != "JPY" || f.EntityStatus != "ACTIVE" || f.Name == "" {
		t.Errorf("created %+v with %+v", a, f)
	}
	// Concurrent ensures find the one live instrument; none is created.
	var wg sync.WaitGroup
	got := make([]string, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := db.EnsureFundingInstrument(ctx, a.ID, storage.NewFundingInstrument{})
			if err != nil {
				t.Error(err)
			}
			got[i] = e.ID
		}()
	}
	wg.Wait()
	for _, id := range got {
		if id != f.ID {
			t.Errorf("ensure returned %s, want the existing %s", id, f.ID)
		}
	}
	// On an account without one, concurrent ensures create exactly one.
	bare := testAdAccount(t, db, owner, "No funding", false)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := db.EnsureFundingInstrument(ctx, bare.ID, storage.NewFundingInstrument{})
			if err != nil {
				t.Error(err)
			}
			got[i] = e.ID
		}()
	}
	wg.Wait()
	page, err := db.ListFundingInstruments(ctx, bare.ID, nil, storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}})
	if err != nil || len(page.Items) != 1 || slices.ContainsFunc(got, func(id string) bool { return id != page.Items[0].ID }) {
		t.Errorf("concurrent ensure on a bare account: %v, page %+v, %v", got, page.Items, err)
	}
	if fi := page.Items[0]; fi.Type != "CREDIT_CARD" || fi.Currency != "USD" {
		t.Errorf("defaults: %+v", fi)
	}
	if _, err := db.FundingInstrument(ctx, bare.ID, f.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another account's instrument: %v, want ErrNotFound", err)
	}
	if _, err := db.CreateFundingInstrument(ctx, "nope", storage.NewFundingInstrument{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("funding of a missing account: %v, want ErrNotFound", err)
	}
}

func TestFundingReasonsNotAbleToFund(t *testing.T) {
	now := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	tests := []struct {
		name string
		f    storage.FundingInstrument
		want []string
	}{
		{"active", storage.FundingInstrument{EntityStatus: "ACTIVE"}, []string{}},
		{"ends later", storage.FundingInstrument{EntityStatus: "ACTIVE", EndTime: &future}, []string{}},
		{"ended", storage.FundingInstrument{EntityStatus: "ACTIVE", EndTime: &past}, []string{"EXPIRED"}},
		{"deleted and cancelled", storage.FundingInstrument{EntityStatus: "ACTIVE", Deleted: true, Cancelled: true}, []string{"DELETED", "CANCELLED"}},
		{"paused", storage.FundingInstrument{EntityStatus: "PAUSED"}, []string{"INACTIVE"}},
	}
	for _, tc := range tests {
		if got := tc.f.ReasonsNotAbleToFund(now); !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func testAdFeatures(t *testing.T, db *postgres.DB, accountID string) {
	ctx := t.Context()
	steps := []struct {
		feature string
		on      bool
		want    string
	}{
		{storage.FeatureCatalogs, true, "CATALOGS"},
		{storage.FeatureCatalogs, true, "CATALOGS"},
		{storage.FeaturePromotedMediaPolls, true, "CATALOGS,PROMOTED_MEDIA_POLLS"},
		{storage.FeatureCatalogs, false, "PROMOTED_MEDIA_POLLS"},
		{storage.FeatureCatalogs, false, "PROMOTED_MEDIA_POLLS"},
	}
	for i, s := range steps {
		if err := db.SetAdAccountFeature(ctx, accountID, s.feature, s.on); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, err := db.AdAccountFeatures(ctx, accountID)
		if err != nil || strings.Join(got, ",") != s.want {
			t.Errorf("step %d: %v, %v, want %s", i, got, err, s.want)
		}
	}
	if err := db.SetAdAccountFeature(ctx, "nope", storage.FeatureCatalogs, true); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("feature of a missing account: %v, want ErrNotFound", err)
	}
}

// testAccountHistory writes history through recordHistory, as the ads
// changes do, and reads it back with AccountHistory.
func testAccountHistory(t *testing.T, db *postgres.DB, accountID, otherAccount string, userID int64) {
	ctx := t.Context()
	created := map[string]any{"name": "c", "daily_budget_amount_local_micro": 100, "entity_status": "ACTIVE", "updated_at": "t1"}
	updated := map[string]any{"name": "c2", "daily_budget_amount_local_micro": 100, "entity_status": "PAUSED", "updated_at": "t2"}
	records := []postgres.HistoryRecord{
		{AccountID: accountID, EntityType: storage.EntityCampaign, EntityID: "c1", ChangeType: storage.ChangeCreate, UserID: userID, After: created},
		{AccountID: accountID, EntityType: storage.EntityCampaign, EntityID: "c1", ChangeType: storage.ChangeUpdate, UserID: 7, Before: created, After: updated},
		{AccountID: accountID, EntityType: storage.EntityLineItem, EntityID: "c1", ChangeType: storage.ChangeCreate, UserID: userID, After: created},
		{AccountID: otherAccount, EntityType: storage.EntityCampaign, EntityID: "c1", ChangeType: storage.ChangeCreate, UserID: userID, After: created},
		{AccountID: accountID, EntityType: storage.EntityCampaign, EntityID: "c1", ChangeType: storage.ChangeDelete, After: updated, Before: updated},
	}
	for _, rec := range records {
		if err := db.RecordHistory(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	q := storage.HistoryQuery{AccountID: accountID, EntityType: storage.EntityCampaign, EntityID: "c1",
		Start: now.Truncate(time.Hour).Add(-time.Hour), End: now.Truncate(time.Hour).Add(2 * time.Hour)}
	opts := storage.ListOptions{Count: 2}
	page, err := db.AccountHistory(ctx, q, opts)
	if err != nil || len(page.Items) != 2 || page.Next == nil {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	opts.After = page.Next
	rest, err := db.AccountHistory(ctx, q, opts)
	if err != nil || len(rest.Items) != 1 || rest.Next != nil {
		t.Fatalf("second page: %+v, %v", rest, err)
	}
	all := append(page.Items, rest.Items...)
	var types []string
	for _, h := range all {
		types = append(types, h.ChangeType)
	}
	if strings.Join(types, ",") != "CREATE,UPDATE,DELETE" {
		t.Errorf("change types %v", types)
	}
	if all[0].ChangeByUserID == nil || *all[0].ChangeByUserID != userID || all[2].ChangeByUserID != nil || all[0].ChangePlatform != "API" {
		t.Errorf("change_by: %+v", all)
	}
	var changes map[string]map[string]any
	if err := json.Unmarshal(all[1].Changes, &changes); err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes["name"]["old"] != "c" || changes["name"]["new"] != "c2" || changes["entity_status"]["new"] != "PAUSED" {
		t.Errorf("update changes: %s", all[1].Changes)
	}
	var snapshot map[string]any
	if err := json.Unmarshal(all[1].EntityData, &snapshot); err != nil || snapshot["name"] != "c2" {
		t.Errorf("entity_data: %s, %v", all[1].EntityData, err)
	}

	seven := int64(7)
	filtered := []struct {
		name string
		q    storage.HistoryQuery
		want int
	}{
		{"user", withUser(q, &seven), 1},
		{"window before", withWindow(q, q.Start.Add(-2*time.Hour), q.Start), 0},
		{"line item", withType(q, storage.EntityLineItem), 1},
	}
	for _, tc := range filtered {
		page, err := db.AccountHistory(ctx, tc.q, storage.ListOptions{Count: 10})
		if err != nil || len(page.Items) != tc.want {
			t.Errorf("%s: %d entries, %v, want %d", tc.name, len(page.Items), err, tc.want)
		}
	}
}

func withUser(q storage.HistoryQuery, id *int64) storage.HistoryQuery { q.UserID = id; return q }

func withWindow(q storage.HistoryQuery, start, end time.Time) storage.HistoryQuery {
	q.Start, q.End = start, end
	return q
}

func withType(q storage.HistoryQuery, entity string) storage.HistoryQuery {
	q.EntityType = entity
	return q
}
