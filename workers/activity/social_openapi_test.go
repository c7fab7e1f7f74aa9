package activity_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestSocialEnvelopes runs follows, a mute and a block through the sink:
// each reaches the subscriptions of the users it concerns (a follow both
// users, a mute or block only the actor's, never the target's), with the
// event-payloads page's {"source": {"data": user}, "target": {"data":
// user}}; each user checked against the description's User schema, the
// envelope against ActivityStreamResponse. (The description's
// FollowActivityResponsePayload has the users without "data": Aviary
// follows the page, docs/social-graph.md.) A suspended user's events are
// not delivered.
func TestSocialEnvelopes(t *testing.T) {
	t.Parallel()
	schemas := openapiSchemas(t)
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice, bob, carol := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	subs := map[int64]string{}
	for _, s := range []struct {
		typ  string
		user storage.User
	}{{"follow.follow", alice}, {"follow.follow", bob}, {"follow.unfollow", bob}, {"mute.mute", alice}, {"mute.mute", bob},
		{"block.block", alice}, {"block.block", bob}, {"follow.follow", carol}} {
		id := factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: s.typ, FilterUserID: s.user.ID})
		subs[id] = s.typ + ">" + s.user.Username
	}
	steps := []func() error{
		func() error { _, err := db.Follow(ctx, 0, alice.ID, bob.ID); return err },
		func() error { _, err := db.Mute(ctx, 0, alice.ID, bob.ID); return err },
		func() error { _, err := db.Block(ctx, 0, alice.ID, bob.ID); return err }, // ends the follow: follow.unfollow
		func() error { _, err := db.Follow(ctx, 0, carol.ID, alice.ID); return err },
	}
	for _, f := range steps {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetUserState(ctx, carol.ID, "suspended", carol.CreatedAt); err != nil {
		t.Fatal(err)
	}
	published := streamLog(ctx, t, db)
	userSchema := schemas["User"].Value
	envelopeSchema := withoutPayload(t, schemas["ActivityStreamResponse"].Value)
	var got []string
	for _, a := range published {
		var env struct {
			Data struct {
				EventType string `json:"event_type"`
				Filter    struct {
					UserID string `json:"user_id"`
				} `json:"filter"`
				Payload map[string]map[string]map[string]any `json:"payload"`
			} `json:"data"`
		}
		if err := json.Unmarshal(a.Body, &env); err != nil {
			t.Fatal(err)
		}
		got = append(got, subs[a.SubscriptionID])
		for _, side := range []string{"source", "target"} {
			u := env.Data.Payload[side]["data"]
			if err := userSchema.VisitJSON(u, openapi3.MultiErrors()); err != nil || u["id"] == nil {
				t.Errorf("%s %s: %v\nbody: %s", env.Data.EventType, side, err, a.Body)
			}
		}
		if env.Data.Payload["source"]["data"]["id"] != ids.Format(alice.ID) || env.Data.Payload["target"]["data"]["id"] != ids.Format(bob.ID) {
			t.Errorf("%s: source/target %s", env.Data.EventType, a.Body)
		}
		var whole map[string]any
		_ = json.Unmarshal(a.Body, &whole)
		delete(whole["data"].(map[string]any), "payload")
		if err := envelopeSchema.VisitJSON(whole, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s envelope: %v\nbody: %s", env.Data.EventType, err, a.Body)
		}
	}
	want := []string{"follow.follow>" + alice.Username, "follow.follow>" + bob.Username, "mute.mute>" + alice.Username,
		"follow.unfollow>" + bob.Username, "block.block>" + alice.Username}
	if len(got) != len(want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delivery %d: %s, want %s (all: %v)", i, got[i], want[i], got)
		}
	}
}
