package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestAdminSpacesAndBroadcasts: the space and broadcast commands print
// their records, check their flags, and refuse a chat removal by a user
// who is neither the owner nor a moderator.
func TestAdminSpacesAndBroadcasts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	host, mod, viewer := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	run := func(verb string, o adminFlags) (map[string]any, error) {
		out, err := adminCommand(ctx, db, nil, verb, o)
		m, _ := out.(map[string]any)
		return m, err
	}
	must := func(verb string, o adminFlags) map[string]any {
		t.Helper()
		m, err := run(verb, o)
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		return m
	}
	space := must("space start", adminFlags{Live: liveFlags{Host: host.Username, Title: "Dawn"}})
	spaceID, _ := space["id"].(string)
	if len(spaceID) != 13 || space["state"] != "live" {
		t.Fatalf("space start printed %v", space)
	}
	if ended := must("space end", adminFlags{Live: liveFlags{Space: spaceID}}); ended["state"] != "ended" {
		t.Errorf("space end printed %v", ended)
	}
	b := must("broadcast start", adminFlags{User: host.Username, Live: liveFlags{Title: "Marsh", Language: "en", Moderators: mod.Username}})
	bID, _ := b["id"].(string)
	if mods, _ := b["moderator_ids"].([]string); len(bID) != 13 || len(mods) != 1 {
		t.Fatalf("broadcast start printed %v", b)
	}
	msg := must("broadcast chat", adminFlags{User: viewer.Username, Live: liveFlags{Broadcast: bID, Text: "hi"}})
	msgID, _ := msg["id"].(string)
	if msgID == "" || msg["text"] != "hi" {
		t.Fatalf("broadcast chat printed %v", msg)
	}
	refusals := []struct {
		verb    string
		o       adminFlags
		wantErr string
	}{
		{"space start", adminFlags{Live: liveFlags{Title: "x"}}, "--host required"},
		{"space end", adminFlags{}, "--space required"},
		{"space end", adminFlags{Live: liveFlags{Space: spaceID}}, "conflict"},
		{"broadcast start", adminFlags{User: host.Username, Live: liveFlags{Language: "en"}}, "--title required"},
		{"broadcast start", adminFlags{User: host.Username, Live: liveFlags{Title: "x", Language: "en", Moderators: "nobody_here"}}, "--moderators"},
		{"broadcast chat", adminFlags{User: viewer.Username, Live: liveFlags{Broadcast: bID}}, "--text required"},
		{"broadcast chat-remove", adminFlags{Live: liveFlags{Broadcast: bID, Message: msgID, By: viewer.Username}}, "only the broadcast's owner or a moderator"},
		{"broadcast chat-remove", adminFlags{Live: liveFlags{Broadcast: bID, Message: "x", By: mod.Username}}, `--message "x"`},
	}
	for _, r := range refusals {
		if _, err := run(r.verb, r.o); err == nil || !strings.Contains(err.Error(), r.wantErr) {
			t.Errorf("%s %+v: error %v, want %q", r.verb, r.o, err, r.wantErr)
		}
	}
	removed := must("broadcast chat-remove", adminFlags{Live: liveFlags{Broadcast: bID, Message: msgID, By: mod.Username}})
	if removed["removed_at"] == nil {
		t.Errorf("chat-remove printed %v", removed)
	}
	if ended := must("broadcast end", adminFlags{Live: liveFlags{Broadcast: bID}}); ended["state"] != "ended" {
		t.Errorf("broadcast end printed %v", ended)
	}
	if _, err := run("broadcast chat", adminFlags{User: viewer.Username, Live: liveFlags{Broadcast: bID, Text: "late"}}); err == nil ||
		!strings.Contains(err.Error(), "ended") {
		t.Errorf("chat after the end: %v", err)
	}
}

// TestAdminUserUpdateBannerAndAffiliate: --banner and --affiliate change
// the banner and the badge with their events, and are checked.
func TestAdminUserUpdateBannerAndAffiliate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	u := factory.User(t, db, nil)
	out, err := adminCommand(ctx, db, nil, "user update", adminFlags{User: u.Username,
		Live: liveFlags{Banner: given("https://img.example/b.png"), Affiliate: given("on")}})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := out.(map[string]any)
	evs, _ := res["events"].([]string)
	if strings.Join(evs, ",") != "profile.update.banner_picture,profile.update.affiliate_badge" ||
		res["profile_banner_url"] != "https://img.example/b.png" || res["affiliate"] != true {
		t.Errorf("user update printed %v", res)
	}
	for _, bad := range []liveFlags{{Banner: given("img.example")}, {Affiliate: given("maybe")}} {
		if _, err := adminCommand(ctx, db, nil, "user update", adminFlags{User: u.Username, Live: bad}); err == nil {
			t.Errorf("user update %+v: no error", bad)
		}
	}
}
