package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestConsoleLists: the console's media, open connections and activity
// subscriptions are those of the apps asked for (every app's with all),
// newest first, at most limit.
func TestConsoleLists(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	a, b, c := factory.App(t, db, nil), factory.App(t, db, nil), factory.App(t, db, nil)
	owner := factory.User(t, db, nil)
	media := map[int64][]int64{} // app -> ids, oldest first
	conns := map[int64][]string{}
	subs := map[int64][]int64{}
	for i, app := range []storage.App{a, b, a, c, a} {
		id, err := db.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if _, err := db.CreateMedia(ctx, storage.Media{ID: id, Key: storage.MediaKey(storage.MediaPhoto, id), OwnerID: owner.ID, AppID: app.ID,
			MediaType: "image/png", Category: storage.MediaTweetImage, Kind: storage.MediaPhoto, TotalBytes: 1, CreatedAt: now,
			ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		media[app.ID] = append(media[app.ID], id)
		conn, err := db.OpenStreamConnection(ctx, storage.StreamConnection{AppID: app.ID, Endpoint: storage.EndpointFilteredStream, Replica: "r"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		conns[app.ID] = append(conns[app.ID], conn.ID)
		sub, err := db.CreateActivitySubscription(ctx, storage.ActivitySubscription{AppID: app.ID, EventType: "news.new",
			FilterKeyword: string(rune('a' + i))}, 0)
		if err != nil {
			t.Fatal(err)
		}
		subs[app.ID] = append(subs[app.ID], sub.ID)
	}
	// A closed connection of a is never listed.
	if err := db.CloseStreamConnection(ctx, conns[a.ID][0], storage.DisconnectClient); err != nil {
		t.Fatal(err)
	}
	openOfA := conns[a.ID][1:]
	rev := func(s []int64) []int64 { out := slices.Clone(s); slices.Reverse(out); return out }
	revs := func(s []string) []string { out := slices.Clone(s); slices.Reverse(out); return out }
	for _, tc := range []struct {
		name      string
		apps      []int64
		all       bool
		limit     int
		wantMedia []int64
		wantConns int
		wantSubs  []int64
	}{
		{"a", []int64{a.ID}, false, 10, rev(media[a.ID]), len(openOfA), rev(subs[a.ID])},
		{"a, limit 2", []int64{a.ID}, false, 2, rev(media[a.ID])[:2], 2, rev(subs[a.ID])[:2]},
		{"none", nil, false, 10, nil, 0, nil},
		{"b and c", []int64{b.ID, c.ID}, false, 10, []int64{media[c.ID][0], media[b.ID][0]}, 2, []int64{subs[c.ID][0], subs[b.ID][0]}},
		// Made in the order a, b, a, c, a: the newest three of every app.
		{"all", nil, true, 3, []int64{media[a.ID][2], media[c.ID][0], media[a.ID][1]}, 3, []int64{subs[a.ID][2], subs[c.ID][0], subs[a.ID][1]}},
	} {
		ms, err := db.ConsoleMedia(ctx, tc.apps, tc.all, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var gotMedia []int64
		for _, m := range ms {
			gotMedia = append(gotMedia, m.ID)
		}
		if !slices.Equal(gotMedia, tc.wantMedia) {
			t.Errorf("%s: media %v, want %v", tc.name, gotMedia, tc.wantMedia)
		}
		cs, err := db.ConsoleStreamConnections(ctx, tc.apps, tc.all, tc.limit)
		if err != nil || len(cs) != tc.wantConns {
			t.Errorf("%s: %d connections (%v), want %d", tc.name, len(cs), err, tc.wantConns)
		}
		for _, c := range cs {
			if c.DisconnectedAt != nil || c.ID == conns[a.ID][0] {
				t.Errorf("%s: closed connection %s listed", tc.name, c.ID)
			}
		}
		if tc.name == "a" {
			var got []string
			for _, c := range cs {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, revs(openOfA)) {
				t.Errorf("a: connections %v, want newest first %v", got, revs(openOfA))
			}
		}
		ss, err := db.ConsoleActivitySubscriptions(ctx, tc.apps, tc.all, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var gotSubs []int64
		for _, s := range ss {
			gotSubs = append(gotSubs, s.ID)
		}
		if !slices.Equal(gotSubs, tc.wantSubs) {
			t.Errorf("%s: subscriptions %v, want %v", tc.name, gotSubs, tc.wantSubs)
		}
	}
}
