package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func lineItemConn(t *testing.T, db *postgres.DB) *pgx.Conn {
	t.Helper()
	dbURL, _ := storagetest.DatabaseURL(db)
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func lineItemCount(t *testing.T, conn *pgx.Conn, query string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestLineItemChangesAndHistoryTogether: a refused create or update
// leaves neither a change nor a history entry; an accepted one leaves
// both; a missing campaign or line item is storage.ErrNotFound.
func TestLineItemChangesAndHistoryTogether(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	_, campaign, _ := factory.AdsChain(t, db, acct.ID)
	conn := lineItemConn(t, db)
	refused := errors.New("refused")
	build := func(c storage.LineItemCampaign) (storage.LineItem, error) {
		return storage.LineItem{Currency: c.Currency, Objective: "REACH", ProductType: "PROMOTED_TWEETS", BidStrategy: "AUTO", EntityStatus: "ACTIVE"}, nil
	}

	if _, err := db.CreateLineItem(ctx, acct.UserID, acct.ID, campaign, func(storage.LineItemCampaign) (storage.LineItem, error) {
		return storage.LineItem{}, refused
	}); !errors.Is(err, refused) {
		t.Fatalf("refused create: %v", err)
	}
	if _, err := db.CreateLineItem(ctx, acct.UserID, acct.ID, "nope", build); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing campaign: %v", err)
	}
	li, err := db.CreateLineItem(ctx, acct.UserID, acct.ID, campaign, build)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := db.UpdateLineItem(ctx, acct.UserID, acct.ID, li.ID, func(cur storage.LineItem, _ storage.LineItemCampaign) (storage.LineItem, error) {
		cur.EntityStatus = "PAUSED"
		return cur, refused
	}); !errors.Is(err, refused) {
		t.Fatalf("refused update: %v", err)
	}
	if _, err := db.DeleteLineItem(ctx, acct.UserID, acct.ID, li.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := db.DeleteLineItem(ctx, acct.UserID, acct.ID, li.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if n := lineItemCount(t, conn, `SELECT count(*) FROM line_items WHERE campaign_id = $1`, campaign); n != 2 {
		t.Fatalf("%d line items, want the factory's and one created", n)
	}
	if n := lineItemCount(t, conn, `SELECT count(*) FROM line_items WHERE id = $1 AND entity_status = 'ACTIVE' AND deleted`, li.ID); n != 1 {
		t.Fatal("the refused update changed the line item")
	}
	got := lineItemCount(t, conn, `SELECT count(*) FROM account_history WHERE entity_id = $1 AND change_by_user_id = $2`, li.ID, acct.UserID)
	if got != 2 {
		t.Fatalf("%d history entries, want CREATE and DELETE", got)
	}
}

// TestLineItemNameSortUsesIndex: a sort_by=name page of a large account
// is an index scan of line_items_account_name, not a sort.
func TestLineItemNameSortUsesIndex(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	_, campaign, _ := factory.AdsChain(t, db, acct.ID)
	conn := lineItemConn(t, db)
	if _, err := conn.Exec(ctx, `INSERT INTO line_items (account_id, campaign_id, name, objective, product_type, bid_strategy)
		SELECT $1, $2, md5(g::text), 'REACH', 'PROMOTED_TWEETS', 'AUTO' FROM generate_series(1, 20000) g`, acct.ID, campaign); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE line_items`); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	for _, q := range []string{
		`ORDER BY coalesce(li.name, '') ASC, li.id ASC`,
		`AND (coalesce(li.name, ''), li.id) > ('8', '0') ORDER BY coalesce(li.name, '') ASC, li.id ASC`,
		`AND (coalesce(li.name, ''), li.id) < ('8', '0') ORDER BY coalesce(li.name, '') DESC, li.id DESC`,
	} {
		rows, err := conn.Query(ctx, `EXPLAIN SELECT li.id FROM line_items li WHERE li.account_id = $1
			AND li.entity_status <> 'DRAFT' AND NOT li.deleted `+q+` LIMIT 1001`, acct.ID)
		if err != nil {
			t.Fatalf("explain: %v", err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		if !strings.Contains(text, "line_items_account_name") || strings.Contains(text, "Sort Key") {
			t.Fatalf("%s:\n%s", q, text)
		}
	}
}
