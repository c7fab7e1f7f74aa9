package postgres_test

import (
	"fmt"
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

// TestActivityPrivateNeedsLiveGrant: a private type's subscription
// matches only while its app holds a live grant of the user who created
// it (an OAuth 1.0a access token or an OAuth 2.0 family with a usable
// token); public types match without one; another app's grant does not
// count. The stream backfill's ActivitySubscriptionsOfApp agrees.
func TestActivityPrivateNeedsLiveGrant(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, pool := storagetest.NewDBWithPool(t)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	revoke2 := func(app storage.App, token string) {
		t.Helper()
		if _, err := db.RevokeOAuth2Token(ctx, token, app.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		typ   string
		setup func(t *testing.T, app, other storage.App, user storage.User, tag string)
		want  bool
	}{
		{"private without grant", "like.create", func(*testing.T, storage.App, storage.App, storage.User, string) {}, false},
		{"oauth.revoke outlives the grant", "oauth.revoke", func(*testing.T, storage.App, storage.App, storage.User, string) {}, true},
		{"public without grant", "post.create", func(*testing.T, storage.App, storage.App, storage.User, string) {}, true},
		{"live OAuth 1.0a token", "like.create", func(t *testing.T, app, _ storage.App, u storage.User, _ string) {
			factory.AccessToken(t, db, app, u, "")
		}, true},
		{"revoked OAuth 1.0a token", "mute.mute", func(t *testing.T, app, _ storage.App, u storage.User, _ string) {
			if err := db.RevokeAccessToken(ctx, factory.AccessToken(t, db, app, u, "").Token); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"live OAuth 2.0 grant", "like.create", func(t *testing.T, app, _ storage.App, u storage.User, tag string) {
			grant(t, db, app.ID, u.ID, tag+"c", tag+"a", tag+"r")
		}, true},
		{"revoked OAuth 2.0 family", "like.create", func(t *testing.T, app, _ storage.App, u storage.User, tag string) {
			grant(t, db, app.ID, u.ID, tag+"c", tag+"a", tag+"r")
			revoke2(app, tag+"r")
		}, false},
		{"OAuth 2.0 access revoked, refresh live", "dm.sent", func(t *testing.T, app, _ storage.App, u storage.User, tag string) {
			grant(t, db, app.ID, u.ID, tag+"c", tag+"a", tag+"r")
			revoke2(app, tag+"a")
		}, true},
		{"OAuth 2.0 access revoked, no refresh", "like.create", func(t *testing.T, app, _ storage.App, u storage.User, tag string) {
			grant(t, db, app.ID, u.ID, tag+"c", tag+"a", "")
			revoke2(app, tag+"a")
		}, false},
		{"OAuth 2.0 tokens expired", "block.block", func(t *testing.T, app, _ storage.App, u storage.User, tag string) {
			grant(t, db, app.ID, u.ID, tag+"c", tag+"a", tag+"r")
			exec(`UPDATE oauth2_tokens SET expires_at = now() - interval '1 second'
				WHERE family_id IN (SELECT id FROM oauth2_families WHERE app_id = $1)`, app.ID)
		}, false},
		{"another app's grants", "like.create", func(t *testing.T, _, other storage.App, u storage.User, tag string) {
			factory.AccessToken(t, db, other, u, "")
			grant(t, db, other.ID, u.ID, tag+"c", tag+"a", tag+"r")
		}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app, other := factory.App(t, db, nil), factory.App(t, db, nil)
			user := factory.User(t, db, nil)
			tt.setup(t, app, other, user, fmt.Sprintf("grant-%d-", i))
			id := factory.ActivitySubscriptionRow(t, db, storage.ActivitySubscription{AppID: app.ID, EventType: tt.typ, FilterUserID: user.ID, CreatedBy: user.ID})
			matched, err := db.ActivitySubscriptionsMatching(ctx, []storage.ActivityKey{{UserID: user.ID, EventType: tt.typ}})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.ContainsFunc(matched, func(s storage.ActivitySubscription) bool { return s.ID == id }); got != tt.want {
				t.Errorf("ActivitySubscriptionsMatching has subscription: %v, want %v", got, tt.want)
			}
		})
	}
}
