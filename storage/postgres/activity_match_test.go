package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestActivityMatchAndDeliveries: subscriptions match by (user, type);
// deleting a webhook deletes its subscriptions, and one whose webhook is
// marked deleted before that (the moment between the two) matches with
// WebhookID 0; activity
// deliveries keep their subscription, skip a deleted webhook and a
// (webhook, event, subscription) recorded already.
func TestActivityMatchAndDeliveries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, pool := storagetest.NewDBWithPool(t)
	app := factory.App(t, db, nil)
	hook := func(path string) storage.Webhook {
		w, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://receiver.example/" + path, CheckedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	live, gone, racing := hook("live"), hook("gone"), hook("racing")
	sub := func(typ string, user, webhook int64) int64 {
		return factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: typ, FilterUserID: user, WebhookID: webhook})
	}
	a := sub("post.create", 1, live.ID)
	sub("post.create", 1, gone.ID) // deleted with its webhook
	b := sub("post.create", 1, racing.ID)
	c := sub("post.delete", 1, live.ID)
	sub("post.create", 2, live.ID)
	if err := db.DeleteWebhook(ctx, app.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhooks SET deleted_at = now() WHERE id = $1`, racing.ID); err != nil {
		t.Fatal(err)
	}
	got, err := db.ActivitySubscriptionsMatching(ctx, []storage.ActivityKey{{UserID: 1, EventType: "post.create"}, {UserID: 1, EventType: "post.delete"}})
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[int64]int64{}
	for _, s := range got {
		hooks[s.ID] = s.WebhookID
	}
	if len(got) != 3 || hooks[a] != live.ID || hooks[b] != 0 || hooks[c] != live.ID {
		t.Fatalf("matched %+v, want a and c on the live webhook, b without its deleted one (and nothing of the webhook deleted with its subscriptions)", got)
	}
	at := time.Now()
	ds := []storage.NewActivityDelivery{{WebhookID: live.ID, AppID: app.ID, SubscriptionID: a, EventSeq: 9, EventAt: at, Body: []byte(`{"data":{}}`)},
		{WebhookID: live.ID, AppID: app.ID, SubscriptionID: c, EventSeq: 9, EventAt: at, Body: []byte(`{"data":{}}`)},
		{WebhookID: racing.ID, AppID: app.ID, SubscriptionID: b, EventSeq: 9, EventAt: at, Body: []byte(`{"data":{}}`)}}
	for i, want := range []int64{2, 0} {
		n, err := db.AddActivityDeliveries(ctx, ds)
		if err != nil || n != want {
			t.Fatalf("round %d: AddActivityDeliveries = %d, %v; want %d", i, n, err, want)
		}
	}
	rows, err := pool.Query(ctx, `SELECT subscription_id FROM webhook_deliveries WHERE kind = 'activity' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var subs []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, id)
	}
	if rows.Close(); !slices.Equal(subs, []int64{a, c}) {
		t.Errorf("activity deliveries of subscriptions %v, want %v", subs, []int64{a, c})
	}
}
