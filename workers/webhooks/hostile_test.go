package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// TestLargeAnswerDelivered: a receiver that answers 200 with a body larger
// than the answer cap (announced in Content-Length) got the delivery: it is
// delivered, not retried as unreachable (which re-sent it and turned the
// webhook failing).
func TestLargeAnswerDelivered(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 64<<10)
	rc := newReceiver(t, "", nil)
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	inner := rc.srv.Config.Handler
	rc.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "65536")
		inner.ServeHTTP(w, r)
		_, _ = w.Write([]byte(big))
	})
	f.queue(t, 1, 3)
	run(t, deliverer(t, f.db))
	eventually(t, "3 deliveries recorded", func() bool {
		s := f.states(t)
		return s["delivered"]+s["dead/unreachable"] == 3 || s["dead/unreachable"] > 0
	})
	if s := f.states(t); s["delivered"] != 3 {
		t.Errorf("states %v; want 3 delivered", s)
	}
	if got := rc.got(); !slices.Equal(got, seqs(1, 3)) {
		t.Errorf("received %v, want 1..3 once each", got)
	}
}

// TestDeletedWhileDraining: once DELETE /2/webhooks/{id} has answered, the
// webhook receives at most what the drain had read (two batches: the one
// being sent and the one read ahead), not everything until the lease's
// next renewal (every 3 s by default).
func TestDeletedWhileDraining(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", func(*http.Request, []byte) int {
		time.Sleep(5 * time.Millisecond)
		return http.StatusOK
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 2000)
	d := deliverer(t, f.db)
	d.Lease = 30 * time.Second // a long lease: renewed every 3 s, long before it lapses
	run(t, d)
	eventually(t, "the drain under way", func() bool { return len(rc.got()) >= 10 })
	if err := f.db.DeleteWebhook(t.Context(), f.app.ID, f.hook.ID); err != nil {
		t.Fatal(err)
	}
	at := len(rc.got())
	time.Sleep(2 * time.Second)
	if after := len(rc.got()) - at; after > 2*d.Batch {
		t.Errorf("%d deliveries reached the webhook after its deletion", after)
	}
}

// TestBackoffBounded: with many attempts configured the doubling wait
// neither overflows (a negative wait: retries at once, hammering the
// receiver) nor grows past MaxRetryBackoff (or the first wait, when that
// is longer).
func TestBackoffBounded(t *testing.T) {
	t.Parallel()
	var tries atomic.Int32
	rc := newReceiver(t, "", func(*http.Request, []byte) int {
		tries.Add(1)
		return http.StatusServiceUnavailable
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 1)
	d := deliverer(t, f.db)
	d.Attempts, d.Backoff = 100, 20*time.Minute
	run(t, d)
	ctx := t.Context()
	for attempt := 1; attempt <= 40; attempt++ {
		eventually(t, fmt.Sprintf("attempt %d recorded", attempt), func() bool {
			var n int
			_ = f.pool.QueryRow(ctx, `SELECT attempts FROM webhook_deliveries WHERE webhook_id = $1`, f.hook.ID).Scan(&n)
			return n >= attempt
		})
		var wait time.Duration
		if err := f.pool.QueryRow(ctx, `SELECT extract(epoch FROM next_attempt_at - now())::float8 * interval '1 second' FROM webhook_deliveries
			WHERE webhook_id = $1`, f.hook.ID).Scan(&wait); err != nil {
			t.Fatal(err)
		}
		if wait < 19*time.Minute || wait > webhooks.MaxRetryBackoff+time.Minute {
			t.Fatalf("after attempt %d the next waits %v; want between the first wait and %v", attempt, wait, webhooks.MaxRetryBackoff)
		}
		// Due now: the next attempt goes.
		if _, err := f.pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = $1`, f.hook.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeliverySSRF: without the allow-list, deliveries to URLs that reach
// loopback (a name resolving to it, IPv4 and IPv6 forms) or that answer
// with a redirect to a local receiver reach nothing but the first hop.
func TestDeliverySSRF(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(local.Close)
	_, port, _ := net.SplitHostPort(local.Listener.Addr().String())
	ln6, err := net.Listen("tcp", "[::1]:0")
	var local6 *httptest.Server
	if err == nil {
		local6 = &httptest.Server{Listener: ln6, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })}}
		local6.Start()
		t.Cleanup(local6.Close)
	}
	urls := []string{"http://localhost:" + port + "/hook", "http://127.0.0.1:" + port + "/hook", "http://[::ffff:127.0.0.1]:" + port + "/hook",
		"http://127.1:" + port + "/hook"}
	if local6 != nil {
		_, p6, _ := net.SplitHostPort(ln6.Addr().String())
		urls = append(urls, "http://[::1]:"+p6+"/hook", "http://[0:0:0:0:0:0:0:1]:"+p6+"/hook")
	}
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			f := newFixture(t, u)
			f.queue(t, 1, 1)
			d := deliverer(t, f.db)
			d.Client = webhooks.NewDeliveryClient(nil, time.Second)
			run(t, d)
			eventually(t, "an attempt", func() bool {
				var n int
				_ = f.pool.QueryRow(t.Context(), `SELECT attempts FROM webhook_deliveries WHERE webhook_id = $1`, f.hook.ID).Scan(&n)
				return n >= 1
			})
			var status int
			var msg string
			if err := f.pool.QueryRow(t.Context(), `SELECT last_status, last_error FROM webhook_deliveries WHERE webhook_id = $1`,
				f.hook.ID).Scan(&status, &msg); err != nil || status != 0 || msg == "" {
				t.Errorf("status %d, error %q (%v); want no answer and an error", status, msg, err)
			}
		})
	}
	// A redirect to the local server is not followed (the allow-listed
	// first hop answers 307).
	redirect := newReceiver(t, "", nil)
	redirect.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, local.URL+"/internal", http.StatusTemporaryRedirect)
	})
	f := newFixture(t, redirect.srv.URL+"/hook")
	f.queue(t, 1, 1)
	d := deliverer(t, f.db)
	allow, _ := outbound.ParseAllowList(redirect.srv.Listener.Addr().String())
	d.Client = webhooks.NewDeliveryClient(allow, time.Second)
	run(t, d)
	eventually(t, "the redirect parked", func() bool { return f.states(t)["dead/rejected"] == 1 })
	if n := hits.Load(); n != 0 {
		t.Errorf("the local server was reached %d times", n)
	}
}

// TestReplayWhileFailing: a replay run while the webhook is failing waits
// behind its queue; once the receiver answers, the live deliveries go,
// then the copies, then a Complete status, and the job ends complete.
func TestReplayWhileFailing(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	rc := newReceiver(t, "", func(*http.Request, []byte) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	ctx := t.Context()
	f.queue(t, 1, 3)
	d := deliverer(t, f.db)
	d.Attempts = 2
	run(t, d)
	eventually(t, "the webhook failing", func() bool { return f.states(t)["dead/unreachable"] == 1 })
	from := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	job, err := f.db.CreateWebhookReplay(ctx, storage.NewWebhookReplay{AppID: f.app.ID, WebhookID: f.hook.ID, From: from,
		To: from.Add(3 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ran, err := f.db.RunWebhookReplay(ctx, job.ID); err != nil || !ran {
		t.Fatalf("run the replay: %v, %v", ran, err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := rc.got(); len(got) != 0 {
		t.Fatalf("a failing webhook received %v", got)
	}
	up.Store(true)
	eventually(t, "the job finished", func() bool {
		j, err := f.db.WebhookReplay(ctx, job.ID)
		return err == nil && j.FinishedAt != nil
	})
	if got, want := rc.got(), []string{"1", "2", "3", "1", "2", "3", "status"}; !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if j, _ := f.db.WebhookReplay(ctx, job.ID); j.State != storage.ReplayComplete || j.Events != 3 {
		t.Errorf("job %+v; want complete with 3 events", j)
	}
	rc.mu.Lock()
	last := string(rc.bodies[len(rc.bodies)-1])
	rc.mu.Unlock()
	if !strings.Contains(last, `"job_state":"Complete"`) {
		t.Errorf("status %s", last)
	}
	rc.checkSignatures()
}

// deadStore is a worker cut off from its database mid-drain: once dead,
// each of its database calls fails after a moment, but the POSTs it had
// started still go.
type deadStore struct {
	*postgres.DB
	dead atomic.Bool
}

func (s *deadStore) block(ctx context.Context) error {
	sleep := time.NewTimer(50 * time.Millisecond)
	defer sleep.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-sleep.C:
		return errors.New("the database is gone")
	}
}

func (s *deadStore) RecordDeliveryBatch(ctx context.Context, b storage.DeliveryBatch) error {
	if s.dead.Load() {
		return s.block(ctx)
	}
	return s.DB.RecordDeliveryBatch(ctx, b)
}

func (s *deadStore) RenewDeliveryLease(ctx context.Context, id int64, holder string, ttl time.Duration, since time.Time) (bool, error) {
	if s.dead.Load() {
		return false, s.block(ctx)
	}
	return s.DB.RenewDeliveryLease(ctx, id, holder, ttl, since)
}

func (s *deadStore) PendingDeliveries(ctx context.Context, id, after int64, limit int) ([]storage.WebhookDelivery, error) {
	if s.dead.Load() {
		return nil, s.block(ctx)
	}
	return s.DB.PendingDeliveries(ctx, id, after, limit)
}

func (s *deadStore) ClaimWebhookDeliveries(ctx context.Context, q storage.DeliveryClaimQuery) ([]storage.DeliveryClaim, error) {
	if s.dead.Load() {
		return nil, s.block(ctx)
	}
	return s.DB.ClaimWebhookDeliveries(ctx, q)
}

func (s *deadStore) ReleaseDeliveryLease(ctx context.Context, id int64, holder string) error {
	if s.dead.Load() {
		return s.block(ctx)
	}
	return s.DB.ReleaseDeliveryLease(ctx, id, holder)
}

// TestWorkerDiesMidDrain: a worker cut off from the database while
// draining loses nothing: another worker takes the webhook once
// the lease lapses and sends what was not recorded again; the first time
// each event reaches the receiver is in order, and the two workers never
// send at the same time.
func TestWorkerDiesMidDrain(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", func(*http.Request, []byte) int {
		time.Sleep(2 * time.Millisecond)
		return http.StatusOK
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 300)
	store := &deadStore{DB: f.db}
	a := deliverer(t, f.db)
	a.Store, a.Lease = store, 1500*time.Millisecond
	run(t, a)
	eventually(t, "the drain under way", func() bool { return len(rc.got()) >= 50 })
	store.dead.Store(true)
	b := deliverer(t, f.db)
	b.Lease = 1500 * time.Millisecond
	run(t, b)
	eventually(t, "300 delivered", func() bool { return f.states(t)["delivered"] == 300 })
	got := rc.got()
	var first []string
	seen := map[string]bool{}
	for _, id := range got {
		if !seen[id] {
			seen[id] = true
			first = append(first, id)
		}
	}
	if !slices.Equal(first, seqs(1, 300)) {
		t.Errorf("first receipts %v; want 1..300 in order", first)
	}
	if n := rc.overlap.Load(); n != 0 {
		t.Errorf("%d requests overlapped another", n)
	}
	t.Logf("%d receipts for 300 events", len(got))
	rc.checkSignatures()
}

// hangStore is a database that stops answering reads of the queue
// (a network partition without a reset): the call returns only when its
// context ends.
type hangStore struct {
	*postgres.DB
	hung chan struct{}
	once sync.Once
}

func (s *hangStore) PendingDeliveries(ctx context.Context, id, after int64, limit int) ([]storage.WebhookDelivery, error) {
	s.once.Do(func() { close(s.hung) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestHungReadStops: a queue read the database never answers does not
// hold the drain (and the worker's shutdown) for ever: it times out like
// the lease's renewal.
func TestHungReadStops(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 3)
	store := &hangStore{DB: f.db, hung: make(chan struct{})}
	d := deliverer(t, f.db)
	d.Store = store
	stop := run(t, d)
	<-store.hung
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the deliverer did not stop within 10 s of its shutdown: a hung queue read holds it")
	}
}
