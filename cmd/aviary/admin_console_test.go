package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestAdminUserAdmin: `admin user admin <id|username> on|off` sets the
// console administrator flag; bootstrap makes the demo user own the demo
// app (the console shows it to them).
func TestAdminUserAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	steps := []struct {
		args    []string
		want    bool
		wantErr string
	}{
		{args: []string{alice.Username, "on"}, want: true},
		{args: []string{"@" + alice.Username, "off"}, want: false},
		{args: []string{alice.Username, "yes"}, wantErr: "want on or off"},
		{args: []string{"nobody_here", "on"}, wantErr: "not found"},
		{args: []string{alice.Username}, wantErr: "<id|username> on|off"},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, "user admin", adminFlags{Args: s.args})
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d: error %v, want %q", i, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got, _ := out.(map[string]any)["console_admin"].(bool); got != s.want {
			t.Errorf("step %d: printed %v", i, out)
		}
		if admin, err := db.IsUserAdmin(ctx, alice.ID); err != nil || admin != s.want {
			t.Errorf("step %d: stored %v %v, want %v", i, admin, err, s.want)
		}
	}
	res, err := bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	app, err := db.AppByName(ctx, demoApp)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := db.AppOwner(ctx, app.ID)
	if err != nil || ids.Format(owner) != res.UserID {
		t.Errorf("demo app owner %d (%v), want the demo user %s", owner, err, res.UserID)
	}
}
