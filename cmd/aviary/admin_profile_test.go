package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// given is an optString flag given with value v.
func given(v string) optString { return optString{set: true, value: v} }

// TestAdminUserProfile: `admin user profile <id|username> [flags]` changes
// only the fields given, "" clears one, --pinned pins one of the user's own
// live posts (none unpins), and every step prints the profile.
func TestAdminUserProfile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, &factory.UserOpts{Profile: storage.Profile{Verified: true}})
	own := factory.Post(t, db, &factory.PostOpts{Author: alice})
	others := factory.Post(t, db, nil)
	id := strconv.FormatInt(alice.ID, 10)
	steps := []struct {
		opts    adminFlags
		want    storage.Profile
		wantErr string
	}{
		{opts: adminFlags{Args: []string{alice.Username}}, want: storage.Profile{Verified: true}},
		{opts: adminFlags{Args: []string{id}, Description: given("Birds & code."), Location: given("Lisbon"),
			URL: given("https://aviary.dev"), Image: given("http://img.example/a.png"), Country: given("pt"), Pinned: given(strconv.FormatInt(own.ID, 10))},
			want: storage.Profile{Description: "Birds & code.", Location: "Lisbon", URL: "https://aviary.dev",
				ProfileImageURL: "http://img.example/a.png", CountryCode: "PT", PinnedPostID: own.ID, Verified: true}},
		{opts: adminFlags{Args: []string{"@" + strings.ToUpper(alice.Username)}, Location: given(""), Pinned: given("none")},
			want: storage.Profile{Description: "Birds & code.", URL: "https://aviary.dev",
				ProfileImageURL: "http://img.example/a.png", CountryCode: "PT", Verified: true}},
		{opts: adminFlags{Args: []string{id}, Pinned: given(strconv.FormatInt(others.ID, 10))}, wantErr: "not a live post of the user"},
		{opts: adminFlags{Args: []string{id}, Pinned: given("first")}, wantErr: `--pinned "first": want a post id or none`},
		{opts: adminFlags{Args: []string{id}, URL: given("aviary.dev")}, wantErr: `--url "aviary.dev": want an http or https URL`},
		{opts: adminFlags{Args: []string{id}, Image: given("ftp://x/y")}, wantErr: `--image "ftp://x/y"`},
		{opts: adminFlags{Args: []string{id}, Country: given("Portugal")}, wantErr: `country code "Portugal"`},
		{opts: adminFlags{Args: []string{"nobody_here"}, Description: given("x")}, wantErr: `user "nobody_here"`},
		{opts: adminFlags{}, wantErr: "want <id|username>, got 0 arguments"},
		{opts: adminFlags{Args: []string{id}, URL: given(""), Country: given("")},
			want: storage.Profile{Description: "Birds & code.", ProfileImageURL: "http://img.example/a.png", Verified: true}},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, "user profile", s.opts)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d: error %v, want %q", i, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		u, err := db.UserByID(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		if u.Profile != s.want {
			t.Errorf("step %d: profile %+v, want %+v", i, u.Profile, s.want)
		}
		res, ok := out.(map[string]any)
		var pinned any
		if s.want.PinnedPostID != 0 {
			pinned = strconv.FormatInt(s.want.PinnedPostID, 10)
		}
		if !ok || res["user_id"] != id || res["username"] != alice.Username || res["description"] != s.want.Description ||
			res["location"] != s.want.Location || res["url"] != s.want.URL || res["profile_image_url"] != s.want.ProfileImageURL ||
			res["country_code"] != s.want.CountryCode || res["pinned_post_id"] != pinned || res["verified"] != true || res["premium"] != false {
			t.Errorf("step %d printed %v", i, out)
		}
	}
}

// TestAdminAppTier: `admin app tier <app id|name> self-serve|enterprise`.
func TestAdminAppTier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	digits := factory.App(t, db, &factory.AppOpts{Name: "2024"})
	id := strconv.FormatInt(app.ID, 10)
	steps := []struct {
		args     []string
		app      storage.App
		wantTier string
		wantErr  string
	}{
		{args: []string{app.Name, "enterprise"}, app: app, wantTier: storage.TierEnterprise},
		{args: []string{id, "Self-Serve"}, app: app, wantTier: storage.TierSelfServe},
		{args: []string{id, "ENTERPRISE"}, app: app, wantTier: storage.TierEnterprise},
		{args: []string{"2024", "enterprise"}, app: digits, wantTier: storage.TierEnterprise},
		{args: []string{app.Name, "gold"}, wantErr: `"gold": want self-serve or enterprise`},
		{args: []string{"no-such-app", "enterprise"}, wantErr: `app "no-such-app"`},
		{args: []string{app.Name}, wantErr: "want <app id|name> self-serve|enterprise, got 1 arguments"},
	}
	for i, s := range steps {
		out, err := adminCommand(ctx, db, nil, "app tier", adminFlags{Args: s.args})
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d %v: error %v, want %q", i, s.args, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d %v: %v", i, s.args, err)
		}
		res, ok := out.(map[string]any)
		if !ok || res["app_id"] != strconv.FormatInt(s.app.ID, 10) || res["name"] != s.app.Name || res["tier"] != s.wantTier {
			t.Errorf("step %d %v printed %v", i, s.args, out)
		}
		stored, err := db.AppByConsumerKey(ctx, s.app.ConsumerKey)
		if err != nil || stored.Tier != s.wantTier {
			t.Errorf("step %d %v: stored tier %q, %v; want %q", i, s.args, stored.Tier, err, s.wantTier)
		}
	}
	if _, err := adminCommand(ctx, db, nil, "app create", adminFlags{Name: "x", Args: []string{"extra"}}); err == nil {
		t.Error("app create took a positional argument")
	}
	if _, err := db.AppByName(ctx, "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a command given an unexpected argument still ran: %v", err)
	}
}

// TestAdminProfileFlags: the profile flags know whether they were given,
// so an empty value clears a field and a missing flag leaves it.
func TestAdminProfileFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o adminFlags
	o.bind(fs)
	pos, err := parseInterspersed(fs, []string{"alice", "--description", "", "--location=Porto", "--pinned", "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) != 1 || pos[0] != "alice" {
		t.Errorf("positional %v", pos)
	}
	if o.Description != given("") || o.Location != given("Porto") || o.Pinned != given("none") || o.URL.set || o.Country.set || o.Image.set {
		t.Errorf("flags %+v %+v %+v %+v %+v %+v", o.Description, o.Location, o.Pinned, o.URL, o.Country, o.Image)
	}
	if p := o.Description.ptr(); p == nil || *p != "" {
		t.Errorf("ptr of a given empty flag = %v", p)
	}
	if o.URL.ptr() != nil {
		t.Error("ptr of a missing flag is not nil")
	}
}

// TestAdminAnnouncesProfileAndTier: changes the credential caches keep
// (the user's profile and flags, the app's tier) are announced.
func TestAdminAnnouncesProfileAndTier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	ps, ann, stderr := listenAnnouncements(t)
	user := factory.User(t, db, nil)
	app := factory.App(t, db, nil)
	userMsg := "user:" + strconv.FormatInt(user.ID, 10)
	cases := []struct {
		verb string
		opts adminFlags
		want string
	}{
		{"user profile", adminFlags{Args: []string{user.Username}, Description: given("hi")}, userMsg},
		{"user premium", adminFlags{Args: []string{user.Username, "on"}}, userMsg},
		{"user verified", adminFlags{Args: []string{user.Username, "on"}}, userMsg},
		{"app tier", adminFlags{Args: []string{app.Name, "enterprise"}}, "app:" + app.ConsumerKey},
	}
	for _, tc := range cases {
		if _, err := adminCommand(ctx, db, ann, tc.verb, tc.opts); err != nil {
			t.Fatalf("%s: %v", tc.verb, err)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := ps.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: no announcement: %v", tc.verb, err)
		}
		if msg.Payload != tc.want {
			t.Errorf("%s announced %q, want %q", tc.verb, msg.Payload, tc.want)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}
