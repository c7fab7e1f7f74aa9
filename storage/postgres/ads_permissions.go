package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// audiencePermissionColumns are read by scanAudiencePermission; the table
// is aliased p.
const audiencePermissionColumns = `p.id, p.custom_audience_id, p.granted_account_id, p.permission_level,
	p.created_at, p.updated_at, p.deleted`

func scanAudiencePermission(row pgx.Row, tail ...any) (storage.AudiencePermission, error) {
	var p storage.AudiencePermission
	err := row.Scan(append([]any{&p.ID, &p.AudienceID, &p.GrantedAccountID, &p.PermissionLevel,
		&p.CreatedAt, &p.UpdatedAt, &p.Deleted}, tail...)...)
	return p, err
}

// checkOwnedAudience reports storage.ErrAudienceNotFound unless audienceID
// is a live audience owned by accountID.
func checkOwnedAudience(ctx context.Context, q querier, accountID, audienceID string) error {
	var owned bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM custom_audiences
		WHERE id = $1 AND owner_account_id = $2 AND NOT deleted)`, audienceID, accountID).Scan(&owned)
	if err != nil {
		return wrap("check audience "+audienceID, err)
	}
	if !owned {
		return fmt.Errorf("audience %s of account %s: %w", audienceID, accountID, storage.ErrAudienceNotFound)
	}
	return nil
}

// ListAudiencePermissions returns one page of the live grants of an
// audience; storage.ErrAudienceNotFound unless the filter's owner account
// owns the live audience.
func (db *DB) ListAudiencePermissions(ctx context.Context, f storage.AudiencePermissionFilter, opts storage.ListOptions) (storage.Page[storage.AudiencePermission], error) {
	var page storage.Page[storage.AudiencePermission]
	if err := checkOwnedAudience(ctx, db.pool, f.OwnerAccountID, f.AudienceID); err != nil {
		return page, fmt.Errorf("list permissions: %w", err)
	}
	spec := listSpec{Listing: storage.ListingAudiencePermissions, From: "custom_audience_permissions p", Columns: audiencePermissionColumns, ID: "p.id", Deleted: "p.deleted"}
	spec.Filter.add("p.custom_audience_id = $?", f.AudienceID)
	spec.Filter.in("p.granted_account_id", f.GrantedAccountIDs)
	spec.Filter.in("p.id", f.PermissionIDs)
	page, err := listPage(ctx, db.pool, spec, opts, scanAudiencePermission)
	if err != nil {
		return page, fmt.Errorf("list permissions of audience %s: %w", f.AudienceID, err)
	}
	return page, nil
}

// CreateAudiencePermission grants the owner's live audience to another
// account of the same side (sandbox or production). The errors, in the
// order they are checked: storage.ErrAudienceNotFound,
// storage.ErrGrantToOwner, storage.ErrGrantedAccountNotFound (missing,
// deleted, other side), storage.ErrGrantOutsideBusiness (another business
// and the owner lacks FeatureShareAudienceOutsideBusiness),
// storage.ErrGrantExists (a live grant to that account).
func (db *DB) CreateAudiencePermission(ctx context.Context, n storage.NewAudiencePermission) (storage.AudiencePermission, error) {
	var out storage.AudiencePermission
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := checkOwnedAudience(ctx, tx, n.OwnerAccountID, n.AudienceID); err != nil {
			return err
		}
		if n.GrantedAccountID == n.OwnerAccountID {
			return storage.ErrGrantToOwner
		}
		if err := checkGrantee(ctx, tx, n.OwnerAccountID, n.GrantedAccountID); err != nil {
			return err
		}
		var err error
		out, err = insertAudiencePermission(ctx, tx, n)
		return err
	})
	if err != nil {
		return storage.AudiencePermission{}, fmt.Errorf("grant audience %s to account %s: %w", n.AudienceID, n.GrantedAccountID, err)
	}
	return out, nil
}

// checkGrantee checks that grantee is a live account on owner's side, of
// owner's business unless owner may share outside it.
func checkGrantee(ctx context.Context, tx pgx.Tx, owner, grantee string) error {
	var sameBusiness, outsideAllowed bool
	// An empty business id (accounts made before businesses) is no business.
	err := tx.QueryRow(ctx, `SELECT g.business_id = o.business_id AND o.business_id <> '',
		EXISTS (SELECT 1 FROM ad_account_features f WHERE f.account_id = o.id AND f.feature = $3)
		FROM ad_accounts g JOIN ad_accounts o ON o.id = $1
		WHERE g.id = $2 AND NOT g.deleted AND g.sandbox = o.sandbox`,
		owner, grantee, storage.FeatureShareAudienceOutsideBusiness).Scan(&sameBusiness, &outsideAllowed)
	switch {
	case isNoRows(err):
		return storage.ErrGrantedAccountNotFound
	case err != nil:
		return wrap("load granted account "+grantee, err)
	case !sameBusiness && !outsideAllowed:
		return storage.ErrGrantOutsideBusiness
	}
	return nil
}

// insertAudiencePermission adds the grant; a live grant to the same
// account (the partial unique index) is storage.ErrGrantExists.
func insertAudiencePermission(ctx context.Context, tx pgx.Tx, n storage.NewAudiencePermission) (storage.AudiencePermission, error) {
	p, err := scanAudiencePermission(tx.QueryRow(ctx, `INSERT INTO custom_audience_permissions AS p
		(custom_audience_id, granted_account_id, permission_level) VALUES ($1, $2, $3)
		ON CONFLICT (custom_audience_id, granted_account_id) WHERE NOT deleted DO NOTHING
		RETURNING `+audiencePermissionColumns, n.AudienceID, n.GrantedAccountID, n.PermissionLevel))
	if isNoRows(err) {
		return p, storage.ErrGrantExists
	}
	return p, wrap("insert permission", err)
}

// DeleteAudiencePermission revokes (soft-deletes) a live grant of the
// owner's audience: storage.ErrAudienceNotFound unless the owner owns the
// live audience, storage.ErrNotFound for a grant that is missing, of
// another audience, or already revoked.
func (db *DB) DeleteAudiencePermission(ctx context.Context, ownerAccountID, audienceID, id string) (storage.AudiencePermission, error) {
	var out storage.AudiencePermission
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := checkOwnedAudience(ctx, tx, ownerAccountID, audienceID); err != nil {
			return err
		}
		var err error
		out, err = scanAudiencePermission(tx.QueryRow(ctx, `UPDATE custom_audience_permissions AS p
			SET deleted = true, updated_at = greatest(now(), p.updated_at + interval '1 microsecond')
			WHERE p.id = $1 AND p.custom_audience_id = $2 AND NOT p.deleted
			RETURNING `+audiencePermissionColumns, id, audienceID))
		return wrap("revoke permission "+id, err)
	})
	if err != nil {
		return storage.AudiencePermission{}, fmt.Errorf("revoke permission %s of audience %s: %w", id, audienceID, err)
	}
	return out, nil
}

// lockTargetableAudience checks, in the transaction that adds a targeting
// criterion, that accountID may target audienceID: a live audience it owns
// or is granted by a live permission (either level); else
// storage.ErrAudienceNotFound. The grant is share-locked, so a revocation
// committing meanwhile either waits for this criterion or refuses it.
func lockTargetableAudience(ctx context.Context, tx pgx.Tx, accountID, audienceID string) error {
	var owner string
	err := tx.QueryRow(ctx, `SELECT owner_account_id FROM custom_audiences
		WHERE id = $1 AND NOT deleted FOR KEY SHARE`, audienceID).Scan(&owner)
	if isNoRows(err) {
		return fmt.Errorf("audience %s: %w", audienceID, storage.ErrAudienceNotFound)
	}
	if err != nil || owner == accountID {
		return wrap("lock audience "+audienceID, err)
	}
	var grant string
	err = tx.QueryRow(ctx, `SELECT id FROM custom_audience_permissions
		WHERE custom_audience_id = $1 AND granted_account_id = $2 AND NOT deleted FOR SHARE`, audienceID, accountID).Scan(&grant)
	if isNoRows(err) {
		return fmt.Errorf("audience %s for account %s: %w", audienceID, accountID, storage.ErrAudienceNotFound)
	}
	return wrap("lock permission on audience "+audienceID, err)
}

// checkUsableAudience reports storage.ErrAudienceNotFound unless accountID
// owns the live audience or holds a live grant of it.
func checkUsableAudience(ctx context.Context, q querier, accountID, audienceID string) error {
	var usable bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM custom_audiences ca
		WHERE ca.id = $1 AND NOT ca.deleted AND (ca.owner_account_id = $2 OR EXISTS (
			SELECT 1 FROM custom_audience_permissions p
			WHERE p.custom_audience_id = ca.id AND p.granted_account_id = $2 AND NOT p.deleted)))`,
		audienceID, accountID).Scan(&usable)
	if err != nil {
		return wrap("check audience "+audienceID, err)
	}
	if !usable {
		return fmt.Errorf("audience %s for account %s: %w", audienceID, accountID, storage.ErrAudienceNotFound)
	}
	return nil
}

// targetingLineItem is the condition that line item li targets the
// audience: li is live and has a live criterion of an audience type with
// the audience id as value. Its arguments are the audience types and the
// audience id.
const targetingLineItem = `NOT li.deleted AND EXISTS (SELECT 1 FROM targeting_criteria tc
	WHERE tc.line_item_id = li.id AND NOT tc.deleted AND tc.targeting_type = ANY($?) AND tc.targeting_value = $?)`

// servableLineItem is the condition that li of campaign c is servable (c
// and li are live wherever it is used).
const servableLineItem = `li.entity_status = 'ACTIVE' AND c.entity_status = 'ACTIVE'`

// targetingCondition is the targetingLineItem condition ("$?" placeholders,
// for filter.add) with its arguments, and the servable one when f asks
// for servable line items only.
func targetingCondition(f storage.TargetedFilter) (string, []any) {
	cond := targetingLineItem
	if f.OnlyServable {
		cond += " AND " + servableLineItem
	}
	return cond, []any{storage.AudienceTargetingTypes, f.AudienceID}
}

// ListTargetedCampaigns returns one page of the account's live campaigns
// whose live line items target the audience through live criteria, each
// with those line items (f.OnlyServable: servable ones only), in one
// snapshot. storage.ErrAudienceNotFound unless the account owns the live
// audience or holds a live grant of it.
func (db *DB) ListTargetedCampaigns(ctx context.Context, f storage.TargetedFilter, opts storage.ListOptions) (storage.Page[storage.TargetedCampaign], error) {
	var page storage.Page[storage.TargetedCampaign]
	txOpts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, db.pool, txOpts, func(tx pgx.Tx) error {
		if err := checkUsableAudience(ctx, tx, f.AccountID, f.AudienceID); err != nil {
			return err
		}
		var err error
		if page, err = targetedCampaignPage(ctx, tx, f, opts); err != nil {
			return err
		}
		return addTargetedLineItems(ctx, tx, f, page.Items)
	})
	if err != nil {
		return page, fmt.Errorf("list campaigns of account %s targeting audience %s: %w", f.AccountID, f.AudienceID, err)
	}
	return page, nil
}

// targetedCampaignPage pages the campaigns with a line item that targets
// the audience.
func targetedCampaignPage(ctx context.Context, tx pgx.Tx, f storage.TargetedFilter, opts storage.ListOptions) (storage.Page[storage.TargetedCampaign], error) {
	spec := listSpec{Listing: storage.ListingTargetedCampaigns, From: "campaigns c", Columns: "c.id, c.name", ID: "c.id", Deleted: "c.deleted"}
	spec.Filter.add("c.account_id = $?", f.AccountID)
	cond, args := targetingCondition(f)
	spec.Filter.add("EXISTS (SELECT 1 FROM line_items li WHERE li.campaign_id = c.id AND "+cond+")", args...)
	return listPage(ctx, tx, spec, opts, func(row pgx.Row, tail ...any) (storage.TargetedCampaign, error) {
		var c storage.TargetedCampaign
		err := row.Scan(append([]any{&c.ID, &c.Name}, tail...)...)
		return c, err
	})
}

// addTargetedLineItems fills in the line items of campaigns that target
// the audience, oldest first.
func addTargetedLineItems(ctx context.Context, tx pgx.Tx, f storage.TargetedFilter, campaigns []storage.TargetedCampaign) error {
	if len(campaigns) == 0 {
		return nil
	}
	index := make(map[string]int, len(campaigns))
	ids := make([]string, len(campaigns))
	for i, c := range campaigns {
		index[c.ID], ids[i] = i, c.ID
	}
	var q filter
	q.add("li.campaign_id = ANY($?)", ids)
	cond, args := targetingCondition(f)
	q.add(cond, args...)
	rows, err := tx.Query(ctx, `SELECT li.campaign_id, li.id, li.name, `+servableLineItem+`
		FROM line_items li JOIN campaigns c ON c.id = li.campaign_id
		WHERE `+q.where()+` ORDER BY li.created_at, li.id`, q.args...)
	if err != nil {
		return wrap("list targeting line items", err)
	}
	defer rows.Close()
	for rows.Next() {
		var campaignID string
		var li storage.TargetedLineItem
		if err := rows.Scan(&campaignID, &li.ID, &li.Name, &li.Servable); err != nil {
			return wrap("scan targeting line item", err)
		}
		c := &campaigns[index[campaignID]]
		c.LineItems = append(c.LineItems, li)
	}
	return wrap("list targeting line items", rows.Err())
}
