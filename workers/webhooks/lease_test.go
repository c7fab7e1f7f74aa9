package webhooks_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/workers/webhooks"
)

// attempts is each delivery's attempts count of f's webhook, in id order.
func (f *fixture) attempts(t *testing.T) []int {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), `SELECT attempts FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`, f.hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestSlowPostKeepsLease: a POST that takes longer than the delivery
// lease does not lose it, since the lease is renewed by a heartbeat of its
// own while the POST is in flight: with a second deliverer polling all
// along, every event reaches the receiver once, in order, one request at a
// time, with one attempt each. (A lease of seconds, not milliseconds: on a
// loaded machine a renewal may take a few hundred.)
func TestSlowPostKeepsLease(t *testing.T) {
	t.Parallel()
	const hold = 6 * time.Second
	rc := newReceiver(t, "", func(r *http.Request, _ []byte) int {
		select {
		case <-time.After(hold):
			return http.StatusOK
		case <-r.Context().Done(): // aborted by its sender: not received
			return http.StatusServiceUnavailable
		}
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 2)
	for range 2 {
		d := deliverer(t, f.db)
		d.Client = webhooks.NewDeliveryClient(loopback(t), 3*hold)
		d.Lease = 4 * time.Second // renewed every 800 ms
		run(t, d)
	}
	eventually(t, "2 delivered", func() bool { return f.states(t)["delivered"] == 2 })
	if got := rc.got(); !slices.Equal(got, seqs(1, 2)) {
		t.Errorf("received %v, want 1..2 once each", got)
	}
	if n := rc.overlap.Load(); n != 0 {
		t.Errorf("%d requests overlapped another: the lease lapsed under a slow POST", n)
	}
	if a := f.attempts(t); !slices.Equal(a, []int{1, 1}) {
		t.Errorf("attempts %v, want one each", a)
	}
	rc.checkSignatures()
}

// TestLeaseLapseAbortsPost: a deliverer whose renewals fail (the database
// away) while its POST hangs aborts that POST two heartbeats before its
// lease can lapse, without counting an attempt, so when another deliverer
// claims the webhook nothing of the first is in flight: the receiver
// never sees two requests at once, and every event is delivered once.
func TestLeaseLapseAbortsPost(t *testing.T) {
	t.Parallel()
	var first sync.Once
	hung := make(chan struct{})
	var abortedAt atomic.Int64
	rc := newReceiver(t, "", func(r *http.Request, _ []byte) int {
		isFirst := false
		first.Do(func() { isFirst = true; close(hung) })
		if !isFirst {
			return http.StatusOK
		}
		select { // the first request hangs until its sender gives up
		case <-r.Context().Done():
			abortedAt.Store(time.Now().UnixNano())
			return http.StatusServiceUnavailable
		case <-time.After(30 * time.Second):
			return http.StatusOK
		}
	})
	f := newFixture(t, rc.srv.URL+"/hook")
	rc.secret = f.app.ConsumerSecret
	f.queue(t, 1, 3)
	store := &deadStore{DB: f.db}
	a := deliverer(t, f.db)
	a.Store, a.Lease = store, 2*time.Second // renewed every 400 ms
	a.Client = webhooks.NewDeliveryClient(loopback(t), time.Minute)
	run(t, a)
	<-hung
	dead := time.Now()
	store.dead.Store(true)
	b := deliverer(t, f.db)
	b.Lease = 2 * time.Second
	run(t, b)
	eventually(t, "3 delivered", func() bool { return f.states(t)["delivered"] == 3 })
	if got := rc.got(); !slices.Equal(got, seqs(1, 3)) {
		t.Errorf("received %v, want 1..3 once each", got)
	}
	if n := rc.overlap.Load(); n != 0 {
		t.Errorf("%d requests overlapped another", n)
	}
	if a := f.attempts(t); !slices.Equal(a, []int{1, 1, 1}) {
		t.Errorf("attempts %v, want one each (the aborted POST counts none)", a)
	}
	if at := abortedAt.Load(); at == 0 {
		t.Error("the hung POST was not aborted")
	} else {
		t.Logf("database away -> hung POST aborted: %v (lease 2 s, heartbeat 400 ms)", time.Unix(0, at).Sub(dead).Round(time.Millisecond))
	}
	rc.checkSignatures()
}

// TestDeliveryHeartbeatDefaults: the default lease is 15 s renewed every
// 3 s, and a short lease is renewed at least five times per lease.
func TestDeliveryHeartbeatDefaults(t *testing.T) {
	if webhooks.DefaultDeliveryLease != 15*time.Second || webhooks.DefaultDeliveryHeartbeat != 3*time.Second {
		t.Errorf("lease %v heartbeat %v", webhooks.DefaultDeliveryLease, webhooks.DefaultDeliveryHeartbeat)
	}
	d := &webhooks.Deliverer{Lease: time.Second, Heartbeat: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = d.Run(ctx)
	if d.Heartbeat != 200*time.Millisecond {
		t.Errorf("heartbeat %v for a 1 s lease, want 200ms", d.Heartbeat)
	}
}
