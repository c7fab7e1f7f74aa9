package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// permSQL runs one statement on a connection of its own and scans its row
// (if any) into dest.
func permSQL(t *testing.T, dbURL, sql string, args []any, dest ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	if len(dest) == 0 {
		if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return
	}
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// permAudience inserts a custom audience of the account and returns its id.
func permAudience(t *testing.T, dbURL, accountID string) string {
	t.Helper()
	var id string
	permSQL(t, dbURL, `INSERT INTO custom_audiences (owner_account_id, name) VALUES ($1, 'audience') RETURNING id`, []any{accountID}, &id)
	return id
}

// permAccount is an ad account moved into business (when not empty).
func permAccount(t *testing.T, db *postgres.DB, dbURL, business string) storage.AdAccount {
	t.Helper()
	a := factory.AdAccount(t, db, nil)
	if business != "" {
		permSQL(t, dbURL, `UPDATE ad_accounts SET business_id = $2 WHERE id = $1`, []any{a.ID, business})
	}
	return a
}

// TestAudiencePermissionRules: grants are made by the owner of a live
// audience only, to a live account of the same side and business (unless
// the owner has SHARE_AUDIENCE_OUTSIDE_BUSINESS), once while live;
// revoking soft-deletes once, and a revoked grant can be made again.
func TestAudiencePermissionRules(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	owner := factory.AdAccount(t, db, nil)
	peer := permAccount(t, db, dbURL, owner.BusinessID)
	stranger := permAccount(t, db, dbURL, "")
	sandbox := factory.AdAccount(t, db, &factory.AdAccountOpts{Sandbox: true})
	permSQL(t, dbURL, `UPDATE ad_accounts SET business_id = $2 WHERE id = $1`, []any{sandbox.ID, owner.BusinessID})
	gone := permAccount(t, db, dbURL, owner.BusinessID)
	permSQL(t, dbURL, `UPDATE ad_accounts SET deleted = true WHERE id = $1`, []any{gone.ID})
	audience := permAudience(t, dbURL, owner.ID)
	theirs := permAudience(t, dbURL, stranger.ID)
	deleted := permAudience(t, dbURL, owner.ID)
	permSQL(t, dbURL, `UPDATE custom_audiences SET deleted = true WHERE id = $1`, []any{deleted})
	// Two accounts of no business (made before businesses existed) are not
	// of one business.
	legacy, legacyPeer := permAccount(t, db, dbURL, ""), permAccount(t, db, dbURL, "")
	permSQL(t, dbURL, `UPDATE ad_accounts SET business_id = '' WHERE id = ANY($1)`, []any{[]string{legacy.ID, legacyPeer.ID}})
	legacyAudience := permAudience(t, dbURL, legacy.ID)

	grant := func(audienceID, to string) storage.NewAudiencePermission {
		return storage.NewAudiencePermission{OwnerAccountID: owner.ID, AudienceID: audienceID, GrantedAccountID: to, PermissionLevel: storage.PermissionReadOnly}
	}
	tests := []struct {
		name    string
		n       storage.NewAudiencePermission
		wantErr error
	}{
		{"same business", grant(audience, peer.ID), nil},
		{"twice", grant(audience, peer.ID), storage.ErrGrantExists},
		{"to its owner", grant(audience, owner.ID), storage.ErrGrantToOwner},
		{"no such account", grant(audience, "nosuchaccount"), storage.ErrGrantedAccountNotFound},
		{"sandbox account", grant(audience, sandbox.ID), storage.ErrGrantedAccountNotFound},
		{"deleted account", grant(audience, gone.ID), storage.ErrGrantedAccountNotFound},
		{"another business", grant(audience, stranger.ID), storage.ErrGrantOutsideBusiness},
		{"another account's audience", grant(theirs, peer.ID), storage.ErrAudienceNotFound},
		{"deleted audience", grant(deleted, peer.ID), storage.ErrAudienceNotFound},
		{"no business on either side", storage.NewAudiencePermission{OwnerAccountID: legacy.ID, AudienceID: legacyAudience,
			GrantedAccountID: legacyPeer.ID, PermissionLevel: storage.PermissionReadOnly}, storage.ErrGrantOutsideBusiness},
	}
	var first storage.AudiencePermission
	for _, tt := range tests {
		p, err := db.CreateAudiencePermission(ctx, tt.n)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("%s: %v, want %v", tt.name, err, tt.wantErr)
		}
		if err == nil {
			if p.AudienceID != audience || p.GrantedAccountID != peer.ID || p.PermissionLevel != storage.PermissionReadOnly || p.Deleted {
				t.Fatalf("%s: created %+v", tt.name, p)
			}
			first = p
		}
	}
	if err := db.SetAdAccountFeature(ctx, owner.ID, storage.FeatureShareAudienceOutsideBusiness, true); err != nil {
		t.Fatalf("set feature: %v", err)
	}
	if _, err := db.CreateAudiencePermission(ctx, grant(audience, stranger.ID)); err != nil {
		t.Fatalf("outside the business with the feature: %v", err)
	}

	if _, err := db.DeleteAudiencePermission(ctx, stranger.ID, audience, first.ID); !errors.Is(err, storage.ErrAudienceNotFound) {
		t.Fatalf("revoke by another account: %v, want ErrAudienceNotFound", err)
	}
	if _, err := db.DeleteAudiencePermission(ctx, owner.ID, deleted, first.ID); !errors.Is(err, storage.ErrAudienceNotFound) {
		t.Fatalf("revoke through a deleted audience: %v, want ErrAudienceNotFound", err)
	}
	d, err := db.DeleteAudiencePermission(ctx, owner.ID, audience, first.ID)
	if err != nil || !d.Deleted || d.ID != first.ID || !d.UpdatedAt.After(first.UpdatedAt) {
		t.Fatalf("revoke = %+v, %v", d, err)
	}
	if _, err := db.DeleteAudiencePermission(ctx, owner.ID, audience, first.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second revoke: %v, want ErrNotFound", err)
	}
	again, err := db.CreateAudiencePermission(ctx, grant(audience, peer.ID))
	if err != nil || again.ID == first.ID {
		t.Fatalf("grant after revoke = %+v, %v", again, err)
	}
}

// TestAudiencePermissionList: live grants only, filtered by granted
// account and id, counted; only the owner lists.
func TestAudiencePermissionList(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	owner := factory.AdAccount(t, db, nil)
	audience := permAudience(t, dbURL, owner.ID)
	var grants []storage.AudiencePermission
	for range 3 {
		peer := permAccount(t, db, dbURL, owner.BusinessID)
		p, err := db.CreateAudiencePermission(ctx, storage.NewAudiencePermission{OwnerAccountID: owner.ID, AudienceID: audience,
			GrantedAccountID: peer.ID, PermissionLevel: storage.PermissionReadWrite})
		if err != nil {
			t.Fatalf("grant: %v", err)
		}
		grants = append(grants, p)
	}
	if _, err := db.DeleteAudiencePermission(ctx, owner.ID, audience, grants[2].ID); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	opts := storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}, WithTotal: true}
	tests := []struct {
		name string
		f    storage.AudiencePermissionFilter
		want []string
	}{
		{"all live", storage.AudiencePermissionFilter{}, []string{grants[0].ID, grants[1].ID}},
		{"by granted account", storage.AudiencePermissionFilter{GrantedAccountIDs: []string{grants[1].GrantedAccountID, grants[2].GrantedAccountID}}, []string{grants[1].ID}},
		{"by id", storage.AudiencePermissionFilter{PermissionIDs: []string{grants[0].ID}}, []string{grants[0].ID}},
	}
	for _, tt := range tests {
		tt.f.OwnerAccountID, tt.f.AudienceID = owner.ID, audience
		page, err := db.ListAudiencePermissions(ctx, tt.f, opts)
		if err != nil || page.Total == nil || *page.Total != int64(len(tt.want)) || len(page.Items) != len(tt.want) {
			t.Fatalf("%s: %+v, %v", tt.name, page, err)
		}
		for i, p := range page.Items {
			if p.ID != tt.want[i] {
				t.Fatalf("%s: item %d is %s, want %s", tt.name, i, p.ID, tt.want[i])
			}
		}
	}
	_, err := db.ListAudiencePermissions(ctx, storage.AudiencePermissionFilter{OwnerAccountID: grants[0].GrantedAccountID, AudienceID: audience}, opts)
	if !errors.Is(err, storage.ErrAudienceNotFound) {
		t.Fatalf("list by a granted account: %v, want ErrAudienceNotFound", err)
	}
}

// TestAudienceTargetingAfterRevoke: a granted account may add audience
// criteria until the grant is revoked; its criteria stay, and the targeted
// listing shows them, servable or all.
func TestAudienceTargetingAfterRevoke(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, dbURL := storagetest.NewDB(t)
	owner := factory.AdAccount(t, db, nil)
	peer := permAccount(t, db, dbURL, owner.BusinessID)
	audience := permAudience(t, dbURL, owner.ID)
	_, campaign, li := factory.AdsChain(t, db, peer.ID)
	paused := factory.LineItem(t, db, peer.ID, campaign)
	permSQL(t, dbURL, `UPDATE line_items SET entity_status = 'PAUSED' WHERE id = $1`, []any{paused})
	criterion := func(lineItem, typ string) storage.NewTargetingCriterion {
		return storage.NewTargetingCriterion{AccountID: peer.ID, LineItemID: lineItem, TargetingType: typ, TargetingValue: audience, OperatorType: "EQ"}
	}
	if _, err := db.CreateTargetingCriterion(ctx, peer.UserID, criterion(li, "CUSTOM_AUDIENCE")); !errors.Is(err, storage.ErrAudienceNotFound) {
		t.Fatalf("before the grant: %v, want ErrAudienceNotFound", err)
	}
	p, err := db.CreateAudiencePermission(ctx, storage.NewAudiencePermission{OwnerAccountID: owner.ID, AudienceID: audience,
		GrantedAccountID: peer.ID, PermissionLevel: storage.PermissionReadOnly})
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	for _, c := range []storage.NewTargetingCriterion{criterion(li, "CUSTOM_AUDIENCE"), criterion(paused, "CUSTOM_AUDIENCE_EXPANDED")} {
		if _, err := db.CreateTargetingCriterion(ctx, peer.UserID, c); err != nil {
			t.Fatalf("granted %s: %v", c.TargetingType, err)
		}
	}
	if _, err := db.DeleteAudiencePermission(ctx, owner.ID, audience, p.ID); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if _, err := db.CreateTargetingCriterion(ctx, peer.UserID, criterion(li, "CUSTOM_AUDIENCE_EXPANDED")); !errors.Is(err, storage.ErrAudienceNotFound) {
		t.Fatalf("after revoke: %v, want ErrAudienceNotFound", err)
	}
	kept, err := db.ListTargetingCriteria(ctx, storage.TargetingCriterionFilter{AccountID: peer.ID, LineItemIDs: []string{li, paused}},
		storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}})
	if err != nil || len(kept.Items) != 2 {
		t.Fatalf("criteria after revoke = %d, %v; want 2", len(kept.Items), err)
	}
	opts := storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}}
	f := storage.TargetedFilter{AccountID: owner.ID, AudienceID: audience, OnlyServable: true}
	if page, err := db.ListTargetedCampaigns(ctx, f, opts); err != nil || len(page.Items) != 0 {
		t.Fatalf("owner's targeted = %+v, %v; want none", page, err)
	}
	f.AccountID = peer.ID
	if _, err := db.ListTargetedCampaigns(ctx, f, opts); !errors.Is(err, storage.ErrAudienceNotFound) {
		t.Fatalf("revoked account's targeted: %v, want ErrAudienceNotFound", err)
	}
}
