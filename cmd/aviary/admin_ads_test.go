package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// adsFlags parses args as `aviary admin` does, flag defaults included.
func adsFlags(t *testing.T, args ...string) adminFlags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o adminFlags
	o.bind(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	o.Args = pos
	return o
}

// TestAdminAds: `admin ads account|grant|revoke|feature|funding-instrument`.
func TestAdminAds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	owner := factory.User(t, db, nil)
	guest := factory.User(t, db, nil)

	out, err := adminCommand(ctx, db, nil, "ads account", adsFlags(t, owner.Username, "Owner Ads"))
	if err != nil {
		t.Fatal(err)
	}
	acct := out.(map[string]any)["account_id"].(string)
	if a, err := db.AdAccountFor(ctx, owner.ID, acct, false); err != nil || a.Name != "Owner Ads" || a.Sandbox {
		t.Fatalf("created account %+v, %v", a, err)
	}

	steps := []struct {
		verb    string
		args    []string
		wantErr string
	}{
		{verb: "ads grant", args: []string{acct, guest.Username}},
		{verb: "ads grant", args: []string{acct, guest.Username}},
		{verb: "ads revoke", args: []string{acct, owner.Username}, wantErr: "not found"},
		{verb: "ads grant", args: []string{"nope", guest.Username}, wantErr: "not found"},
		{verb: "ads grant", args: []string{acct, "nobody_here"}, wantErr: `user "nobody_here"`},
		{verb: "ads grant", args: []string{acct}, wantErr: "want <account_id> <user id|username>, got 1 arguments"},
		{verb: "ads feature", args: []string{acct, "catalogs", "on"}},
		{verb: "ads feature", args: []string{acct, "FLYING", "on"}, wantErr: `feature "FLYING"`},
		{verb: "ads feature", args: []string{acct, "CATALOGS", "maybe"}, wantErr: `"maybe": want on or off`},
		{verb: "ads feature", args: []string{"nope", "CATALOGS", "on"}, wantErr: "not found"},
		{verb: "ads funding-instrument", args: []string{acct, "--type", "wire"}, wantErr: `--type "wire"`},
		{verb: "ads funding-instrument", args: []string{acct, "--currency", "dollars"}, wantErr: `--currency "dollars"`},
		{verb: "ads funding-instrument", args: []string{acct, "--currency", "ZZZ"}, wantErr: `--currency "ZZZ"`},
		{verb: "ads funding-instrument", args: []string{"nope"}, wantErr: "not found"},
		{verb: "ads account", args: []string{owner.Username, "  "}, wantErr: "must not be blank"},
		{verb: "ads launch", args: []string{acct}, wantErr: "unexpected argument"},
	}
	for i, s := range steps {
		_, err := adminCommand(ctx, db, nil, s.verb, adsFlags(t, s.args...))
		if s.wantErr == "" && err != nil || s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)) {
			t.Errorf("step %d %s %v: error %v, want %q", i, s.verb, s.args, err, s.wantErr)
		}
	}
	if _, err := db.AdAccountFor(ctx, guest.ID, acct, false); err != nil {
		t.Errorf("granted user cannot use the account: %v", err)
	}
	if features, err := db.AdAccountFeatures(ctx, acct); err != nil || !slices.Equal(features, []string{"CATALOGS"}) {
		t.Errorf("features %v, %v", features, err)
	}

	out, err = adminCommand(ctx, db, nil, "ads funding-instrument", adsFlags(t, acct, "--type", "insertion_order", "--currency", "eur"))
	if err != nil {
		t.Fatal(err)
	}
	fid := out.(map[string]any)["funding_instrument_id"].(string)
	f, err := db.FundingInstrument(ctx, acct, fid)
	if err != nil || f.Type != "INSERTION_ORDER" || f.Currency != "EUR" || len(f.ReasonsNotAbleToFund(f.CreatedAt)) != 0 {
		t.Errorf("funding instrument %+v, %v", f, err)
	}
	out, err = adminCommand(ctx, db, nil, "ads funding-instrument", adsFlags(t, acct))
	if err != nil || out.(map[string]any)["type"] != "CREDIT_CARD" || out.(map[string]any)["currency"] != "USD" {
		t.Errorf("defaults: %v, %v", out, err)
	}

	if _, err := adminCommand(ctx, db, nil, "ads revoke", adsFlags(t, acct, guest.Username)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AdAccountFor(ctx, guest.ID, acct, false); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("revoked user still uses the account: %v", err)
	}
	if _, err := adminCommand(ctx, db, nil, "ads feature", adsFlags(t, acct, "CATALOGS", "off")); err != nil {
		t.Fatal(err)
	}
	if features, _ := db.AdAccountFeatures(ctx, acct); len(features) != 0 {
		t.Errorf("features after off: %v", features)
	}
}

// TestBootstrapDemoAds: bootstrap gives the demo account one active
// funding instrument and the demo features, the same on every run.
func TestBootstrapDemoAds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	first, err := bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	second, err := bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if first.FundingInstrumentID == "" || second != first {
		t.Fatalf("bootstrap runs differ: %+v then %+v", first, second)
	}
	page, err := db.ListFundingInstruments(ctx, first.AdsAccountID, nil, storage.ListOptions{Count: 10,
		Sort: storage.Sort{Field: "created_at"}})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != first.FundingInstrumentID || page.Items[0].EntityStatus != "ACTIVE" {
		t.Errorf("demo funding instruments %+v, %v", page.Items, err)
	}
	features, err := db.AdAccountFeatures(ctx, first.AdsAccountID)
	if err != nil || !slices.Equal(features, []string{"CATALOGS", "PROMOTED_MEDIA_POLLS", "SHARE_AUDIENCE_OUTSIDE_BUSINESS"}) {
		t.Errorf("demo features %v, %v", features, err)
	}
}
