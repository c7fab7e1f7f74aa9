package postgres_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// adsHistoryRow is one account_history row as the campaign-family tests
// read it.
type adsHistoryRow struct {
	ChangeType string
	By         *int64
	Changes    map[string]map[string]any
	Data       map[string]any
}

// adsHistoryOf reads the history of one entity, oldest first.
func adsHistoryOf(t *testing.T, dbURL, entityType, entityID string) []adsHistoryRow {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT change_type, change_by_user_id, changes, entity_data FROM account_history
		WHERE entity_type = $1 AND entity_id = $2 ORDER BY change_time, id`, entityType, entityID)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	defer rows.Close()
	var out []adsHistoryRow
	for rows.Next() {
		var h adsHistoryRow
		var changes, data []byte
		if err := rows.Scan(&h.ChangeType, &h.By, &changes, &data); err != nil {
			t.Fatalf("scan history: %v", err)
		}
		if err := json.Unmarshal(changes, &h.Changes); err != nil {
			t.Fatalf("changes: %v", err)
		}
		if err := json.Unmarshal(data, &h.Data); err != nil {
			t.Fatalf("entity_data: %v", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("history: %v", err)
	}
	return out
}

func int64p(v int64) *int64 { return &v }

// TestCampaignStoreLifecycle: create, update and delete each write one
// history entry in their transaction, with the changed attributes; an
// update refused by apply changes nothing and records nothing.
func TestCampaignStoreLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	fi := factory.FundingInstrument(t, db, acct.ID)
	c, err := db.CreateCampaign(ctx, acct.UserID, storage.NewCampaign{AccountID: acct.ID, FundingInstrumentID: fi, Name: "spring",
		EntityStatus: "PAUSED", BudgetOptimization: "CAMPAIGN", DailyBudget: int64p(5_000_000)})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if c.Currency != "USD" || c.BudgetOptimization != "CAMPAIGN" || c.TotalBudget != nil || c.HasActiveLineItems {
		t.Fatalf("created campaign = %+v", c)
	}
	refused := errors.New("refused")
	if _, err := db.UpdateCampaign(ctx, acct.UserID, acct.ID, c.ID, func(c *storage.Campaign) error {
		c.Name = "never saved"
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("refused update: %v, want %v", err, refused)
	}
	u, err := db.UpdateCampaign(ctx, acct.UserID, acct.ID, c.ID, func(c *storage.Campaign) error {
		c.Name, c.TotalBudget = "summer", int64p(9_000_000)
		return nil
	})
	if err != nil || u.Name != "summer" || *u.TotalBudget != 9_000_000 {
		t.Fatalf("update = %+v, %v", u, err)
	}
	d, err := db.DeleteCampaign(ctx, acct.UserID, acct.ID, c.ID)
	if err != nil || !d.Deleted {
		t.Fatalf("delete = %+v, %v", d, err)
	}
	if _, err := db.DeleteCampaign(ctx, acct.UserID, acct.ID, c.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	h := adsHistoryOf(t, dbURL, storage.EntityCampaign, c.ID)
	want := []struct {
		change  string
		changed []string
	}{
		{storage.ChangeCreate, []string{"name", "entity_status", "currency"}},
		{storage.ChangeUpdate, []string{"name", "total_budget_amount_local_micro"}},
		{storage.ChangeDelete, []string{"deleted"}},
	}
	if len(h) != len(want) {
		t.Fatalf("history has %d entries, want %d: %+v", len(h), len(want), h)
	}
	for i, w := range want {
		if h[i].ChangeType != w.change || h[i].By == nil || *h[i].By != acct.UserID {
			t.Errorf("entry %d = %s by %v, want %s by %d", i, h[i].ChangeType, h[i].By, w.change, acct.UserID)
		}
		for _, attr := range w.changed {
			if _, ok := h[i].Changes[attr]; !ok {
				t.Errorf("entry %d changes %v lack %s", i, h[i].Changes, attr)
			}
		}
	}
	if got := h[1].Changes["name"]; got["old"] != "spring" || got["new"] != "summer" {
		t.Errorf("update name change = %v", got)
	}
	if len(h[2].Changes) != 1 || h[2].Data["deleted"] != true {
		t.Errorf("delete entry changes %v, data %v", h[2].Changes, h[2].Data)
	}
}

// TestCreateCampaignFundingInstrument: only an active, live funding
// instrument of the account funds a campaign.
func TestCreateCampaignFundingInstrument(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	other := factory.AdAccount(t, db, nil)
	exec := func(sql string, args ...any) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	deleted := factory.FundingInstrument(t, db, acct.ID)
	exec(`UPDATE funding_instruments SET deleted = true WHERE id = $1`, deleted)
	cancelled := factory.FundingInstrument(t, db, acct.ID)
	exec(`UPDATE funding_instruments SET cancelled = true WHERE id = $1`, cancelled)
	ended := factory.FundingInstrument(t, db, acct.ID)
	exec(`UPDATE funding_instruments SET end_time = now() - interval '1 day' WHERE id = $1`, ended)
	paused := factory.FundingInstrument(t, db, acct.ID)
	exec(`UPDATE funding_instruments SET entity_status = 'PAUSED' WHERE id = $1`, paused)
	eur := factory.FundingInstrument(t, db, acct.ID)
	exec(`UPDATE funding_instruments SET currency = 'EUR' WHERE id = $1`, eur)
	tests := []struct {
		name, fi string
		want     error
	}{
		{"missing", "nosuchfi", storage.ErrNotFound},
		{"another account's", factory.FundingInstrument(t, db, other.ID), storage.ErrNotFound},
		{"deleted", deleted, storage.ErrNotFound},
		{"cancelled", cancelled, storage.ErrFundingInstrumentInactive},
		{"ended", ended, storage.ErrFundingInstrumentInactive},
		{"paused", paused, storage.ErrFundingInstrumentInactive},
		{"active in euros", eur, nil},
	}
	for _, tt := range tests {
		c, err := db.CreateCampaign(ctx, acct.UserID, storage.NewCampaign{AccountID: acct.ID, FundingInstrumentID: tt.fi,
			Name: tt.name, EntityStatus: "ACTIVE", BudgetOptimization: "LINE_ITEM"})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.want)
		}
		if tt.want == nil && c.Currency != "EUR" {
			t.Errorf("%s: currency %q, want the instrument's EUR", tt.name, c.Currency)
		}
	}
	page, err := db.ListCampaigns(ctx, storage.CampaignFilter{AccountID: acct.ID}, storage.ListOptions{Count: 10,
		Sort: storage.Sort{Field: "created_at"}})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("list after refused creates = %d campaigns, %v; want 1", len(page.Items), err)
	}
	if h := adsHistoryOf(t, dbURL, storage.EntityCampaign, page.Items[0].ID); len(h) != 1 {
		t.Fatalf("history of the one campaign = %d entries", len(h))
	}
}

// TestListCampaignsFilters: name prefix (case-insensitive, LIKE characters
// literal), drafts only on request, another account's campaigns never.
func TestListCampaignsFilters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	fi := factory.FundingInstrument(t, db, acct.ID)
	other := factory.AdAccount(t, db, nil)
	factory.Campaign(t, db, other.ID, factory.FundingInstrument(t, db, other.ID))
	mk := func(name, status string) string {
		c, err := db.CreateCampaign(ctx, acct.UserID, storage.NewCampaign{AccountID: acct.ID, FundingInstrumentID: fi, Name: name,
			EntityStatus: status, BudgetOptimization: "LINE_ITEM"})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return c.ID
	}
	summer, sale, draft := mk("Summer sale", "ACTIVE"), mk("50%_off", "PAUSED"), mk("Summer draft", "DRAFT")
	tests := []struct {
		name string
		f    storage.CampaignFilter
		want []string
	}{
		{"all but drafts", storage.CampaignFilter{}, []string{summer, sale}},
		{"with drafts", storage.CampaignFilter{WithDraft: true}, []string{summer, sale, draft}},
		{"prefix any case", storage.CampaignFilter{NamePrefix: "sUMMER", WithDraft: true}, []string{summer, draft}},
		{"percent is literal", storage.CampaignFilter{NamePrefix: "50%_"}, []string{sale}},
		{"underscore is literal", storage.CampaignFilter{NamePrefix: "50%x"}, nil},
		{"ids", storage.CampaignFilter{CampaignIDs: []string{sale, draft}}, []string{sale}},
	}
	for _, tt := range tests {
		tt.f.AccountID = acct.ID
		page, err := db.ListCampaigns(ctx, tt.f, storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, c := range page.Items {
			got = append(got, c.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
