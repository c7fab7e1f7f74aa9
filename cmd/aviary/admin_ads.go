package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/validation"
)

// demoFeatures are the features bootstrap grants the demo ads account.
var demoFeatures = []string{storage.FeatureShareAudienceOutsideBusiness, storage.FeaturePromotedMediaPolls, storage.FeatureCatalogs}

// adsVerbs are the `admin ads` commands; all take positional arguments.
var adsVerbs = []string{"ads grant", "ads revoke", "ads feature", "ads funding-instrument", "ads account"}

// adsCommand runs one `admin ads` command.
func adsCommand(ctx context.Context, db *postgres.DB, verb string, o adminFlags) (any, error) {
	switch verb {
	case "ads grant":
		return grantAdAccount(ctx, db, o, true)
	case "ads revoke":
		return grantAdAccount(ctx, db, o, false)
	case "ads feature":
		return setAdFeature(ctx, db, o)
	case "ads funding-instrument":
		return createFunding(ctx, db, o)
	case "ads account":
		return createAdAccount(ctx, db, o)
	}
	return nil, fmt.Errorf("unknown command (see aviary admin help)")
}

// wantArgs checks the number of positional arguments against usage.
func wantArgs(o adminFlags, n int, usage string) error {
	if len(o.Args) != n {
		return fmt.Errorf("want %s, got %d arguments", usage, len(o.Args))
	}
	return nil
}

// grantAdAccount lets a user use an account (grant) or takes that away
// (revoke): <account_id> <user id|username>.
func grantAdAccount(ctx context.Context, db *postgres.DB, o adminFlags, grant bool) (any, error) {
	if err := wantArgs(o, 2, "<account_id> <user id|username>"); err != nil {
		return nil, err
	}
	accountID := o.Args[0]
	u, err := findUser(ctx, db, o.Args[1])
	if err != nil {
		return nil, err
	}
	if grant {
		err = db.GrantAdAccount(ctx, accountID, u.ID)
	} else {
		err = db.RevokeAdAccount(ctx, accountID, u.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("account %s, user %s: %w", accountID, u.Username, err)
	}
	return map[string]any{"account_id": accountID, "user_id": ids.Format(u.ID), "username": u.Username, "granted": grant}, nil
}

// setAdFeature grants or withdraws an account feature:
// <account_id> <FEATURE> on|off.
func setAdFeature(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if err := wantArgs(o, 3, "<account_id> <FEATURE> on|off"); err != nil {
		return nil, err
	}
	feature := strings.ToUpper(o.Args[1])
	if !slices.Contains(storage.AdFeatures, feature) {
		return nil, fmt.Errorf("feature %q: want one of %s", o.Args[1], strings.Join(storage.AdFeatures, ", "))
	}
	on, err := parseOnOff(o.Args[2])
	if err != nil {
		return nil, err
	}
	if err := db.SetAdAccountFeature(ctx, o.Args[0], feature, on); err != nil {
		return nil, err
	}
	features, err := db.AdAccountFeatures(ctx, o.Args[0])
	if err != nil {
		return nil, err
	}
	return map[string]any{"account_id": o.Args[0], "features": features}, nil
}

// createFunding creates an active funding instrument of an account:
// <account_id> [--type TYPE] [--currency CODE].
func createFunding(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if err := wantArgs(o, 1, "<account_id>"); err != nil {
		return nil, err
	}
	fi, err := fundingFlags(o)
	if err != nil {
		return nil, err
	}
	f, err := db.CreateFundingInstrument(ctx, o.Args[0], fi)
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", o.Args[0], err)
	}
	return map[string]any{"account_id": f.AccountID, "funding_instrument_id": f.ID, "type": f.Type, "currency": f.Currency}, nil
}

// fundingFlags checks --type and --currency.
func fundingFlags(o adminFlags) (storage.NewFundingInstrument, error) {
	fi := storage.NewFundingInstrument{Type: strings.ToUpper(o.FundingType), Currency: strings.ToUpper(o.Currency)}
	if !slices.Contains(storage.FundingInstrumentTypes, fi.Type) {
		return fi, fmt.Errorf("--type %q: want one of %s", o.FundingType, strings.Join(storage.FundingInstrumentTypes, ", "))
	}
	if !validation.IsCurrency(fi.Currency) {
		return fi, fmt.Errorf("--currency %q: want an ISO 4217 currency code in circulation such as USD", o.Currency)
	}
	return fi, nil
}

// createAdAccount creates a production ads account owned by a user:
// <user id|username> <name>.
func createAdAccount(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if err := wantArgs(o, 2, "<user id|username> <name>"); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(o.Args[1])
	if name == "" {
		return nil, errors.New("the account name must not be blank")
	}
	u, err := findUser(ctx, db, o.Args[0])
	if err != nil {
		return nil, err
	}
	a, err := db.CreateAdAccount(ctx, u.ID, name, false)
	if err != nil {
		return nil, err
	}
	return map[string]any{"account_id": a.ID, "name": a.Name, "user_id": ids.Format(u.ID), "username": u.Username}, nil
}

// ensureDemoAds gives the demo account one active funding instrument and
// the demo features (idempotent) and returns the instrument's id.
func ensureDemoAds(ctx context.Context, db *postgres.DB, accountID string) (string, error) {
	f, err := db.EnsureFundingInstrument(ctx, accountID, storage.NewFundingInstrument{Type: "CREDIT_CARD", Currency: "USD"})
	if err != nil {
		return "", fmt.Errorf("demo funding instrument: %w", err)
	}
	for _, feature := range demoFeatures {
		if err := db.SetAdAccountFeature(ctx, accountID, feature, true); err != nil {
			return "", fmt.Errorf("demo feature %s: %w", feature, err)
		}
	}
	return f.ID, nil
}
