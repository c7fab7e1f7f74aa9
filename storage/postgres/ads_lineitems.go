package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const lineItemColumns = `li.id, li.account_id, li.campaign_id, li.name, li.currency, li.objective, li.product_type,
	li.placements, li.goal, li.bid_strategy, li.bid_amount_local_micro, li.pay_by, li.start_time, li.end_time,
	li.entity_status, li.total_budget_amount_local_micro, li.daily_budget_amount_local_micro, li.frequency_cap,
	li.duration_in_days, li.advertiser_user_id, li.advertiser_domain, li.categories, li.android_app_store_identifier,
	li.ios_app_store_identifier, li.audience_expansion, li.target_cpa_local_micro, li.primary_web_event_tag,
	li.standard_delivery, li.automatic_tweet_promotion, li.creative_source, li.created_at, li.updated_at, li.deleted`

func scanLineItem(row pgx.Row, tail ...any) (storage.LineItem, error) {
	var l storage.LineItem
	err := row.Scan(append([]any{&l.ID, &l.AccountID, &l.CampaignID, &l.Name, &l.Currency, &l.Objective, &l.ProductType,
		&l.Placements, &l.Goal, &l.BidStrategy, &l.BidAmountLocalMicro, &l.PayBy, &l.StartTime, &l.EndTime,
		&l.EntityStatus, &l.TotalBudgetAmountLocalMicro, &l.DailyBudgetAmountLocalMicro, &l.FrequencyCap,
		&l.DurationInDays, &l.AdvertiserUserID, &l.AdvertiserDomain, &l.Categories, &l.AndroidAppStoreIdentifier,
		&l.IOSAppStoreIdentifier, &l.AudienceExpansion, &l.TargetCPALocalMicro, &l.PrimaryWebEventTag,
		&l.StandardDelivery, &l.AutomaticTweetPromotion, &l.CreativeSource, &l.CreatedAt, &l.UpdatedAt, &l.Deleted}, tail...)...)
	return l, err
}

// LineItem returns a line item of the account; a deleted one only with
// withDeleted; else storage.ErrNotFound.
func (db *DB) LineItem(ctx context.Context, accountID, id string, withDeleted bool) (storage.LineItem, error) {
	l, err := scanLineItem(db.pool.QueryRow(ctx, `SELECT `+lineItemColumns+` FROM line_items li
		WHERE li.id = $1 AND li.account_id = $2 AND (NOT li.deleted OR $3)`, id, accountID, withDeleted))
	return l, wrap("load line item "+id, err)
}

// ListLineItems pages the line items of the account matching f.
func (db *DB) ListLineItems(ctx context.Context, f storage.LineItemFilter, opts storage.ListOptions) (storage.Page[storage.LineItem], error) {
	accountID := f.AccountID
	spec := listSpec{Listing: storage.ListingLineItems, From: "line_items li", Columns: lineItemColumns, ID: "li.id", Deleted: "li.deleted"}
	spec.Filter.add("li.account_id = $?", accountID)
	spec.Filter.in("li.campaign_id", f.CampaignIDs)
	spec.Filter.in("li.id", f.LineItemIDs)
	if len(f.FundingInstrumentIDs) > 0 {
		spec.Filter.add(`li.campaign_id IN (SELECT c.id FROM campaigns c WHERE c.account_id = $? AND c.funding_instrument_id = ANY($?))`,
			accountID, f.FundingInstrumentIDs)
	}
	if f.NamePrefix != "" {
		spec.Filter.add(`lower(coalesce(li.name, '')) LIKE $? ESCAPE '\'`, lineItemLikePrefix(f.NamePrefix))
	}
	if !f.WithDraft {
		spec.Filter.add("li.entity_status <> 'DRAFT'")
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanLineItem)
	if err != nil {
		return page, fmt.Errorf("list line items of account %s: %w", accountID, err)
	}
	return page, nil
}

// lineItemLikePrefix is a LIKE pattern matching names starting with
// prefix, case-insensitively.
func lineItemLikePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(strings.ToLower(prefix)) + "%"
}

// lineItemCampaign loads and share-locks a campaign of the account for a
// line item change; a deleted one only with withDeleted.
func lineItemCampaign(ctx context.Context, tx pgx.Tx, accountID, campaignID string, withDeleted bool) (storage.LineItemCampaign, error) {
	var c storage.LineItemCampaign
	err := tx.QueryRow(ctx, `SELECT id, account_id, budget_optimization, currency, deleted FROM campaigns
		WHERE id = $1 AND account_id = $2 AND (NOT deleted OR $3) FOR SHARE`, campaignID, accountID, withDeleted).
		Scan(&c.ID, &c.AccountID, &c.BudgetOptimization, &c.Currency, &c.Deleted)
	return c, wrap("load campaign "+campaignID, err)
}

// CreateLineItem creates a line item under a non-deleted campaign of the
// account (storage.ErrNotFound if there is none): build makes the line
// item from the campaign, or refuses it with its error, which is returned
// as it is. The history entry is written in the same transaction.
func (db *DB) CreateLineItem(ctx context.Context, userID int64, accountID, campaignID string,
	build func(storage.LineItemCampaign) (storage.LineItem, error)) (storage.LineItem, error) {
	var out storage.LineItem
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		camp, err := lineItemCampaign(ctx, tx, accountID, campaignID, false)
		if err != nil {
			return err
		}
		li, err := build(camp)
		if err != nil {
			return err
		}
		li.AccountID, li.CampaignID = camp.AccountID, camp.ID
		if out, err = insertLineItem(ctx, tx, li); err != nil {
			return err
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityLineItem,
			EntityID: out.ID, ChangeType: storage.ChangeCreate, UserID: userID, After: out.Snapshot()})
	})
	if err != nil {
		return storage.LineItem{}, fmt.Errorf("create line item in campaign %s: %w", campaignID, err)
	}
	return out, nil
}

func insertLineItem(ctx context.Context, tx pgx.Tx, l storage.LineItem) (storage.LineItem, error) {
	out, err := scanLineItem(tx.QueryRow(ctx, `INSERT INTO line_items AS li (account_id, campaign_id, name, currency, objective,
		product_type, placements, goal, bid_strategy, bid_amount_local_micro, pay_by, start_time, end_time, entity_status,
		total_budget_amount_local_micro, daily_budget_amount_local_micro, frequency_cap, duration_in_days,
		advertiser_user_id, advertiser_domain, categories, android_app_store_identifier, ios_app_store_identifier,
		audience_expansion, primary_web_event_tag, standard_delivery)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)
		RETURNING `+lineItemColumns,
		l.AccountID, l.CampaignID, l.Name, l.Currency, l.Objective, l.ProductType, lineItemArray(l.Placements), l.Goal,
		l.BidStrategy, l.BidAmountLocalMicro, l.PayBy, l.StartTime, l.EndTime, l.EntityStatus,
		l.TotalBudgetAmountLocalMicro, l.DailyBudgetAmountLocalMicro, l.FrequencyCap, l.DurationInDays,
		l.AdvertiserUserID, l.AdvertiserDomain, lineItemArray(l.Categories), l.AndroidAppStoreIdentifier,
		l.IOSAppStoreIdentifier, l.AudienceExpansion, l.PrimaryWebEventTag, l.StandardDelivery))
	return out, wrap("insert line item", err)
}

// lineItemArray stores an unset list as an empty array (the columns are
// NOT NULL).
func lineItemArray(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// UpdateLineItem changes a non-deleted line item of the account
// (storage.ErrNotFound if there is none): apply gets the locked line item
// and its campaign and returns the new line item, or refuses the change
// with its error, returned as it is. The history entry (old and new
// values) is written in the same transaction. A change that leaves the
// line item as it is writes nothing (no row update, no history entry) and
// returns the line item as stored.
func (db *DB) UpdateLineItem(ctx context.Context, userID int64, accountID, id string,
	apply func(storage.LineItem, storage.LineItemCampaign) (storage.LineItem, error)) (storage.LineItem, error) {
	var out storage.LineItem
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		cur, err := lockLineItem(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		camp, err := lineItemCampaign(ctx, tx, accountID, cur.CampaignID, true)
		if err != nil {
			return err
		}
		next, err := apply(cur, camp)
		if err != nil {
			return err
		}
		if len(historyChanges(cur.Snapshot(), next.Snapshot())) == 0 {
			// Nothing changes: no write (updated_at stays), no history.
			out = cur
			return nil
		}
		if out, err = saveLineItem(ctx, tx, id, next); err != nil {
			return err
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityLineItem,
			EntityID: id, ChangeType: storage.ChangeUpdate, UserID: userID, Before: cur.Snapshot(), After: out.Snapshot()})
	})
	if err != nil {
		return storage.LineItem{}, fmt.Errorf("update line item %s: %w", id, err)
	}
	return out, nil
}

// lockLineItem loads a non-deleted line item of the account FOR UPDATE.
func lockLineItem(ctx context.Context, tx pgx.Tx, accountID, id string) (storage.LineItem, error) {
	l, err := scanLineItem(tx.QueryRow(ctx, `SELECT `+lineItemColumns+` FROM line_items li
		WHERE li.id = $1 AND li.account_id = $2 AND NOT li.deleted FOR UPDATE`, id, accountID))
	return l, wrap("lock line item "+id, err)
}

// saveLineItem writes every changeable attribute of l.
func saveLineItem(ctx context.Context, tx pgx.Tx, id string, l storage.LineItem) (storage.LineItem, error) {
	out, err := scanLineItem(tx.QueryRow(ctx, `UPDATE line_items li SET name = $2, placements = $3, goal = $4,
		bid_strategy = $5, bid_amount_local_micro = $6, pay_by = $7, start_time = $8, end_time = $9, entity_status = $10,
		total_budget_amount_local_micro = $11, daily_budget_amount_local_micro = $12, frequency_cap = $13,
		duration_in_days = $14, advertiser_user_id = $15, advertiser_domain = $16, categories = $17,
		android_app_store_identifier = $18, ios_app_store_identifier = $19, audience_expansion = $20,
		updated_at = greatest(now(), li.updated_at + interval '1 microsecond')
		WHERE li.id = $1 RETURNING `+lineItemColumns,
		id, l.Name, lineItemArray(l.Placements), l.Goal, l.BidStrategy, l.BidAmountLocalMicro, l.PayBy, l.StartTime,
		l.EndTime, l.EntityStatus, l.TotalBudgetAmountLocalMicro, l.DailyBudgetAmountLocalMicro, l.FrequencyCap,
		l.DurationInDays, l.AdvertiserUserID, l.AdvertiserDomain, lineItemArray(l.Categories),
		l.AndroidAppStoreIdentifier, l.IOSAppStoreIdentifier, l.AudienceExpansion))
	return out, wrap("save line item "+id, err)
}

// DeleteLineItem soft-deletes a non-deleted line item of the account and
// returns it (storage.ErrNotFound if there is none, also on a second
// delete). Its promoted tweets are left as they are.
func (db *DB) DeleteLineItem(ctx context.Context, userID int64, accountID, id string) (storage.LineItem, error) {
	var out storage.LineItem
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		cur, err := lockLineItem(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		out, err = scanLineItem(tx.QueryRow(ctx, `UPDATE line_items li SET deleted = true,
			updated_at = greatest(now(), li.updated_at + interval '1 microsecond')
			WHERE li.id = $1 RETURNING `+lineItemColumns, id))
		if err != nil {
			return wrap("delete line item "+id, err)
		}
		return recordHistory(ctx, tx, historyRecord{AccountID: accountID, EntityType: storage.EntityLineItem,
			EntityID: id, ChangeType: storage.ChangeDelete, UserID: userID, Before: cur.Snapshot(), After: out.Snapshot()})
	})
	if err != nil {
		return storage.LineItem{}, fmt.Errorf("delete line item %s: %w", id, err)
	}
	return out, nil
}
