package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// listen is a connection of its own LISTENing on the deliverers' channel.
func listen(t *testing.T, db *postgres.DB) *pgx.Conn {
	t.Helper()
	url, ok := storagetest.DatabaseURL(db)
	if !ok {
		t.Fatal("no database URL")
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), `LISTEN aviary_webhook_deliveries`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// waitNotification fails the test unless a notification arrives soon.
func waitNotification(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := conn.WaitForNotification(ctx); err != nil {
		t.Fatalf("no notification on aviary_webhook_deliveries: %v", err)
	}
}

// TestWebhookReplayJobs: one job at a time per webhook
// (ErrReplayConflict), only for the app's live webhook; the run copies the
// window's live post deliveries in event order plus one status, once; the
// sweep lists queued jobs and abandons them.
func TestWebhookReplayJobs(t *testing.T) {
	t.Parallel()
	db, pool := storagetest.NewDBWithPool(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	hook := newWebhook(t, db, app.ID, "https://a.example/hook")
	second := newWebhook(t, db, app.ID, "https://a.example/second")
	from := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	to := from.Add(30 * time.Minute)

	if _, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: other.ID, WebhookID: hook.ID, From: from, To: to}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another app's webhook: %v", err)
	}
	// The window holds events 5 (at from: in), 3 and 4 (before to: in,
	// recorded out of order); outside: event 1 (before from), event 6 (at
	// to), a replay copy, a redelivery, a status and another webhook's.
	in := func(seq int64, at time.Time, state string) int64 {
		return factory.WebhookDelivery(t, db, hook, &factory.WebhookDeliveryOpts{EventSeq: seq, EventAt: at, State: state, Body: []byte{byte('0' + seq)}})
	}
	in(1, from.Add(-time.Second), storage.DeliveryDelivered)
	in(5, from, storage.DeliveryDelivered)
	in(4, to.Add(-time.Microsecond), storage.DeliveryPending)
	in(3, from.Add(time.Minute), storage.DeliveryDead)
	in(6, to, storage.DeliveryPending)
	factory.WebhookDelivery(t, db, second, &factory.WebhookDeliveryOpts{EventSeq: 3, EventAt: from.Add(time.Minute)})
	factory.WebhookDelivery(t, db, hook, &factory.WebhookDeliveryOpts{Kind: storage.DeliveryReplayStatus, EventAt: from.Add(time.Minute)})

	job, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: hook.ID, From: from, To: to})
	if err != nil || job.State != storage.ReplayQueued || !job.From.Equal(from) || !job.To.Equal(to) || job.WebhookID != hook.ID {
		t.Fatalf("create: %+v, %v", job, err)
	}
	if _, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: hook.ID, From: from, To: to}); !errors.Is(err, storage.ErrReplayConflict) {
		t.Fatalf("second job: %v", err)
	}

	due, err := db.WebhookReplaysDue(ctx, time.Now().Add(time.Minute), 10)
	if err != nil || len(due) != 1 || due[0].ID != job.ID {
		t.Fatalf("due: %+v, %v", due, err)
	}
	if due, err := db.WebhookReplaysDue(ctx, job.CreatedAt.Add(-time.Second), 10); err != nil || len(due) != 0 {
		t.Fatalf("due before it was created: %+v, %v", due, err)
	}
	if err := db.MarkWebhookReplaysSwept(ctx, []int64{job.ID}, time.Now()); err != nil {
		t.Fatal(err)
	}

	conn := listen(t, db)
	ran, ok, err := db.RunWebhookReplay(ctx, job.ID)
	if err != nil || !ok || ran.State != storage.ReplayRunning || ran.Events != 3 || ran.StartedAt == nil {
		t.Fatalf("run: %+v %v, %v", ran, ok, err)
	}
	waitNotification(t, conn)
	type copied struct {
		seq   int64
		kind  string
		state string
		body  string
	}
	rows, err := pool.Query(ctx, `SELECT event_seq, kind, state, convert_from(body, 'UTF8') FROM webhook_deliveries
		WHERE replay_job_id = $1 ORDER BY id`, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (copied, error) {
		var c copied
		return c, row.Scan(&c.seq, &c.kind, &c.state, &c.body)
	})
	want := []copied{{3, "post", "pending", "3"}, {4, "post", "pending", "4"}, {5, "post", "pending", "5"}, {0, "replay_status", "pending", ""}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("copies: %+v, %v; want %+v", got, err, want)
	}
	again, ok, err := db.RunWebhookReplay(ctx, job.ID)
	if err != nil || ok || again.State != storage.ReplayRunning {
		t.Fatalf("run again: %+v %v, %v", again, ok, err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE replay_job_id = $1`, job.ID).Scan(&n); err != nil || n != 4 {
		t.Fatalf("after a second run: %d rows, %v", n, err)
	}
	if _, _, err := db.RunWebhookReplay(ctx, 1); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("run a missing job: %v", err)
	}
	// Running: still one at a time; the sweep no longer lists it.
	if _, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: hook.ID, From: from, To: to}); !errors.Is(err, storage.ErrReplayConflict) {
		t.Fatalf("job while one runs: %v", err)
	}
	if due, err := db.WebhookReplaysDue(ctx, time.Now().Add(time.Minute), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after the run: %+v, %v", due, err)
	}

	// A queued job abandoned ends incomplete; a job of a deleted webhook
	// ends incomplete when it runs, queueing nothing.
	j2, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: second.ID, From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.AbandonWebhookReplay(ctx, j2.ID, time.Now()); err != nil || !ok {
		t.Fatalf("abandon: %v, %v", ok, err)
	}
	if ok, err := db.AbandonWebhookReplay(ctx, job.ID, time.Now()); err != nil || ok {
		t.Fatalf("abandon a running job: %v, %v", ok, err)
	}
	j3, err := db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: app.ID, WebhookID: second.ID, From: from, To: to})
	if err != nil {
		t.Fatalf("a job after an abandoned one: %v", err)
	}
	if err := db.DeleteWebhook(ctx, app.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	end, ok, err := db.RunWebhookReplay(ctx, j3.ID)
	if err != nil || ok || end.State != storage.ReplayIncomplete || end.FinishedAt == nil {
		t.Fatalf("run for a deleted webhook: %+v %v, %v", end, ok, err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE replay_job_id = $1`, j3.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("copies for a deleted webhook: %d, %v", n, err)
	}
}
