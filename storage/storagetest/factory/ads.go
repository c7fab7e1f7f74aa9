package factory

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// AdAccountOpts are the options of AdAccount.
type AdAccountOpts struct {
	// Owner defaults to a new user.
	Owner *storage.User
	// Name defaults to a unique name.
	Name    string
	Sandbox bool
}

// AdAccount creates an ads account (its owner may use it).
func AdAccount(t testing.TB, db *postgres.DB, opts *AdAccountOpts) storage.AdAccount {
	t.Helper()
	if opts == nil {
		opts = &AdAccountOpts{}
	}
	owner := opts.Owner
	if owner == nil {
		u := User(t, db, nil)
		owner = &u
	}
	name := opts.Name
	if name == "" {
		name = "account " + suffix()
	}
	a, err := db.CreateAdAccount(t.Context(), owner.ID, name, opts.Sandbox)
	if err != nil {
		t.Fatalf("factory: create ad account: %v", err)
	}
	return a
}

// FundingInstrument inserts an active funding instrument (USD credit
// card) of the account and returns its id.
func FundingInstrument(t testing.TB, db *postgres.DB, accountID string) string {
	t.Helper()
	return insertID(t, db, "funding instrument", `INSERT INTO funding_instruments (account_id, name, type, currency, funded_amount_local_micro)
		VALUES ($1, 'Card ending 4242', 'CREDIT_CARD', 'USD', 0) RETURNING id`, accountID)
}

// Campaign inserts an active campaign of the account on fundingID (LINE_ITEM
// budget optimization, $100 daily budget) and returns its id.
func Campaign(t testing.TB, db *postgres.DB, accountID, fundingID string) string {
	t.Helper()
	return insertID(t, db, "campaign", `INSERT INTO campaigns (account_id, funding_instrument_id, name, daily_budget_amount_local_micro)
		VALUES ($1, $2, 'campaign '||aviary_ads_id(), 100000000) RETURNING id`, accountID, fundingID)
}

// LineItem inserts an ENGAGEMENTS line item of the campaign (AUTO bid,
// PROMOTED_TWEETS on ALL_ON_SERVICE) and returns its id.
func LineItem(t testing.TB, db *postgres.DB, accountID, campaignID string) string {
	t.Helper()
	return insertID(t, db, "line item", `INSERT INTO line_items (account_id, campaign_id, name, objective, product_type, placements, goal, bid_strategy)
		VALUES ($1, $2, 'line item '||aviary_ads_id(), 'ENGAGEMENTS', 'PROMOTED_TWEETS', '{ALL_ON_SERVICE}', 'ENGAGEMENT', 'AUTO') RETURNING id`, accountID, campaignID)
}

// AdsChain makes a funding instrument, a campaign and a line item of the
// account and returns their ids.
func AdsChain(t testing.TB, db *postgres.DB, accountID string) (fundingID, campaignID, lineItemID string) {
	t.Helper()
	fundingID = FundingInstrument(t, db, accountID)
	campaignID = Campaign(t, db, accountID, fundingID)
	return fundingID, campaignID, LineItem(t, db, accountID, campaignID)
}

// insertID runs an INSERT ... RETURNING id on a connection of its own.
func insertID(t testing.TB, db *postgres.DB, what, sql string, args ...any) string {
	t.Helper()
	dbURL, ok := storagetest.DatabaseURL(db)
	if !ok {
		t.Fatalf("factory: %s: the store's URL is unknown: open it with storagetest.NewDB", what)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("factory: %s: connect: %v", what, err)
	}
	defer conn.Close(context.Background())
	var id string
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&id); err != nil {
		t.Fatalf("factory: insert %s: %v", what, err)
	}
	return id
}

// MemberKey is the audience member key of value v of an identifier kind
// (storage.IdentEmail, ...): the kind and the SHA-256 of v, as the batch
// parser stores a digest a client sent.
func MemberKey(kind byte, v string) storage.MemberKey {
	var k storage.MemberKey
	k[0] = kind
	sum := sha256.Sum256([]byte(v))
	copy(k[1:], sum[:])
	return k
}
