package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// workerPool is the stack's worker processes by pid, two kept up: one
// killed is replaced at once, as an orchestrator would.
type workerPool struct {
	s     *stack
	procs map[int]*exec.Cmd
}

func newWorkerPool(s *stack, n int) *workerPool {
	p := &workerPool{s: s, procs: map[int]*exec.Cmd{}}
	for range n {
		p.start()
	}
	return p
}

func (p *workerPool) start() {
	w := p.s.start("worker", nil)
	p.procs[w.Process.Pid] = w
}

// kill sends SIGKILL to worker pid, reaps it, starts a replacement and
// returns when the kill was sent.
func (p *workerPool) kill(pid int) time.Time {
	p.s.t.Helper()
	w := p.procs[pid]
	if w == nil {
		p.s.t.Fatalf("pid %d is not one of the test's workers", pid)
	}
	if err := w.Process.Signal(syscall.SIGKILL); err != nil {
		p.s.t.Fatalf("kill worker %d: %v", pid, err)
	}
	at := time.Now()
	_ = w.Wait()
	delete(p.procs, pid)
	p.start()
	return at
}

// waitHolder polls query (one row: a lease holder, or none) until it names
// a process other than not, and returns that pid and when it was seen.
// sep separates the holder's parts: sweep.Hold names holders
// host:pid:random, the webhook deliverer host-pid-random.
func (s *stack) waitHolder(query string, arg any, sep string, not int, timeout time.Duration) (int, time.Time) {
	s.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		s.t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var holder string
		err := conn.QueryRow(ctx, query, arg).Scan(&holder)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			s.t.Fatalf("read the lease holder: %v", err)
		}
		parts := strings.Split(holder, sep)
		if len(parts) < 3 {
			s.t.Fatalf("lease holder %q names no process", holder)
		}
		pid, err := strconv.Atoi(parts[len(parts)-2])
		if err != nil {
			s.t.Fatalf("lease holder %q names no process: %v", holder, err)
		}
		if pid != not {
			return pid, time.Now()
		}
	}
	s.t.Fatalf("no worker but %d held the lease within %v", not, timeout)
	return 0, time.Time{}
}

// heldImage serves a product image whose first request hangs until its
// client goes away (the worker checking it is killed); later requests get
// the image at once.
type heldImage struct {
	srv      *httptest.Server
	arrived  chan struct{}
	once     sync.Once
	requests atomic.Int32
	served   atomic.Int32
	again    chan time.Time // when the first request after the held one came
}

func newHeldImage(t *testing.T) *heldImage {
	h := &heldImage{arrived: make(chan struct{}), again: make(chan time.Time, 1)}
	png := catalogImageServer(t, "http://127.0.0.1:1/")
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		first := false
		h.once.Do(func() { first = true; close(h.arrived) })
		if first {
			<-r.Context().Done()
			return
		}
		select {
		case h.again <- time.Now():
		default:
		}
		resp, err := http.Get(png.URL + "/ok.png")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "image/png")
		_, _ = io.Copy(w, resp.Body)
		h.served.Add(1)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// TestKilledImageCheckRescued: catalogs:check_images now holds a task
// lease (issue 32). A worker killed with SIGKILL while it fetches a
// product's image (the image server holds that request) stops renewing
// the lease; the rescue sweeper enqueues a copy of the task within
// seconds of the lapse and the other worker checks the image: the
// product ends ACCEPTED, checked once. It logs kill -> pickup (the
// rescue's fetch of the image; the check itself takes milliseconds, too
// short to see its lease) and kill -> checked.
func TestKilledImageCheckRescued(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a worker mid-check (about half a minute)")
	}
	img := newHeldImage(t)
	addr := strings.TrimPrefix(img.srv.URL, "http://")
	s := newStack(t, stackOptions{driver: "local", workers: 0,
		env: []string{"AVIARY_FETCH_ALLOWLIST=" + addr, clientTestTimeout, "AVIARY_RECONCILE_INTERVAL=2s"}})
	pool := newWorkerPool(s, 2)

	created := s.catalogCall(http.MethodPost, "/12/product_catalogs?"+url.Values{"name": {"rescue"}, "user_id": {s.creds.UserID}}.Encode(), nil)
	catalog, _ := created.Body["data"].(map[string]any)
	if created.Status != http.StatusOK || catalog == nil {
		t.Fatalf("create catalog: %d %s", created.Status, created.Raw)
	}
	id := catalog["id"].(string)
	put := s.catalogCall(http.MethodPut, "/12/product_catalogs/"+id+"/products",
		map[string]any{"products": []any{catalogProduct("held", img.srv.URL+"/held.png")}})
	if put.Status != http.StatusOK {
		t.Fatalf("PUT products: %d %s", put.Status, put.Raw)
	}
	select {
	case <-img.arrived:
	case <-time.After(90 * time.Second):
		t.Fatal("no image check reached the image server")
	}
	const leaseQuery = `SELECT holder FROM task_leases WHERE task_id LIKE $1 AND expires_at > clock_timestamp()`
	pid, _ := s.waitHolder(leaseQuery, "catalog-images-%", ":", 0, 30*time.Second)
	killed := pool.kill(pid)
	var pickup time.Duration
	select {
	case at := <-img.again:
		pickup = at.Sub(killed)
	case <-time.After(rescueBound + 30*time.Second):
		t.Fatalf("the image was not fetched again within %v of the kill", rescueBound+30*time.Second)
	}
	products := s.awaitChecks(id, "")
	checked := time.Since(killed)
	t.Logf("image check: worker %d killed mid-fetch; the rescue fetched the image %v later; product checked %v after the kill",
		pid, pickup.Round(10*time.Millisecond), checked.Round(10*time.Millisecond))
	p := products["held"]
	if p == nil || p["review_status"] != "ACCEPTED" || len(issueRules(p, "errors")) != 0 {
		t.Fatalf("product after the rescue: %v; want ACCEPTED without errors", p)
	}
	if n := img.served.Load(); n != 1 {
		t.Errorf("the image was served %d times after the kill; want once (the rescue's check)", n)
	}
}

// holdingReceiver is a webhook receiver whose first POST hangs until its
// sender goes away (the deliverer is killed); the others are answered at
// once. It keeps the 2xx answers' event ids in order and counts requests
// in flight at once.
type holdingReceiver struct {
	secret   string
	srv      *httptest.Server
	arrived  chan struct{}
	once     sync.Once
	mu       sync.Mutex
	accepted []string
	arrivals map[string][]time.Time // per event id, every POST of it
	badSigs  int
	inFlight atomic.Int32
	overlap  atomic.Int32
}

func newHoldingReceiver(t *testing.T, secret string) *holdingReceiver {
	h := &holdingReceiver{secret: secret, arrived: make(chan struct{}), arrivals: map[string][]time.Time{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *holdingReceiver) sign(b []byte) string {
	mac := hmac.New(sha256.New, []byte(h.secret))
	mac.Write(b)
	return "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (h *holdingReceiver) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet { // a CRC check
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"response_token": h.sign([]byte(r.URL.Query().Get("crc_token")))})
		return
	}
	if h.inFlight.Add(1) > 1 {
		h.overlap.Add(1)
	}
	defer h.inFlight.Add(-1)
	body, _ := io.ReadAll(r.Body)
	id := r.Header.Get("x-aviary-event-id")
	h.mu.Lock()
	h.arrivals[id] = append(h.arrivals[id], time.Now())
	if r.Header.Get("x-twitter-webhooks-signature") != h.sign(body) {
		h.badSigs++
	}
	h.mu.Unlock()
	first := false
	h.once.Do(func() { first = true; close(h.arrived) })
	if first {
		<-r.Context().Done() // held until the deliverer dies
		return
	}
	// Later POSTs take a little while, as real receivers do: the
	// rescuer's drain holds the lease long enough for the test to see
	// who holds it (a drain of instant answers released it between two
	// looks, and the test saw no holder at all).
	time.Sleep(100 * time.Millisecond)
	h.mu.Lock()
	h.accepted = append(h.accepted, id)
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (h *holdingReceiver) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.accepted)
}

// TestKilledDelivererRescued: a worker killed with SIGKILL in the middle
// of a webhook POST (the receiver holds it) stops renewing the webhook's
// delivery lease (15 s, renewed every 3 s); another worker's deliverer
// claims the webhook at its next poll after the lapse and sends the queue
// from the delivery in flight: every event is delivered once (answered
// 2xx once), in order, never two POSTs at once. It logs kill -> the other
// worker's claim and kill -> the in-flight delivery sent again.
func TestKilledDelivererRescued(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a worker mid-delivery (about half a minute)")
	}
	s := newStack(t, stackOptions{driver: "local", workers: 0, env: webhookEnv})
	ctx := context.Background()
	app := factory.App(t, s.db, nil)
	recv := newHoldingReceiver(t, app.ConsumerSecret)
	hook, err := s.db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: recv.srv.URL + "/webhook", CheckedAt: time.Now()})
	if err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	pool := newWorkerPool(s, 2)
	const events = 20
	ds := make([]storage.NewDelivery, events)
	want := make([]string, events)
	for i := range ds {
		seq := int64(i + 1)
		want[i] = strconv.FormatInt(seq, 10)
		ds[i] = storage.NewDelivery{WebhookID: hook.ID, AppID: app.ID, EventSeq: seq, EventAt: time.Now(),
			Body: fmt.Appendf(nil, `{"data":{"id":"%d","text":"post %d"}}`, seq, seq)}
	}
	if _, err := s.db.AddWebhookDeliveries(ctx, ds); err != nil {
		t.Fatalf("queue deliveries: %v", err)
	}
	select {
	case <-recv.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("no delivery reached the receiver")
	}
	const holderQuery = `SELECT delivery_holder FROM webhooks WHERE id = $1 AND delivery_held_until > clock_timestamp()`
	pid, _ := s.waitHolder(holderQuery, hook.ID, "-", 0, 10*time.Second)
	killed := pool.kill(pid)
	next, claimed := s.waitHolder(holderQuery, hook.ID, "-", pid, rescueBound+30*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for len(recv.got()) < events && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	done := time.Since(killed)
	got := recv.got()
	if !slices.Equal(got, want) {
		t.Fatalf("answered 2xx %v; want 1..%d once each, in order", got, events)
	}
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var delivered, attempts int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'delivered'), coalesce(sum(attempts), 0)
		FROM webhook_deliveries WHERE webhook_id = $1`, hook.ID).Scan(&delivered, &attempts); err != nil {
		t.Fatal(err)
	}
	if delivered != events {
		t.Errorf("%d deliveries delivered, want %d", delivered, events)
	}
	// The killed POST recorded nothing: each delivery counts the one
	// attempt that was answered.
	if attempts != events {
		t.Errorf("%d attempts recorded, want %d", attempts, events)
	}
	if n := recv.overlap.Load(); n != 0 {
		t.Errorf("%d POSTs overlapped another: two deliverers sent the webhook at once", n)
	}
	recv.mu.Lock()
	badSigs, first := recv.badSigs, slices.Clone(recv.arrivals["1"])
	recv.mu.Unlock()
	if badSigs != 0 {
		t.Errorf("%d POSTs with a wrong signature", badSigs)
	}
	// Event 1 was in flight at the kill: its second POST is the pickup.
	if len(first) != 2 {
		t.Fatalf("event 1 was POSTed %d times; want twice (the killed POST, then the pickup's)", len(first))
	}
	t.Logf("webhook delivery: worker %d killed mid-POST; worker %d claimed the webhook %v later, sent the POST in flight again %v after the kill; all %d events delivered %v after the kill",
		pid, next, claimed.Sub(killed).Round(10*time.Millisecond), first[1].Sub(killed).Round(10*time.Millisecond),
		events, done.Round(10*time.Millisecond))
}
