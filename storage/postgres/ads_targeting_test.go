package postgres_test

import (
	"errors"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestTargetingCriterionWrites: a criterion is created on a live line item
// of the account only, named after its value by default, soft-deleted
// once, and both changes are in history.
func TestTargetingCriterionWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	other := factory.AdAccount(t, db, nil)
	_, _, li := factory.AdsChain(t, db, acct.ID)
	_, _, otherLI := factory.AdsChain(t, db, other.ID)
	named := "Interest targeting"
	tests := []struct {
		name     string
		n        storage.NewTargetingCriterion
		wantErr  error
		wantName string
	}{
		{"keyword named by value", storage.NewTargetingCriterion{LineItemID: li, TargetingType: "BROAD_KEYWORD", TargetingValue: "technology", OperatorType: "EQ"}, nil, "technology"},
		{"explicit name", storage.NewTargetingCriterion{LineItemID: li, TargetingType: "INTEREST", TargetingValue: "20", OperatorType: "EQ", Name: &named}, nil, named},
		{"another account's line item", storage.NewTargetingCriterion{LineItemID: otherLI, TargetingType: "AGE", TargetingValue: "AGE_OVER_18", OperatorType: "EQ"}, storage.ErrNotFound, ""},
	}
	var created []storage.TargetingCriterion
	for _, tt := range tests {
		tt.n.AccountID = acct.ID
		c, err := db.CreateTargetingCriterion(ctx, acct.UserID, tt.n)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("%s: %v, want %v", tt.name, err, tt.wantErr)
		}
		if err == nil {
			if c.Name == nil || *c.Name != tt.wantName || c.TargetingType != tt.n.TargetingType {
				t.Fatalf("%s: created %+v", tt.name, c)
			}
			created = append(created, c)
		}
	}
	d, err := db.DeleteTargetingCriterion(ctx, acct.UserID, acct.ID, created[0].ID)
	if err != nil || !d.Deleted {
		t.Fatalf("delete = %+v, %v", d, err)
	}
	if _, err := db.DeleteTargetingCriterion(ctx, acct.UserID, acct.ID, created[0].ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := db.TargetingCriterion(ctx, acct.ID, created[0].ID, false); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get deleted: %v, want ErrNotFound", err)
	}
	page, err := db.ListTargetingCriteria(ctx, storage.TargetingCriterionFilter{AccountID: acct.ID, LineItemIDs: []string{li}},
		storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}, WithDeleted: true})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("list with deleted = %d, %v; want 2", len(page.Items), err)
	}
	h := adsHistoryOf(t, dbURL, storage.EntityTargetingCriteria, created[0].ID)
	if len(h) != 2 || h[0].ChangeType != storage.ChangeCreate || h[1].ChangeType != storage.ChangeDelete ||
		h[0].Data["targeting_value"] != "technology" {
		t.Fatalf("history = %+v", h)
	}
}
