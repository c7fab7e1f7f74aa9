package activity_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/activity"
)

type publisher struct{ got []events.Activity }

func (p *publisher) PublishActivity(_ context.Context, as []events.Activity) error {
	p.got = append(p.got, as...)
	return nil
}

// downBus is Redis down: every publish fails.
type downBus struct{ calls int }

func (b *downBus) PublishActivity(context.Context, []events.Activity) error {
	b.calls++
	return errors.New("dial tcp 127.0.0.1:6379: connection refused")
}

// failingStore is PostgreSQL refusing the deliveries' insert.
type failingStore struct{ activity.Store }

func (failingStore) AddActivityDeliveries(context.Context, []storage.NewActivityDelivery) (int64, error) {
	return 0, errors.New("insert: connection reset")
}

// envelope is the part of a delivery body the test reads.
type envelope struct {
	Data struct {
		EventUUID string            `json:"event_uuid"`
		Filter    map[string]string `json:"filter"`
		EventType string            `json:"event_type"`
		Tag       string            `json:"tag"`
		Payload   map[string]any    `json:"payload"`
		Includes  map[string]any    `json:"includes"`
	} `json:"data"`
}

func decode(t *testing.T, body []byte) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return e
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

// TestSink drives the sink with the events real writes append, against
// PostgreSQL: matching by user, type and direction; a protected author's
// post and posts of other users are not delivered; payloads per type;
// webhook deliveries (kind activity, per subscription) and stream
// messages; a re-offered batch records nothing new.
func TestSink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storagetest.NewDBWithPool(t)
	app := factory.App(t, db, nil)
	hook, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://receiver.example/a", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	alice, bob, carol := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	hidden := time.Now()
	prot := factory.User(t, db, &factory.UserOpts{ProtectedAt: &hidden})
	sub := func(typ string, user storage.User, direction, tag string, webhook bool) int64 {
		s := storage.ActivitySubscription{AppID: app.ID, EventType: typ, FilterUserID: user.ID, Direction: direction, Tag: tag}
		if webhook {
			s.WebhookID = hook.ID
		}
		return factory.ActivitySubscriptionRow(t, db, s)
	}
	sCreate := sub("post.create", alice, "", "posts", true)
	sReply := sub("post.reply.create", alice, "", "", false)
	sub("like.create", bob, "inbound", "", true)  // carol, not bob, wrote the liked reply
	sub("like.create", bob, "outbound", "", true) // bob likes nothing
	sub("post.create", prot, "", "", true)        // never delivered
	sMention := sub("post.mention.create", carol, "", "", true)
	sBio := sub("profile.update.bio", alice, "", "", true)
	sDelete := sub("post.delete", alice, "", "", true)
	sub("post.create", bob, "", "", true) // alice's posts only mention bob's id nowhere

	p1 := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "hi @" + carol.Username,
		Entities: storage.Entities{Mentions: []storage.MentionEntity{{Start: 3, End: 4 + len(carol.Username), Username: carol.Username, UserID: carol.ID}}}})
	reply := factory.Post(t, db, &factory.PostOpts{Author: carol, Text: "a reply", InReplyTo: p1})
	if _, err := db.Like(ctx, alice.ID, reply.ID); err != nil {
		t.Fatal(err)
	}
	factory.Post(t, db, &factory.PostOpts{Author: prot, Text: "hidden"})
	bio := "new bio"
	if _, _, err := db.UpdateUserProfile(ctx, alice.ID, postgres.ProfileUpdate{Bio: &bio}); err != nil {
		t.Fatal(err)
	}
	// A subscription made after the events: none of them is its.
	sub("post.create", alice, "", "late", false)
	pub := &publisher{}
	hooks := &activity.Sink{Mode: activity.Webhooks, Store: db, Posts: &render.Hydrator{Store: db}}
	stream := &activity.Sink{Mode: activity.Stream, Store: db, Posts: &render.Hydrator{Store: db}, Bus: pub}
	handle := func(batch []events.Event) {
		t.Helper()
		for _, sink := range []*activity.Sink{hooks, stream} {
			if err := sink.Handle(ctx, batch); err != nil {
				t.Fatalf("%s: %v", sink.Name(), err)
			}
		}
	}
	batch, err := db.EventsAfter(ctx, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	// The sink renders a post when it handles its event: a post deleted
	// by then is not shown, so the deletion comes in a later batch.
	handle(batch)
	if _, err := db.DeletePost(ctx, p1.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	later, err := db.EventsAfter(ctx, batch[len(batch)-1].Seq, 500)
	if err != nil {
		t.Fatal(err)
	}
	handle(later)
	batch = append(batch, later...)
	// bob's inbound like: carol's reply is carol's, so no like reaches bob.
	want := []int64{sCreate, sMention, sReply, sBio, sDelete}
	var subs []int64
	bodies := map[int64]envelope{}
	for _, a := range pub.got {
		if a.AppID != app.ID {
			t.Errorf("activity for app %d, want %d", a.AppID, app.ID)
		}
		subs = append(subs, a.SubscriptionID)
		bodies[a.SubscriptionID] = decode(t, a.Body)
	}
	if !slices.Equal(subs, want) {
		t.Fatalf("published for subscriptions %v, want %v (create, mention, reply, bio, delete)", subs, want)
	}
	created := bodies[sCreate].Data
	if created.EventType != "post.create" || created.Tag != "posts" || created.Filter["user_id"] != id(alice.ID) ||
		created.Payload["id"] != id(p1.ID) || created.Payload["author_id"] != id(alice.ID) || created.Payload["public_metrics"] == nil {
		t.Errorf("post.create envelope = %+v", created)
	}
	if users, _ := created.Includes["users"].([]any); len(users) != 1 {
		t.Errorf("post.create includes = %v, want the author", created.Includes)
	}
	if m := bodies[sMention].Data; m.EventType != "post.mention.create" || m.Filter["user_id"] != id(carol.ID) || m.Payload["id"] != id(p1.ID) {
		t.Errorf("mention envelope = %+v", m)
	}
	if c, m := created.EventUUID, bodies[sMention].Data.EventUUID; c == m ||
		c != activity.EventUUID(batch[0].Seq, "post.create", alice.ID, "", sCreate) {
		t.Errorf("event_uuid of post.create %q and of its mention %q: want distinct, per delivery", c, m)
	}
	if r := bodies[sReply].Data; r.Payload["id"] != id(reply.ID) || r.Payload["in_reply_to_user_id"] != id(alice.ID) {
		t.Errorf("reply envelope = %+v", r)
	}
	if b := bodies[sBio].Data; b.Payload["before"] != "" || b.Payload["after"] != "new bio" || b.Includes != nil {
		t.Errorf("bio envelope = %+v", b)
	}
	if d := bodies[sDelete].Data; d.EventType != "post.delete" || len(d.Payload) != 2 || d.Payload["id"] != id(p1.ID) || d.Payload["author_id"] != id(alice.ID) {
		t.Errorf("delete envelope = %+v", d)
	}

	// The webhook got every subscription's event but the stream-only reply.
	deliveries := func() []int64 {
		rows, err := pool.Query(ctx, `SELECT subscription_id FROM webhook_deliveries WHERE kind = 'activity' AND webhook_id = $1 ORDER BY id`, hook.ID)
		if err != nil {
			t.Fatal(err)
		}
		out, err := collect(rows)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := deliveries(), []int64{sCreate, sMention, sBio, sDelete}; !slices.Equal(got, want) {
		t.Fatalf("webhook deliveries for subscriptions %v, want %v", got, want)
	}
	if err := hooks.Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if got := deliveries(); len(got) != 4 {
		t.Errorf("after a re-offered batch: %d deliveries, want 4", len(got))
	}
}

// TestSinkModesFailIndependently: with Redis down the stream sink fails
// (its cursor offers the batch again) while the webhook sink records its
// deliveries; with the deliveries' insert failing the webhook sink fails
// while the stream sink publishes. The webhook sink never publishes.
func TestSinkModesFailIndependently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storagetest.NewDBWithPool(t)
	app := factory.App(t, db, nil)
	hook, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://receiver.example/b", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	alice := factory.User(t, db, nil)
	withHook := factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: "post.create",
		FilterUserID: alice.ID, WebhookID: hook.ID})
	streamOnly := factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: "post.create",
		FilterUserID: alice.ID})
	factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "one"})
	batch, err := db.EventsAfter(ctx, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	posts := &render.Hydrator{Store: db}
	down := &downBus{}
	if err := (&activity.Sink{Mode: activity.Stream, Store: db, Posts: posts, Bus: down}).Handle(ctx, batch); err == nil || down.calls != 1 {
		t.Errorf("stream sink with Redis down: err %v after %d publishes, want an error after 1", err, down.calls)
	}
	hooks := &activity.Sink{Mode: activity.Webhooks, Store: db, Posts: posts, Bus: down}
	if err := hooks.Handle(ctx, batch); err != nil || down.calls != 1 {
		t.Errorf("webhook sink with Redis down: err %v, %d publishes; want it to record without publishing", err, down.calls)
	}
	var subs []int64
	rows, err := pool.Query(ctx, `SELECT subscription_id FROM webhook_deliveries WHERE kind = 'activity' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	if subs, err = collect(rows); err != nil || !slices.Equal(subs, []int64{withHook}) {
		t.Errorf("recorded deliveries for %v (err %v), want %d's only", subs, err, withHook)
	}

	pub := &publisher{}
	if err := (&activity.Sink{Mode: activity.Webhooks, Store: failingStore{db}, Posts: posts}).Handle(ctx, batch); err == nil {
		t.Error("webhook sink with a failing insert: no error, want the batch offered again")
	}
	if err := (&activity.Sink{Mode: activity.Stream, Store: failingStore{db}, Posts: posts, Bus: pub}).Handle(ctx, batch); err != nil {
		t.Fatalf("stream sink with a failing deliveries insert: %v", err)
	}
	var published []int64
	for _, a := range pub.got {
		published = append(published, a.SubscriptionID)
	}
	if !slices.Equal(published, []int64{withHook, streamOnly}) {
		t.Errorf("published for %v, want %v (every subscription, in order)", published, []int64{withHook, streamOnly})
	}
	if (&activity.Sink{Mode: activity.Stream}).Name() != activity.StreamCursor || hooks.Name() != activity.WebhooksCursor {
		t.Errorf("sink names %q, %q: want the cursors' names", (&activity.Sink{Mode: activity.Stream}).Name(), hooks.Name())
	}
}

// TestSinkLikeDirections: a like reaches the liker's outbound and the
// author's inbound subscriptions, a no-direction subscription once even
// for a like of one's own post, and the payload is the reference's like
// object with the liked post in includes.
func TestSinkLikeDirections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	sub := func(user storage.User, direction string) int64 {
		return factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: "like.create",
			FilterUserID: user.ID, Direction: direction})
	}
	bobOut, bobIn, aliceIn, aliceOut, aliceBoth := sub(bob, "outbound"), sub(bob, "inbound"), sub(alice, "inbound"), sub(alice, "outbound"), sub(alice, "")
	post := factory.Post(t, db, &factory.PostOpts{Author: alice})
	for _, u := range []storage.User{bob, alice} {
		if _, err := db.Like(ctx, u.ID, post.ID); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := db.EventsAfter(ctx, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	pub := &publisher{}
	if err := (&activity.Sink{Mode: activity.Stream, Store: db, Posts: &render.Hydrator{Store: db}, Bus: pub}).Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	got := map[int64]int{}
	for _, a := range pub.got {
		got[a.SubscriptionID]++
		e := decode(t, a.Body).Data
		if e.Payload["liked_tweet_id"] != id(post.ID) || e.Payload["liked_tweet_author_id"] != id(alice.ID) || e.Filter["direction"] == "" {
			t.Errorf("like envelope = %+v", e)
		}
		if tweets, _ := e.Includes["tweets"].([]any); len(tweets) == 0 {
			t.Errorf("like includes = %v, want the liked post", e.Includes)
		}
	}
	// bob's like: bob outbound, alice inbound and both; alice's own like:
	// alice outbound, inbound, and both (once).
	want := map[int64]int{bobOut: 1, aliceIn: 2, aliceBoth: 2, aliceOut: 1}
	if len(got) != len(want) || got[bobIn] != 0 {
		t.Fatalf("deliveries by subscription = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("subscription %d: %d deliveries, want %d (all: %v)", k, got[k], n, got)
		}
	}
}
