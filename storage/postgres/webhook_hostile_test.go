package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestRetentionOfRedeliveredDelivery: a delivery redelivered twice ages out
// before its copies; deleting it must not fail (its copies' redelivery_of
// goes NULL, which made both of them "live" deliveries of the same event).
func TestRetentionOfRedeliveredDelivery(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	hook := newWebhook(t, db, app.ID, "https://a.example/hook")
	if _, err := db.AddWebhookDeliveries(ctx, []storage.NewDelivery{{WebhookID: hook.ID, AppID: app.ID, EventSeq: 1,
		EventAt: time.Now(), Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	var orig int64
	if err := pool.QueryRow(ctx, `SELECT id FROM webhook_deliveries WHERE webhook_id = $1`, hook.ID).Scan(&orig); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := db.RedeliverWebhookDelivery(ctx, app.ID, hook.ID, orig); err != nil {
			t.Fatalf("redeliver: %v", err)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET created_at = now() - interval '2 hours' WHERE id = $1`, orig); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteWebhookDeliveriesOlderThan(ctx, time.Hour, 0)
	if err != nil || n != 1 {
		t.Fatalf("retention: deleted %d, %v; want the original deleted", n, err)
	}
}

// TestReplayJobOutlivesItsDeliveries: a running job whose deliveries (its
// status included) the retention deleted can never finish; it must not
// block the webhook's replays for ever.
func TestReplayJobOutlivesItsDeliveries(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	hook := newWebhook(t, db, app.ID, "https://a.example/hook")
	from := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	job, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: hook.ID, From: from, To: from.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ran, err := db.RunWebhookReplay(ctx, job.ID); err != nil || !ran {
		t.Fatalf("run: %v %v", ran, err)
	}
	// The receiver stays away longer than the retention: the status
	// delivery ages out unsent.
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET created_at = now() - interval '2 hours' WHERE webhook_id = $1`, hook.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteWebhookDeliveriesOlderThan(ctx, time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	_, err = db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: hook.ID, From: from, To: from.Add(time.Minute)})
	if errors.Is(err, storage.ErrReplayConflict) {
		t.Fatalf("a job whose status delivery was deleted still blocks the webhook's replays")
	}
	if err != nil {
		t.Fatal(err)
	}
	j, err := db.WebhookReplay(ctx, job.ID)
	if err != nil || j.State != storage.ReplayIncomplete || j.FinishedAt == nil {
		t.Fatalf("the orphaned job: %+v, %v; want incomplete and finished", j, err)
	}
}
