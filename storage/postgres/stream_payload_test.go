package postgres_test

import (
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestPostEventCarriesStreamFields: a post.create payload carries what the
// filtered stream's operators read: the author's verified flag, the
// source, the place, the media kinds in attachment order, and for a
// repost the reposted post's author.
func TestPostEventCarriesStreamFields(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_sf", Profile: storage.Profile{Verified: true}})
	bob := factory.User(t, db, &factory.UserOpts{Username: "bob_sf"})
	video := factory.Media(t, db, &factory.MediaOpts{Owner: &alice, Category: storage.MediaTweetVideo})
	image := factory.Media(t, db, &factory.MediaOpts{Owner: &alice})

	start := head(t, db)
	orig := factory.Post(t, db, &factory.PostOpts{Author: alice, App: app, Text: "snow", Source: "Aviary Web",
		PlaceID: "5a110d312052166f", MediaIDs: []int64{video.ID, image.ID}})
	plain := factory.Post(t, db, &factory.PostOpts{Author: bob, App: app, Text: "snow"})
	repost, err := db.Repost(ctx, bob.ID, app.ID, orig.ID)
	if err != nil {
		t.Fatalf("Repost: %v", err)
	}
	evs := eventsAfter(t, db, start)
	if len(evs) != 3 || evs[2].SubjectID != repost.ID {
		t.Fatalf("events: %v", describe(evs))
	}
	o, pl, rp := decodePost(t, evs[0]), decodePost(t, evs[1]), decodePost(t, evs[2])
	if !o.AuthorVerified || o.Source != "Aviary Web" || o.PlaceID != "5a110d312052166f" ||
		!slices.Equal(o.MediaKinds, []string{"video", "photo"}) || o.RepostOfUsername != "" {
		t.Errorf("post payload = %+v", o)
	}
	if pl.AuthorVerified || pl.PlaceID != "" || pl.MediaKinds != nil || pl.ID != plain.ID {
		t.Errorf("plain payload = %+v", pl)
	}
	if rp.RepostOfUsername != "alice_sf" || rp.AuthorVerified {
		t.Errorf("repost payload = %+v", rp)
	}

	set := streamrules.NewSet([]storage.StreamRule{
		{ID: 1, AppID: 1, Value: "snow is:verified has:images has:video_link has:geo"},
		{ID: 2, AppID: 1, Value: `source:"aviary web" OR place:5a110d312052166f`},
		{ID: 3, AppID: 1, Value: "retweets_of:ALICE_SF"},
		{ID: 4, AppID: 1, Value: "snow -is:verified -is:nullcast"},
	})
	for _, tc := range []struct {
		name string
		hits []int64
		got  []int64
	}{{"post", []int64{1, 2}, ruleIDs(set, o)}, {"plain", []int64{4}, ruleIDs(set, pl)}, {"repost", []int64{3, 4}, ruleIDs(set, rp)}} {
		if !slices.Equal(tc.got, tc.hits) {
			t.Errorf("rules matched by the %s = %v, want %v", tc.name, tc.got, tc.hits)
		}
	}
}

func ruleIDs(set *streamrules.Set, p events.Post) []int64 {
	var ids []int64
	for _, h := range set.Match(p) {
		ids = append(ids, h.RuleID)
	}
	return ids
}
