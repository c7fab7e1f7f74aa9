package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestAdminUserUpdate: `admin user update --user NAME [fields]` changes
// the fields given, prints the user with one profile.update.* event type
// per changed field, and checks its flags.
func TestAdminUserUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, &factory.UserOpts{Name: "Alice"})
	steps := []struct {
		opts       adminFlags
		wantEvents []string
		wantErr    string
	}{
		{opts: adminFlags{User: alice.Username, Bio: given("Birds."), Name: "Alice", Given: map[string]bool{"name": true},
			Location: given("Lisbon"), Verified: given("on")},
			wantEvents: []string{"profile.update.bio", "profile.update.geo", "profile.update.verified_badge"}},
		{opts: adminFlags{User: alice.Username, Name: "Alice B", Given: map[string]bool{"name": true}, URL: given("https://aviary.dev"),
			Image: given("https://img.example/a.png")},
			wantEvents: []string{"profile.update.screenname", "profile.update.url", "profile.update.profile_picture"}},
		{opts: adminFlags{User: alice.Username, Handle: given(alice.Username + "_b")}, wantEvents: []string{"profile.update.handle"}},
		{opts: adminFlags{User: alice.Username + "_b", Bio: given("Birds.")}, wantEvents: []string{}},
		{opts: adminFlags{User: alice.Username + "_b", Name: "ignored without --name given"}, wantEvents: []string{}},
		{opts: adminFlags{User: alice.Username + "_b", URL: given("aviary.dev")}, wantErr: `--url "aviary.dev"`},
		{opts: adminFlags{User: alice.Username + "_b", Verified: given("yes")}, wantErr: "--verified"},
		{opts: adminFlags{User: alice.Username + "_b", Handle: given("")}, wantErr: "--handle"},
		{opts: adminFlags{Bio: given("x")}, wantErr: "--user is required"},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, "user update", s.opts)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d: error %v, want %q", i, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		res, _ := out.(map[string]any)
		if evs, _ := res["events"].([]string); !slices.Equal(evs, s.wantEvents) {
			t.Errorf("step %d: events %v, want %v", i, res["events"], s.wantEvents)
		}
	}
	u, err := db.UserByID(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != alice.Username+"_b" || u.Name != "Alice B" || u.Description != "Birds." || u.Location != "Lisbon" ||
		u.URL != "https://aviary.dev" || u.ProfileImageURL != "https://img.example/a.png" || !u.Verified {
		t.Errorf("user after the updates: %+v", u)
	}
}
