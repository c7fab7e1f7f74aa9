package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// campaignColumns are read by scanCampaign; the table is aliased c.
const campaignColumns = `c.id, c.account_id, c.funding_instrument_id, c.name, c.entity_status, c.budget_optimization,
	c.daily_budget_amount_local_micro, c.total_budget_amount_local_micro, c.standard_delivery, c.purchase_order_number,
	c.duration_in_days, c.frequency_cap, c.currency,
	EXISTS (SELECT 1 FROM line_items li WHERE li.campaign_id = c.id AND NOT li.deleted AND li.entity_status = 'ACTIVE'),
	c.created_at, c.updated_at, c.deleted`

func scanCampaign(row pgx.Row, tail ...any) (storage.Campaign, error) {
	var c storage.Campaign
	err := row.Scan(append([]any{&c.ID, &c.AccountID, &c.FundingInstrumentID, &c.Name, &c.EntityStatus, &c.BudgetOptimization,
		&c.DailyBudget, &c.TotalBudget, &c.StandardDelivery, &c.PurchaseOrderNumber,
		&c.DurationInDays, &c.FrequencyCap, &c.Currency, &c.HasActiveLineItems,
		&c.CreatedAt, &c.UpdatedAt, &c.Deleted}, tail...)...)
	return c, err
}

// ListCampaigns returns one page of the account's campaigns matching f.
func (db *DB) ListCampaigns(ctx context.Context, f storage.CampaignFilter, opts storage.ListOptions) (storage.Page[storage.Campaign], error) {
	spec := listSpec{Listing: storage.ListingCampaigns, From: "campaigns c", Columns: campaignColumns, ID: "c.id", Deleted: "c.deleted"}
	spec.Filter.add("c.account_id = $?", f.AccountID)
	spec.Filter.in("c.id", f.CampaignIDs)
	spec.Filter.in("c.funding_instrument_id", f.FundingInstrumentIDs)
	if f.NamePrefix != "" {
		spec.Filter.add(`lower(c.name) LIKE $? ESCAPE '\'`, likePrefix(f.NamePrefix))
	}
	if !f.WithDraft {
		spec.Filter.add("c.entity_status <> 'DRAFT'")
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanCampaign)
	if err != nil {
		return page, fmt.Errorf("list campaigns of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// likePrefix is a LIKE pattern (escape \) matching strings that start
// with the lowercased prefix.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(strings.ToLower(prefix)) + "%"
}

// Campaign returns the account's campaign id; a deleted one only when
// withDeleted. Else storage.ErrNotFound.
func (db *DB) Campaign(ctx context.Context, accountID, id string, withDeleted bool) (storage.Campaign, error) {
	c, err := scanCampaign(db.pool.QueryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns c
		WHERE c.account_id = $1 AND c.id = $2 AND (NOT c.deleted OR $3)`, accountID, id, withDeleted))
	return c, wrap("load campaign "+id, err)
}

// CreateCampaign creates a campaign on an active funding instrument of the
// account, in its currency, and records the creation in account history.
// A funding instrument that is missing, deleted or another account's is
// storage.ErrNotFound; one that cannot fund is
// storage.ErrFundingInstrumentInactive.
func (db *DB) CreateCampaign(ctx context.Context, userID int64, n storage.NewCampaign) (storage.Campaign, error) {
	var c storage.Campaign
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		currency, err := fundingCurrency(ctx, tx, n.AccountID, n.FundingInstrumentID)
		if err != nil {
			return err
		}
		c, err = scanCampaign(tx.QueryRow(ctx, `INSERT INTO campaigns AS c (account_id, funding_instrument_id, name, entity_status,
			budget_optimization, daily_budget_amount_local_micro, total_budget_amount_local_micro, standard_delivery,
			purchase_order_number, currency)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING `+campaignColumns,
			n.AccountID, n.FundingInstrumentID, n.Name, n.EntityStatus, n.BudgetOptimization, n.DailyBudget, n.TotalBudget,
			n.StandardDelivery, n.PurchaseOrderNumber, currency))
		if err != nil {
			return wrap("insert campaign", err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: c.AccountID, EntityType: storage.EntityCampaign, EntityID: c.ID,
			ChangeType: storage.ChangeCreate, UserID: userID, After: c.Snapshot()})
	})
	if err != nil {
		return storage.Campaign{}, fmt.Errorf("create campaign in %s: %w", n.AccountID, err)
	}
	return c, nil
}

// fundingCurrency locks the account's funding instrument id against
// changes and returns its currency if it can fund a campaign.
func fundingCurrency(ctx context.Context, tx pgx.Tx, accountID, id string) (string, error) {
	var currency string
	var active bool
	err := tx.QueryRow(ctx, `SELECT currency, entity_status = 'ACTIVE' AND NOT cancelled AND (end_time IS NULL OR end_time > now())
		FROM funding_instruments WHERE account_id = $1 AND id = $2 AND NOT deleted FOR SHARE`, accountID, id).Scan(&currency, &active)
	if err != nil {
		return "", wrap("load funding instrument "+id, err)
	}
	if !active {
		return "", fmt.Errorf("funding instrument %s: %w", id, storage.ErrFundingInstrumentInactive)
	}
	return currency, nil
}

// UpdateCampaign locks the account's non-deleted campaign id, lets apply
// change it (an error from apply aborts the update and is returned as is),
// saves the editable attributes and records the change in account
// history. A change that leaves the campaign as it is writes nothing (no
// row update, no history entry) and returns the campaign as stored.
// Switching budget_optimization to CAMPAIGN while a non-deleted line item
// of the campaign has a daily budget or standard_delivery set is
// storage.ErrLineItemBudgets. A missing campaign is storage.ErrNotFound.
func (db *DB) UpdateCampaign(ctx context.Context, userID int64, accountID, id string, apply func(*storage.Campaign) error) (storage.Campaign, error) {
	var after storage.Campaign
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		before, err := lockCampaign(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		after = before
		if err := apply(&after); err != nil {
			return err
		}
		if len(historyChanges(before.Snapshot(), after.Snapshot())) == 0 {
			// Nothing changes: no write (updated_at stays), no history.
			after = before
			return nil
		}
		if before.BudgetOptimization != "CAMPAIGN" && after.BudgetOptimization == "CAMPAIGN" {
			if err := refuseLineItemBudgets(ctx, tx, accountID, id); err != nil {
				return err
			}
		}
		after, err = scanCampaign(tx.QueryRow(ctx, `UPDATE campaigns AS c SET name = $3, entity_status = $4, budget_optimization = $5,
			daily_budget_amount_local_micro = $6, total_budget_amount_local_micro = $7, standard_delivery = $8,
			purchase_order_number = $9, updated_at = now()
			WHERE c.account_id = $1 AND c.id = $2 RETURNING `+campaignColumns,
			accountID, id, after.Name, after.EntityStatus, after.BudgetOptimization, after.DailyBudget, after.TotalBudget,
			after.StandardDelivery, after.PurchaseOrderNumber))
		if err != nil {
			return wrap("update campaign "+id, err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityCampaign, EntityID: id,
			ChangeType: storage.ChangeUpdate, UserID: userID, Before: before.Snapshot(), After: after.Snapshot()})
	})
	if err != nil {
		return storage.Campaign{}, fmt.Errorf("update campaign %s: %w", id, err)
	}
	return after, nil
}

// DeleteCampaign soft-deletes the account's non-deleted campaign id and
// records it in account history; a missing or already deleted campaign is
// storage.ErrNotFound. Its line items are left as they are.
func (db *DB) DeleteCampaign(ctx context.Context, userID int64, accountID, id string) (storage.Campaign, error) {
	var after storage.Campaign
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		before, err := lockCampaign(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		after, err = scanCampaign(tx.QueryRow(ctx, `UPDATE campaigns AS c SET deleted = true, updated_at = now()
			WHERE c.account_id = $1 AND c.id = $2 RETURNING `+campaignColumns, accountID, id))
		if err != nil {
			return wrap("delete campaign "+id, err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityCampaign, EntityID: id,
			ChangeType: storage.ChangeDelete, UserID: userID, Before: before.Snapshot(), After: after.Snapshot()})
	})
	if err != nil {
		return storage.Campaign{}, fmt.Errorf("delete campaign %s: %w", id, err)
	}
	return after, nil
}

// refuseLineItemBudgets is storage.ErrLineItemBudgets when a non-deleted
// line item of the campaign (locked by the caller, so none is added
// meanwhile) has a daily budget or standard_delivery set: budgets that a
// CAMPAIGN-optimized campaign would leave stranded.
func refuseLineItemBudgets(ctx context.Context, tx pgx.Tx, accountID, id string) error {
	var lineItemID *string
	err := tx.QueryRow(ctx, `SELECT min(li.id) FROM line_items li
		WHERE li.account_id = $1 AND li.campaign_id = $2 AND NOT li.deleted
		  AND (li.daily_budget_amount_local_micro IS NOT NULL OR li.standard_delivery IS NOT NULL)`, accountID, id).Scan(&lineItemID)
	if err != nil {
		return wrap("check line item budgets of campaign "+id, err)
	}
	if lineItemID != nil {
		return fmt.Errorf("line item %s: %w", *lineItemID, storage.ErrLineItemBudgets)
	}
	return nil
}

// lockCampaign reads the account's non-deleted campaign id FOR UPDATE.
func lockCampaign(ctx context.Context, tx pgx.Tx, accountID, id string) (storage.Campaign, error) {
	c, err := scanCampaign(tx.QueryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns c
		WHERE c.account_id = $1 AND c.id = $2 AND NOT c.deleted FOR UPDATE OF c`, accountID, id))
	return c, wrap("lock campaign "+id, err)
}
