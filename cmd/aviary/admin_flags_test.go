package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestAdminUserFlags: `admin user premium|verified <id|username> on|off`
// sets the flag that gives a user the larger media limits.
func TestAdminUserFlags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	digits := factory.User(t, db, &factory.UserOpts{Username: "1234567"})
	id := strconv.FormatInt(alice.ID, 10)
	steps := []struct {
		verb         string
		args         []string
		user         storage.User
		wantElevated bool
		wantErr      string
	}{
		{verb: "user premium", args: []string{alice.Username, "on"}, user: alice, wantElevated: true},
		{verb: "user premium", args: []string{id, "OFF"}, user: alice, wantElevated: false},
		{verb: "user verified", args: []string{"@" + alice.Username, "on"}, user: alice, wantElevated: true},
		{verb: "user premium", args: []string{id, "on"}, user: alice, wantElevated: true},
		{verb: "user verified", args: []string{alice.Username, "off"}, user: alice, wantElevated: true},
		{verb: "user premium", args: []string{alice.Username, "off"}, user: alice, wantElevated: false},
		{verb: "user premium", args: []string{"1234567", "on"}, user: digits, wantElevated: true},
		{verb: "user premium", args: []string{alice.Username, "yes"}, user: alice, wantErr: `"yes": want on or off`},
		{verb: "user verified", args: []string{alice.Username}, user: alice, wantErr: "want <id|username> on|off, got 1 arguments"},
		{verb: "user verified", args: []string{"nobody_here", "on"}, user: alice, wantErr: `user "nobody_here"`},
		{verb: "user create", args: []string{"extra"}, user: alice, wantErr: `unexpected argument "extra"`},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, s.verb, adminFlags{Username: "unused_" + strconv.Itoa(i), Args: s.args})
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d %s %v: error %v, want %q", i, s.verb, s.args, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d %s %v: %v", i, s.verb, s.args, err)
		}
		flag := strings.TrimPrefix(s.verb, "user ")
		res, ok := out.(map[string]any)
		if !ok || res["user_id"] != strconv.FormatInt(s.user.ID, 10) || res["username"] != s.user.Username || res[flag] != (s.args[1] != "OFF" && s.args[1] != "off") {
			t.Errorf("step %d %s %v printed %v", i, s.verb, s.args, out)
		}
		elevated, err := db.UserMediaElevated(ctx, s.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		if elevated != s.wantElevated {
			t.Errorf("step %d %s %v: elevated = %v, want %v", i, s.verb, s.args, elevated, s.wantElevated)
		}
	}
	if _, err := db.UserByUsername(ctx, "unused_10"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a command given an unexpected argument still ran: %v", err)
	}
}

// TestParseInterspersed: flags may come before, between or after the
// positional arguments.
func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args     []string
		wantPos  []string
		wantJSON bool
	}{
		{[]string{"alice", "on"}, []string{"alice", "on"}, false},
		{[]string{"--json", "alice", "on"}, []string{"alice", "on"}, true},
		{[]string{"alice", "--json", "on"}, []string{"alice", "on"}, true},
		{[]string{"alice", "on", "-json"}, []string{"alice", "on"}, true},
		{nil, nil, false},
	}
	for _, tc := range tests {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var o adminFlags
		o.bind(fs)
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !slices.Equal(pos, tc.wantPos) || o.JSON != tc.wantJSON {
			t.Errorf("%v: positional %v json %v, want %v %v", tc.args, pos, o.JSON, tc.wantPos, tc.wantJSON)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseInterspersed(fs, []string{"alice", "--nope"}); err == nil {
		t.Error("an unknown flag after a positional argument was accepted")
	}
}
