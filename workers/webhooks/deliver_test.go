package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// receiver is a real HTTP receiver on loopback: it checks each delivery's
// signature with the app's consumer secret and answers what status says
// (200 when nil); it keeps the event ids it answered 2xx, in order.
type receiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server
	status func(r *http.Request, body []byte) int

	mu       sync.Mutex
	accepted []string // x-aviary-event-id (or "status:<job state>") of 2xx answers
	bodies   [][]byte
	badSig   int
	inFlight atomic.Int32
	overlap  atomic.Int32 // requests that overlapped another (a webhook is sent one at a time)
}

func newReceiver(t *testing.T, secret string, status func(r *http.Request, body []byte) int) *receiver {
	rc := &receiver{t: t, secret: secret, status: status}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	if rc.inFlight.Add(1) > 1 {
		rc.overlap.Add(1)
	}
	defer rc.inFlight.Add(-1)
	body, _ := io.ReadAll(r.Body)
	code := http.StatusOK
	if rc.status != nil {
		code = rc.status(r, body)
	}
	rc.mu.Lock()
	if r.Header.Get("x-twitter-webhooks-signature") != domain.Sign(rc.secret, body) ||
		r.Header.Get("Content-Type") != "application/json" || r.Header.Get("x-aviary-delivery-id") == "" ||
		r.Header.Get("x-aviary-delivery-attempt") == "" {
		rc.badSig++
	}
	if code >= 200 && code <= 299 {
		id := r.Header.Get("x-aviary-event-id")
		if id == "" {
			id = "status"
		}
		rc.accepted = append(rc.accepted, id)
		rc.bodies = append(rc.bodies, body)
	}
	rc.mu.Unlock()
	w.WriteHeader(code)
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.accepted)
}

func (rc *receiver) checkSignatures() {
	rc.t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.badSig > 0 {
		rc.t.Errorf("%d deliveries came with a wrong signature or missing headers", rc.badSig)
	}
}

// fixture is a database with an app and a webhook.
type fixture struct {
	db   *postgres.DB
	pool *pgxpool.Pool
	app  storage.App
	hook storage.Webhook
}

func newFixture(t testing.TB, url string) *fixture {
	db, dbURL := storagetest.NewDB(t)
	f := &fixture{db: db, pool: storagetest.BarePool(t, dbURL), app: factory.App(t, db, nil)}
	var err error
	f.hook, err = db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: f.app.ID, URL: url, CheckedAt: time.Now()})
	if err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	return f
}

// queue records n post deliveries of events from..from+n-1.
func (f *fixture) queue(t testing.TB, from, n int) {
	ds := make([]storage.NewDelivery, n)
	for i := range ds {
		seq := int64(from + i)
		ds[i] = storage.NewDelivery{WebhookID: f.hook.ID, AppID: f.app.ID, EventSeq: seq, EventAt: time.Now(),
			Body: fmt.Appendf(nil, `{"data":{"id":"%d","text":"post number %d"}}`, seq, seq)}
	}
	if _, err := f.db.AddWebhookDeliveries(t.Context(), ds); err != nil {
		t.Fatalf("queue deliveries: %v", err)
	}
}

func (f *fixture) states(t *testing.T) map[string]int {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), `SELECT state || coalesce('/' || dead_reason, ''), count(*) FROM webhook_deliveries
		WHERE webhook_id = $1 GROUP BY 1`, f.hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

func seqs(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(from + i)
	}
	return out
}

func loopback(t testing.TB) outbound.AllowList {
	allow, err := outbound.ParseAllowList("127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	return allow
}

// deliverer is a fast-paced Deliverer (short backoff and probes).
func deliverer(t testing.TB, db *postgres.DB) *webhooks.Deliverer {
	return &webhooks.Deliverer{Store: db, Listen: db, Client: webhooks.NewDeliveryClient(loopback(t), 2*time.Second),
		Attempts: 3, Backoff: 20 * time.Millisecond, ProbeInterval: 50 * time.Millisecond, Poll: 50 * time.Millisecond,
		Lease: time.Second, Batch: 40}
}

// run runs d until the test ends (or stop is called).
func run(t testing.TB, d *webhooks.Deliverer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeliverInOrder: a webhook's queue reaches the receiver once, in
// order, signed, across several read batches; the rows and their attempt
// rows record it.
func TestDeliverInOrder(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 130)
	run(t, deliverer(t, f.db))
	eventually(t, "130 deliveries", func() bool { return len(rc.got()) >= 130 })
	f.queue(t, 131, 5) // woken by the notification
	eventually(t, "135 deliveries", func() bool { return f.states(t)["delivered"] == 135 })
	if got := rc.got(); !slices.Equal(got, seqs(1, 135)) {
		t.Errorf("received %v, want 1..135 in order", got)
	}
	rc.checkSignatures()
	var attempts int
	var lastDelivered *time.Time
	// Each delivering attempt is recorded in its delivery's row (the log
	// shows it from there), not as an attempt row.
	if err := f.pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM webhook_deliveries
		WHERE webhook_id = $1 AND last_status = 200 AND attempts = 1 AND last_attempt_at IS NOT NULL)
		+ (SELECT count(*) FROM webhook_delivery_attempts),
		(SELECT last_delivered_at FROM webhooks WHERE id = $1)`, f.hook.ID).Scan(&attempts, &lastDelivered); err != nil ||
		attempts != 135 || lastDelivered == nil {
		t.Errorf("delivered at the first attempt %d (plus attempt rows), last delivered %v (%v); want 135 and no attempt row, and a time", attempts, lastDelivered, err)
	}
}

// TestReceiverDownThenUp: a receiver that refuses connections, then
// answers 503, then comes back gets every event exactly once, in order:
// the head dies unreachable, the webhook fails, probes go until one is
// answered, and the queue goes on.
func TestReceiverDownThenUp(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // connection refused until the receiver starts
	var up atomic.Bool
	rc := &receiver{t: t, status: func(*http.Request, []byte) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	}}
	f := newFixture(t, "http://"+addr+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 20)
	run(t, deliverer(t, f.db))
	eventually(t, "the webhook failing", func() bool {
		var failing bool
		_ = f.pool.QueryRow(t.Context(), `SELECT failing_since IS NOT NULL FROM webhooks WHERE id = $1`, f.hook.ID).Scan(&failing)
		return failing
	})
	f.queue(t, 21, 5) // queued while failing: they wait
	// The receiver starts, answering 503 for a while.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	rc.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(rc.serve)}}
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	time.Sleep(200 * time.Millisecond)
	if got := rc.got(); len(got) != 0 {
		t.Fatalf("delivered while the receiver answered 503: %v", got)
	}
	up.Store(true)
	eventually(t, "25 deliveries", func() bool { return f.states(t)["delivered"] == 25 })
	if got := rc.got(); !slices.Equal(got, seqs(1, 25)) {
		t.Errorf("received %v, want 1..25 once each, in order", got)
	}
	rc.checkSignatures()
	var failing bool
	if err := f.pool.QueryRow(t.Context(), `SELECT failing_since IS NOT NULL OR next_probe_at IS NOT NULL FROM webhooks WHERE id = $1`,
		f.hook.ID).Scan(&failing); err != nil || failing {
		t.Errorf("still failing after the recovery (%v)", err)
	}
}

// TestRejectedParked: a delivery answered 400 on every attempt is parked
// (dead, rejected) and the rest of the queue goes on.
func TestRejectedParked(t *testing.T) {
	t.Parallel()
	var tries atomic.Int32
	rc := newReceiver(t, "", func(r *http.Request, _ []byte) int {
		if r.Header.Get("x-aviary-event-id") == "3" {
			tries.Add(1)
			return http.StatusBadRequest
		}
		return http.StatusOK
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 6)
	run(t, deliverer(t, f.db))
	eventually(t, "the rest delivered", func() bool { return f.states(t)["delivered"] == 5 })
	if got, want := rc.got(), []string{"1", "2", "4", "5", "6"}; !slices.Equal(got, want) {
		t.Errorf("received %v, want %v", got, want)
	}
	if s := f.states(t); s["dead/rejected"] != 1 || tries.Load() != 3 {
		t.Errorf("states %v after %d tries; want one dead/rejected after 3", s, tries.Load())
	}
	var status, attempts int
	if err := f.pool.QueryRow(t.Context(), `SELECT last_status, (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id)
		FROM webhook_deliveries d WHERE event_seq = 3`).Scan(&status, &attempts); err != nil || status != 400 || attempts != 3 {
		t.Errorf("parked row: status %d, %d attempt rows (%v)", status, attempts, err)
	}
}

// TestInvalidWebhookWaits: an invalid webhook gets nothing; once it passes
// a CRC check again its queue goes.
func TestInvalidWebhookWaits(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	ctx := t.Context()
	if _, err := f.db.RecordWebhookCRC(ctx, storage.WebhookCRC{ID: f.hook.ID, At: time.Now(), Failure: "wrong token", Invalidate: true}); err != nil {
		t.Fatal(err)
	}
	f.queue(t, 1, 3)
	run(t, deliverer(t, f.db))
	time.Sleep(300 * time.Millisecond)
	if got := rc.got(); len(got) != 0 {
		t.Fatalf("an invalid webhook received %v", got)
	}
	// Valid but without a pass for more than 28 h: still nothing.
	if _, err := f.pool.Exec(ctx, `UPDATE webhooks SET valid = true, last_crc_ok_at = now() - interval '29 hours' WHERE id = $1`, f.hook.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := rc.got(); len(got) != 0 {
		t.Fatalf("a webhook without a pass for 29 h received %v", got)
	}
	if _, err := f.db.RecordWebhookCRC(ctx, storage.WebhookCRC{ID: f.hook.ID, At: time.Now(), OK: true}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the queue after the pass", func() bool { return len(rc.got()) == 3 })
	if got := rc.got(); !slices.Equal(got, seqs(1, 3)) {
		t.Errorf("received %v", got)
	}
}

// TestTwoDeliverers: two deliverers on one webhook never send it at the
// same time nor twice (the lease), and the order holds.
func TestTwoDeliverers(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", func(*http.Request, []byte) int {
		time.Sleep(time.Millisecond)
		return http.StatusOK
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	a, b := deliverer(t, f.db), deliverer(t, f.db)
	// Leases long enough for a loaded machine's renewals (every 400 ms,
	// each bounded by that): a drain that cannot renew in time aborts its
	// POST, which the receiver may count (at least once).
	a.Lease, b.Lease = 2*time.Second, 2*time.Second
	run(t, a)
	run(t, b)
	for i := range 10 {
		f.queue(t, 1+i*30, 30)
		time.Sleep(30 * time.Millisecond)
	}
	eventually(t, "300 deliveries", func() bool { return f.states(t)["delivered"] == 300 })
	if got := rc.got(); !slices.Equal(got, seqs(1, 300)) {
		t.Errorf("received %d deliveries, want 1..300 once each in order: %v", len(got), got)
	}
	if n := rc.overlap.Load(); n != 0 {
		t.Errorf("%d requests overlapped another", n)
	}
}

// TestReplayStatus: a replay job's status event says Complete when every
// copy was delivered, Incomplete when one was parked, and the job ends in
// that state. (The jobs are made here with SQL: the replay handler is
// another package's.)
func TestReplayStatus(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", func(r *http.Request, body []byte) int {
		if r.Header.Get("x-aviary-event-id") == "102" {
			return http.StatusUnprocessableEntity
		}
		return http.StatusOK
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	ctx := t.Context()
	job := func(from int) int64 {
		var id int64
		err := f.pool.QueryRow(ctx, `INSERT INTO webhook_replay_jobs (app_id, webhook_id, from_at, to_at, state, events, started_at)
			VALUES ($1, $2, now() - interval '1 hour', now(), 'running', 3, now()) RETURNING id`, f.app.ID, f.hook.ID).Scan(&id)
		if err != nil {
			t.Fatalf("make a replay job: %v", err)
		}
		if _, err := f.pool.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_seq, event_at, replay_job_id, body)
			SELECT $2, $1, 'post', g, now(), $4, convert_to('{"n":' || g || '}', 'UTF8') FROM generate_series($3::int, $3::int + 2) g ORDER BY g`,
			f.app.ID, f.hook.ID, from, id); err != nil {
			t.Fatalf("queue the job's copies: %v", err)
		}
		if _, err := f.pool.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, app_id, kind, event_at, replay_job_id, body)
			VALUES ($2, $1, 'replay_status', now(), $3, '')`, f.app.ID, f.hook.ID, id); err != nil {
			t.Fatalf("queue the job's status: %v", err)
		}
		return id
	}
	done := job(1)
	run(t, deliverer(t, f.db))
	jobState := func(id int64) string {
		var s string
		_ = f.pool.QueryRow(ctx, `SELECT state FROM webhook_replay_jobs WHERE id = $1 AND finished_at IS NOT NULL`, id).Scan(&s)
		return s
	}
	eventually(t, "the first job finished", func() bool { return jobState(done) != "" })
	if _, err := f.pool.Exec(ctx, `UPDATE webhook_replay_jobs SET state = 'complete' WHERE id = $1`, done); err != nil {
		t.Fatal(err)
	}
	partial := job(101)
	eventually(t, "the second job finished", func() bool { return jobState(partial) != "" })
	if a, b := jobState(done), jobState(partial); a != storage.ReplayComplete || b != storage.ReplayIncomplete {
		t.Errorf("job states %q, %q; want complete, incomplete", a, b)
	}
	if got, want := rc.got(), []string{"1", "2", "3", "status", "101", "103", "status"}; !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	rc.mu.Lock()
	statuses := [][]byte{rc.bodies[3], rc.bodies[6]}
	rc.mu.Unlock()
	for i, want := range []struct {
		job   int64
		state string
	}{{done, "Complete"}, {partial, "Incomplete"}} {
		var got struct {
			Status map[string]string `json:"replay_job_status"`
		}
		if err := json.Unmarshal(statuses[i], &got); err != nil || got.Status["job_state"] != want.state ||
			got.Status["job_id"] != strconv.FormatInt(want.job, 10) || got.Status["webhook_id"] != strconv.FormatInt(f.hook.ID, 10) ||
			got.Status["job_state_description"] == "" {
			t.Errorf("status %d: %s (%v); want %s of job %d", i, statuses[i], err, want.state, want.job)
		}
	}
	var stored []byte
	if err := f.pool.QueryRow(ctx, `SELECT body FROM webhook_deliveries WHERE replay_job_id = $1 AND kind = 'replay_status'`,
		partial).Scan(&stored); err != nil || string(stored) != string(statuses[1]) {
		t.Errorf("stored status body %s (%v), want the bytes sent", stored, err)
	}
	rc.checkSignatures()
}

// TestShutdown: a deliverer stopped while a POST is in flight finishes
// it, records it and releases the webhook's lease; the counters say what
// it sent.
func TestShutdown(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 10)
	rc := newReceiver(t, "", func(*http.Request, []byte) int {
		started <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		return http.StatusOK
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 5)
	reg := prometheus.NewRegistry()
	d := deliverer(t, f.db)
	d.Registerer = reg
	stop := run(t, d)
	<-started
	stop() // returns once the POST in flight is answered and recorded
	if s := f.states(t); s["delivered"] != 1 || s["pending"] != 4 {
		t.Errorf("states after the shutdown %v; want 1 delivered, 4 pending", s)
	}
	var holder *string
	if err := f.pool.QueryRow(t.Context(), `SELECT delivery_holder FROM webhooks WHERE id = $1`, f.hook.ID).Scan(&holder); err != nil || holder != nil {
		t.Errorf("lease holder after the shutdown: %v (%v); want none", holder, err)
	}
	if got := deliveredCount(t, reg); got != 1 {
		t.Errorf("aviary_webhook_deliveries_total{outcome=delivered} = %v, want 1", got)
	}
}

// deliveredCount reads the delivered counter from reg.
func deliveredCount(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "aviary_webhook_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == "delivered" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
