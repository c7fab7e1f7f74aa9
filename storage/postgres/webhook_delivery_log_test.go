package postgres_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestWebhookDeliveryLog: the state counts pending and dead deliveries and
// names the newest attempted; the log pages newest first with a state
// filter; one delivery comes with its attempts; a redelivery is a pending
// copy at the end of the queue, with a notification; all within the app.
func TestWebhookDeliveryLog(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	hook := newWebhook(t, db, app.ID, "https://a.example/hook")
	at := time.Now().UTC().Truncate(time.Microsecond)

	s, err := db.WebhookDeliveryState(ctx, app.ID, hook.ID)
	if err != nil || s.Pending != 0 || s.Dead != 0 || s.Last != nil || s.FailingSince != nil {
		t.Fatalf("fresh state: %+v, %v", s, err)
	}
	delivered := factory.WebhookDelivery(t, db, hook, &factory.WebhookDeliveryOpts{EventSeq: 1, State: storage.DeliveryDelivered,
		Attempts: 1, LastStatus: 200, DeliveredAt: &at, LastAttemptAt: &at})
	dead := factory.WebhookDelivery(t, db, hook, &factory.WebhookDeliveryOpts{EventSeq: 2, State: storage.DeliveryDead,
		DeadReason: storage.DeadRejected, Attempts: 2, LastStatus: 404, LastError: "HTTP 404", LastAttemptAt: &at})
	pending := factory.WebhookDelivery(t, db, hook, &factory.WebhookDeliveryOpts{EventSeq: 3})
	factory.DeliveryAttempt(t, db, storage.DeliveryAttempt{DeliveryID: dead, Attempt: 2, StartedAt: at.Add(time.Second), Status: 404, LatencyMS: 7})
	factory.DeliveryAttempt(t, db, storage.DeliveryAttempt{DeliveryID: dead, Attempt: 1, StartedAt: at, Status: 404, LatencyMS: 5})
	factory.WebhookFailing(t, db, hook.ID, at, at.Add(time.Minute), &at)

	s, err = db.WebhookDeliveryState(ctx, app.ID, hook.ID)
	if err != nil || s.Pending != 1 || s.Dead != 1 || s.Last == nil || s.Last.ID != dead || !s.FailingSince.Equal(at) ||
		!s.NextProbeAt.Equal(at.Add(time.Minute)) || !s.LastDeliveredAt.Equal(at) {
		t.Fatalf("state: %+v, %v", s, err)
	}
	if _, err := db.WebhookDeliveryState(ctx, other.ID, hook.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another app's state: %v", err)
	}

	page := func(q storage.WebhookDeliveryQuery) []int64 {
		t.Helper()
		q.WebhookID = hook.ID
		if q.AppID == 0 {
			q.AppID = app.ID
		}
		list, err := db.WebhookDeliveries(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, d := range list {
			out = append(out, d.ID)
		}
		return out
	}
	for _, c := range []struct {
		name string
		q    storage.WebhookDeliveryQuery
		want []int64
	}{
		{"all", storage.WebhookDeliveryQuery{Limit: 10}, []int64{pending, dead, delivered}},
		{"first page", storage.WebhookDeliveryQuery{Limit: 2}, []int64{pending, dead}},
		{"next page", storage.WebhookDeliveryQuery{Limit: 2, BeforeID: dead}, []int64{delivered}},
		{"dead", storage.WebhookDeliveryQuery{Limit: 10, State: storage.DeliveryDead}, []int64{dead}},
		{"other app", storage.WebhookDeliveryQuery{Limit: 10, AppID: other.ID}, nil},
	} {
		if got := page(c.q); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	d, attempts, err := db.WebhookDeliveryOf(ctx, app.ID, hook.ID, dead)
	if err != nil || d.DeadReason != storage.DeadRejected || d.LastError != "HTTP 404" || len(attempts) != 2 ||
		attempts[0].Attempt != 1 || attempts[1].LatencyMS != 7 {
		t.Fatalf("delivery: %+v %+v, %v", d, attempts, err)
	}
	if _, _, err := db.WebhookDeliveryOf(ctx, other.ID, hook.ID, dead); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another app's delivery: %v", err)
	}

	conn := listen(t, db)
	copy, err := db.RedeliverWebhookDelivery(ctx, app.ID, hook.ID, dead)
	if err != nil || copy.ID <= pending || copy.RedeliveryOf != dead || copy.State != storage.DeliveryPending || copy.Attempts != 0 ||
		copy.EventSeq != 2 || string(copy.Body) != string(d.Body) || copy.ReplayJobID != 0 {
		t.Fatalf("redeliver: %+v, %v", copy, err)
	}
	waitNotification(t, conn)
	if _, err := db.RedeliverWebhookDelivery(ctx, other.ID, hook.ID, dead); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("redeliver another app's delivery: %v", err)
	}
	status := factory.WebhookDelivery(t, db, hook, &factory.WebhookDeliveryOpts{Kind: storage.DeliveryReplayStatus})
	if _, err := db.RedeliverWebhookDelivery(ctx, app.ID, hook.ID, status); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("redeliver a replay status: %v", err)
	}
	if err := db.DeleteWebhook(ctx, app.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RedeliverWebhookDelivery(ctx, app.ID, hook.ID, dead); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("redeliver to a deleted webhook: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE redelivery_of = $1`, dead).Scan(&n); err != nil || n != 1 {
		t.Fatalf("copies: %d, %v", n, err)
	}
}
