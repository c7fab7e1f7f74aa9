package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestWebhookDeliveries: recording (idempotent, notified), links, claims
// (due head, lease, validity, failing and probes), outcomes in batches
// with their attempt rows, failing and recovery, replay status, stats and
// retention.
func TestWebhookDeliveries(t *testing.T) {
	t.Parallel()
	db, url := storagetest.NewDB(t)
	pool := storagetest.BarePool(t, url)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	newHook := func(path string) storage.Webhook {
		w, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://r.example/" + path, CheckedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	h1, h2 := newHook("one"), newHook("two")

	wait, closeListen, err := db.ListenWebhookDeliveries(ctx)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer closeListen()
	var ds []storage.NewDelivery
	for seq := int64(1); seq <= 4; seq++ {
		ds = append(ds, storage.NewDelivery{WebhookID: h1.ID, AppID: app.ID, EventSeq: seq, EventAt: time.Now(), Body: []byte(`{"n":1}`)})
	}
	if n, err := db.AddWebhookDeliveries(ctx, ds); err != nil || n != 4 {
		t.Fatalf("add: %d, %v", n, err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if err := wait(waitCtx); err != nil {
		t.Errorf("no notification: %v", err)
	}
	cancel()
	if n, err := db.AddWebhookDeliveries(ctx, ds[2:]); err != nil || n != 0 {
		t.Fatalf("add again: %d, %v; want 0 new", n, err)
	}

	// Links: those of live webhooks, of the given apps.
	if _, err := pool.Exec(ctx, `INSERT INTO webhook_stream_links (webhook_id, app_id, query) VALUES ($1, $3, 'a=1'), ($2, $3, '')`,
		h1.ID, h2.ID, app.ID); err != nil {
		t.Fatal(err)
	}
	other := factory.App(t, db, nil)
	for _, tc := range []struct {
		apps []int64
		want int
	}{{nil, 2}, {[]int64{app.ID}, 2}, {[]int64{other.ID}, 0}} {
		links, err := db.DeliveryLinks(ctx, tc.apps)
		if err != nil || len(links) != tc.want {
			t.Errorf("links of %v: %+v, %v; want %d", tc.apps, links, err, tc.want)
		}
	}

	q := storage.DeliveryClaimQuery{Holder: "a", TTL: time.Minute, ValidSince: time.Now().Add(-28 * time.Hour), Limit: 10}
	claim := func(q storage.DeliveryClaimQuery) []int64 {
		t.Helper()
		cs, err := db.ClaimWebhookDeliveries(ctx, q)
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		var ids []int64
		for _, c := range cs {
			if c.ConsumerSecret != app.ConsumerSecret {
				t.Errorf("claim of %d without the app's secret", c.ID)
			}
			ids = append(ids, c.ID)
		}
		return ids
	}
	// h2 has nothing queued; h1 is claimed once (leased).
	if got := claim(q); !slices.Equal(got, []int64{h1.ID}) {
		t.Fatalf("claimed %v, want [%d]", got, h1.ID)
	}
	q.Holder = "b"
	if got := claim(q); len(got) != 0 {
		t.Fatalf("a leased webhook claimed again: %v", got)
	}
	if ok, err := db.RenewDeliveryLease(ctx, h1.ID, "b", time.Minute, q.ValidSince); err != nil || ok {
		t.Errorf("another holder renewed: %v, %v", ok, err)
	}
	if ok, err := db.RenewDeliveryLease(ctx, h1.ID, "a", time.Minute, q.ValidSince); err != nil || !ok {
		t.Errorf("renew: %v, %v", ok, err)
	}
	pending, err := db.PendingDeliveries(ctx, h1.ID, 0, 10)
	if err != nil || len(pending) != 4 || pending[0].EventSeq != 1 || pending[3].EventSeq != 4 {
		t.Fatalf("pending: %+v, %v", pending, err)
	}
	if after, err := db.PendingDeliveries(ctx, h1.ID, pending[1].ID, 10); err != nil || len(after) != 2 || after[0].ID != pending[2].ID {
		t.Fatalf("pending after: %+v, %v", after, err)
	}
	now := time.Now()
	// 1 delivered, 2 dead rejected, 3 retried in an hour (the head is not due).
	err = db.RecordDeliveryBatch(ctx, storage.DeliveryBatch{WebhookID: h1.ID, Outcomes: []storage.DeliveryOutcome{
		{DeliveryID: pending[0].ID, StartedAt: now, Status: 200, LatencyMS: 3, State: storage.DeliveryDelivered},
		{DeliveryID: pending[1].ID, StartedAt: now, Status: 400, Error: "HTTP 400", State: storage.DeliveryDead, DeadReason: storage.DeadRejected},
		{DeliveryID: pending[2].ID, StartedAt: now, Error: "refused", State: storage.DeliveryPending, RetryIn: time.Hour},
	}})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if err := db.ReleaseDeliveryLease(ctx, h1.ID, "a"); err != nil {
		t.Fatal(err)
	}
	if got := claim(q); len(got) != 0 {
		t.Fatalf("claimed %v with the head not due", got)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, pending[2].ID); err != nil {
		t.Fatal(err)
	}
	// Invalid, or without a pass since ValidSince: not claimed.
	if _, err := pool.Exec(ctx, `UPDATE webhooks SET last_crc_ok_at = now() - interval '29 hours' WHERE id = $1`, h1.ID); err != nil {
		t.Fatal(err)
	}
	if got := claim(q); len(got) != 0 {
		t.Fatalf("claimed %v without a pass in 28 h", got)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhooks SET last_crc_ok_at = now() WHERE id = $1`, h1.ID); err != nil {
		t.Fatal(err)
	}
	if got := claim(q); !slices.Equal(got, []int64{h1.ID}) {
		t.Fatalf("claimed %v, want h1 once due and valid", got)
	}
	// 3 dies unreachable: the webhook fails, its probe is due in an hour.
	err = db.RecordDeliveryBatch(ctx, storage.DeliveryBatch{WebhookID: h1.ID, Fail: true, ProbeIn: time.Hour,
		Outcomes: []storage.DeliveryOutcome{{DeliveryID: pending[2].ID, StartedAt: now, Status: 503, State: storage.DeliveryDead,
			DeadReason: storage.DeadUnreachable}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ReleaseDeliveryLease(ctx, h1.ID, "b"); err != nil {
		t.Fatal(err)
	}
	if got := claim(q); len(got) != 0 {
		t.Fatalf("claimed a failing webhook before its probe: %v", got)
	}
	if s, err := db.WebhookDeliveryStats(ctx); err != nil || s.Failing != 1 || s.Pending != 1 {
		t.Errorf("stats %+v, %v; want 1 failing, 1 pending", s, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhooks SET next_probe_at = now() WHERE id = $1`, h1.ID); err != nil {
		t.Fatal(err)
	}
	cs, err := db.ClaimWebhookDeliveries(ctx, q)
	if err != nil || len(cs) != 1 || !cs[0].Probe() {
		t.Fatalf("probe claim: %+v, %v", cs, err)
	}
	probe, ok, err := db.ProbeDelivery(ctx, h1.ID)
	if err != nil || !ok || probe.ID != pending[2].ID {
		t.Fatalf("probe delivery %+v, %v, %v; want delivery 3", probe, ok, err)
	}
	// A recovery (recorded here with the probe's own outcome) puts every
	// unreachable-dead delivery back in the queue, 3 included, attempts
	// counted afresh, attempt rows numbered on.
	err = db.RecordDeliveryBatch(ctx, storage.DeliveryBatch{WebhookID: h1.ID, Recover: true,
		Outcomes: []storage.DeliveryOutcome{{DeliveryID: pending[2].ID, StartedAt: now, Status: 500, State: storage.DeliveryDead,
			DeadReason: storage.DeadUnreachable}}})
	if err != nil {
		t.Fatal(err)
	}
	pendingNow, err := db.PendingDeliveries(ctx, h1.ID, 0, 10)
	if err != nil || len(pendingNow) != 2 || pendingNow[0].ID != pending[2].ID || pendingNow[0].Attempts != 0 {
		t.Fatalf("pending after recovery: %+v, %v", pendingNow, err)
	}
	var attempts []int32
	var failing bool
	if err := pool.QueryRow(ctx, `SELECT array_agg(attempt ORDER BY attempt), (SELECT failing_since IS NOT NULL FROM webhooks WHERE id = $2)
		FROM webhook_delivery_attempts WHERE delivery_id = $1`, pending[2].ID, h1.ID).Scan(&attempts, &failing); err != nil ||
		!slices.Equal(attempts, []int32{1, 2, 3}) || failing {
		t.Errorf("attempts %v, failing %v (%v); want 1,2,3 and not failing", attempts, failing, err)
	}
	// Delivered at its fourth attempt: no attempt row is written for it,
	// the log shows it from the delivery's row, numbered on.
	err = db.RecordDeliveryBatch(ctx, storage.DeliveryBatch{WebhookID: h1.ID, Outcomes: []storage.DeliveryOutcome{
		{DeliveryID: pending[2].ID, StartedAt: now, Status: 204, LatencyMS: 7, State: storage.DeliveryDelivered}}})
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = $1`, pending[2].ID).Scan(&rows); err != nil || rows != 3 {
		t.Errorf("%d attempt rows after the delivering attempt (%v), want the 3 failed ones", rows, err)
	}
	d3, logged, err := db.WebhookDeliveryOf(ctx, app.ID, h1.ID, pending[2].ID)
	if err != nil || d3.State != storage.DeliveryDelivered || len(logged) != 4 {
		t.Fatalf("delivery 3: %+v, attempts %+v, %v; want delivered with 4 attempts", d3, logged, err)
	}
	if last := logged[3]; last.Attempt != 4 || last.Status != 204 || last.LatencyMS != 7 || !last.StartedAt.Equal(now.Truncate(time.Microsecond)) || logged[2].Status != 500 {
		t.Errorf("attempts %+v; want the failed 1-3, then 4 answered 204 in 7 ms at %v", logged, now)
	}

	// Replay: complete only when every copy was delivered; the status's
	// outcome finishes the job.
	var job int64
	if err := pool.QueryRow(ctx, `INSERT INTO webhook_replay_jobs (app_id, webhook_id, from_at, to_at, state)
		VALUES ($1, $2, now() - interval '1 hour', now(), 'running') RETURNING id`, app.ID, h2.ID).Scan(&job); err != nil {
		t.Fatal(err)
	}
	var copyID, statusID int64
	if err := pool.QueryRow(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_seq, event_at, replay_job_id, body)
		VALUES ($1, $2, 'post', 1, now(), $3, '{}') RETURNING id`, h2.ID, app.ID, job).Scan(&copyID); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_at, replay_job_id, body)
		VALUES ($1, $2, 'replay_status', now(), $3, '') RETURNING id`, h2.ID, app.ID, job).Scan(&statusID); err != nil {
		t.Fatal(err)
	}
	if complete, err := db.ReplayJobComplete(ctx, job); err != nil || complete {
		t.Errorf("complete before delivery: %v, %v", complete, err)
	}
	if err := db.RecordDeliveryBatch(ctx, storage.DeliveryBatch{WebhookID: h2.ID, Outcomes: []storage.DeliveryOutcome{
		{DeliveryID: copyID, StartedAt: now, Status: 204, State: storage.DeliveryDelivered}}}); err != nil {
		t.Fatal(err)
	}
	if complete, err := db.ReplayJobComplete(ctx, job); err != nil || !complete {
		t.Errorf("complete after delivery: %v, %v", complete, err)
	}
	if err := db.RecordDeliveryBatch(ctx, storage.DeliveryBatch{WebhookID: h2.ID, Outcomes: []storage.DeliveryOutcome{
		{DeliveryID: statusID, StartedAt: now, Status: 200, State: storage.DeliveryDelivered, Body: []byte(`{"replay_job_status":{}}`),
			ReplayJobID: job, JobState: storage.ReplayComplete}}}); err != nil {
		t.Fatal(err)
	}
	var state, body string
	if err := pool.QueryRow(ctx, `SELECT j.state || CASE WHEN j.finished_at IS NULL THEN '' ELSE '+finished' END, convert_from(d.body, 'UTF8')
		FROM webhook_replay_jobs j JOIN webhook_deliveries d ON d.id = $2 WHERE j.id = $1`, job, statusID).Scan(&state, &body); err != nil ||
		state != "complete+finished" || body != `{"replay_job_status":{}}` {
		t.Errorf("job %q, status body %q (%v)", state, body, err)
	}

	// Retention: deliveries older than the age go, with their attempts.
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET created_at = now() - interval '8 days' WHERE webhook_id = $1`, h1.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DeleteWebhookDeliveriesOlderThan(ctx, 7*24*time.Hour, 2); err != nil || n != 4 {
		t.Errorf("deleted %d, %v; want 4", n, err)
	}
	var left, leftAttempts int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries`).Scan(&left); err != nil || left != 2 {
		t.Errorf("left %d deliveries (%v), want 2", left, err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::bigint[])`,
		[]int64{pending[0].ID, pending[1].ID, pending[2].ID}).Scan(&leftAttempts); err != nil || leftAttempts != 0 {
		t.Errorf("%d attempt rows of deleted deliveries left (%v)", leftAttempts, err)
	}
}
