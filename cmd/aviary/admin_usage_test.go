package main

import (
	"context"
	"testing"

	apiusage "github.com/aviary-dev/aviary/api/usage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func TestUsagePrices(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want apiusage.Prices
		ok   bool
	}{
		{"", apiusage.Prices{}, true},
		{"post_read=5", apiusage.Prices{PostRead: 5}, true},
		{" post_read=5 , post_write=10,user_read=1 ", apiusage.Prices{PostRead: 5, PostWrite: 10, UserRead: 1}, true},
		{"post_read=0", apiusage.Prices{}, true},
		{"post_read=-1", apiusage.Prices{}, false},
		{"post_read", apiusage.Prices{}, false},
		{"dm_read=3", apiusage.Prices{}, false},
		{"post_read=x", apiusage.Prices{}, false},
	}
	for _, tt := range tests {
		got, err := usageConfig{Prices: tt.in}.prices()
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("prices(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestAdminUsageAndCredits: app usage sets and clears caps, app credits
// adds and takes away credits; both print the app's report.
func TestAdminUsageAndCredits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	run := func(verb string, o adminFlags) usageReport {
		t.Helper()
		o.App = app.Name
		out, err := adminCommand(ctx, db, nil, verb, o)
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		return out.(usageReport)
	}
	if r := run("app usage", adminFlags{}); r.ReadCap != nil || r.WriteCap != nil || r.CreditsBalance != 0 || r.Name != app.Name {
		t.Fatalf("fresh app %+v", r)
	}
	r := run("app usage", adminFlags{Usage: usageFlags{ReadCap: 10, WriteCap: 0}, Given: map[string]bool{"read-cap": true, "write-cap": true}})
	if r.ReadCap == nil || *r.ReadCap != 10 || r.WriteCap == nil || *r.WriteCap != 0 {
		t.Fatalf("caps set: %+v", r)
	}
	r = run("app usage", adminFlags{Usage: usageFlags{ReadCap: -1}, Given: map[string]bool{"read-cap": true}})
	if r.ReadCap != nil || r.WriteCap == nil {
		t.Fatalf("read cap back to the default, write cap kept: %+v", r)
	}
	if r := run("app credits", adminFlags{Usage: usageFlags{Add: 50}, Given: map[string]bool{"add": true}}); r.CreditsAdded != 50 || r.CreditsBalance != 50 {
		t.Fatalf("credits added: %+v", r)
	}
	if r := run("app credits", adminFlags{Usage: usageFlags{Add: -20}, Given: map[string]bool{"add": true}}); r.CreditsAdded != 30 || r.CreditsBalance != 30 {
		t.Fatalf("credits taken away: %+v", r)
	}
	if _, err := adminCommand(ctx, db, nil, "app credits", adminFlags{}); err == nil {
		t.Error("app credits without --app succeeded")
	}
}
