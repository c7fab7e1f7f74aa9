package webhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage"
)

// Delivery defaults (the settings of docs/webhooks.md, "Deliveries").
const (
	DefaultDeliveryAttempts = 5                // AVIARY_WEBHOOK_DELIVERY_ATTEMPTS
	DefaultRetryBackoff     = 10 * time.Second // AVIARY_WEBHOOK_RETRY_BACKOFF (doubling)
	DefaultProbeInterval    = time.Minute      // AVIARY_WEBHOOK_PROBE_INTERVAL
	DefaultDeliveryTimeout  = 10 * time.Second // AVIARY_WEBHOOK_DELIVERY_TIMEOUT
	DefaultDeliverers       = 16               // AVIARY_WEBHOOK_DELIVERERS
	DefaultDeliveryPoll     = time.Second
	// DefaultDeliveryLease is how long a webhook stays claimed after its
	// last renewal: a killed deliverer's webhooks are claimed by another
	// at most this long after the kill (plus a poll). The renewals come
	// every DefaultDeliveryHeartbeat from a goroutine of their own,
	// whatever the POST in flight is doing, so a slow receiver (a POST
	// may take AVIARY_WEBHOOK_DELIVERY_TIMEOUT, 10 s) never costs the
	// lease; a drain whose renewals fail stops, aborting its POST, two
	// heartbeats before the lease can lapse (docs/webhooks.md).
	DefaultDeliveryLease     = 15 * time.Second
	DefaultDeliveryHeartbeat = 3 * time.Second
	DefaultDeliveryBatch     = 500
	// maxAnswer is the most of a receiver's answer that is read.
	maxAnswer = 16 << 10
	// maxRecord is the most outcomes recorded in one transaction.
	maxRecord = 500
	// statsEvery is how often a deliverer counts the queues (the gauges).
	statsEvery = 15 * time.Second
)

// Delivery headers besides Content-Type.
const (
	HeaderSignature = "x-twitter-webhooks-signature"
	HeaderEventID   = "x-aviary-event-id"
	HeaderDelivery  = "x-aviary-delivery-id"
	HeaderAttempt   = "x-aviary-delivery-attempt"
)

// NewDeliveryClient is the guarded client deliveries go through: the
// allow-list, no redirect followed, timeout per request. The answer's size
// is not the client's to refuse (a 2xx with a long body was received: the
// guard would fail it on its Content-Length alone); send reads at most
// maxAnswer of it.
func NewDeliveryClient(allow outbound.AllowList, timeout time.Duration) *outbound.Client {
	if timeout <= 0 {
		timeout = DefaultDeliveryTimeout
	}
	return outbound.New(outbound.Config{Allow: allow, NoRedirects: true, Timeout: timeout, MaxBytes: math.MaxInt64})
}

// DeliveryStore is the deliverer's record access (storage/postgres.DB).
type DeliveryStore interface {
	ClaimWebhookDeliveries(ctx context.Context, q storage.DeliveryClaimQuery) ([]storage.DeliveryClaim, error)
	RenewDeliveryLease(ctx context.Context, id int64, holder string, ttl time.Duration, validSince time.Time) (bool, error)
	ReleaseDeliveryLease(ctx context.Context, id int64, holder string) error
	PendingDeliveries(ctx context.Context, id, afterID int64, limit int) ([]storage.WebhookDelivery, error)
	ProbeDelivery(ctx context.Context, id int64) (storage.WebhookDelivery, bool, error)
	RecordDeliveryBatch(ctx context.Context, b storage.DeliveryBatch) error
	ReplayJobComplete(ctx context.Context, id int64) (bool, error)
	WebhookDeliveryStats(ctx context.Context) (storage.DeliveryStats, error)
}

// DeliveryListener wakes a deliverer when deliveries are recorded
// (storage/postgres.DB: LISTEN aviary_webhook_deliveries).
type DeliveryListener interface {
	ListenWebhookDeliveries(ctx context.Context) (wait func(ctx context.Context) error, close func(), err error)
}

// Deliverer sends webhooks' queued deliveries (docs/webhooks.md,
// "Deliveries"). Every worker runs one; any number of replicas share the
// work through the webhooks' delivery leases: a webhook is sent by one
// replica at a time, in id order (head of line), Concurrency webhooks at
// once per replica.
type Deliverer struct {
	Store  DeliveryStore
	Listen DeliveryListener // nil: poll only
	// Client sends the deliveries: NewDeliveryClient (no redirects).
	Client     domain.Doer
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: a private registry
	Clock      func() time.Time

	Holder        string        // lease holder id (random)
	Concurrency   int           // webhooks sent at once (DefaultDeliverers)
	Attempts      int           // attempts before a delivery dies (DefaultDeliveryAttempts)
	Backoff       time.Duration // first retry wait, doubling (DefaultRetryBackoff)
	ProbeInterval time.Duration // between probes of a failing webhook (DefaultProbeInterval)
	Timeout       time.Duration // per POST (DefaultDeliveryTimeout)
	Poll          time.Duration // (DefaultDeliveryPoll)
	Lease         time.Duration // delivery lease (DefaultDeliveryLease)
	// Heartbeat is how often a drain renews its lease: DefaultDeliveryHeartbeat,
	// at most a fifth of Lease.
	Heartbeat time.Duration
	Batch     int // pending rows read at a time (DefaultDeliveryBatch)

	metrics *deliveryMetrics
	wake    chan struct{}
	once    sync.Once
}

func (d *Deliverer) defaults() {
	d.once.Do(func() {
		if d.Logger == nil {
			d.Logger = slog.New(slog.DiscardHandler)
		}
		d.Logger = d.Logger.With("component", "webhook-deliverer")
		if d.Clock == nil {
			d.Clock = time.Now
		}
		if d.Holder == "" {
			host, _ := os.Hostname()
			b := make([]byte, 4)
			_, _ = rand.Read(b)
			d.Holder = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
		}
		d.Concurrency = or(d.Concurrency, DefaultDeliverers)
		d.Attempts = or(d.Attempts, DefaultDeliveryAttempts)
		d.Backoff = or(d.Backoff, DefaultRetryBackoff)
		d.ProbeInterval = or(d.ProbeInterval, DefaultProbeInterval)
		d.Timeout = or(d.Timeout, DefaultDeliveryTimeout)
		d.Poll = or(d.Poll, DefaultDeliveryPoll)
		d.Lease = or(d.Lease, DefaultDeliveryLease)
		if d.Heartbeat <= 0 || d.Heartbeat > d.Lease/5 {
			d.Heartbeat = min(DefaultDeliveryHeartbeat, d.Lease/5)
		}
		d.Batch = or(d.Batch, DefaultDeliveryBatch)
		if d.Registerer == nil {
			d.Registerer = prometheus.NewRegistry()
		}
		d.metrics = newDeliveryMetrics(d.Registerer)
		d.wake = make(chan struct{}, 1)
	})
}

func or[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Run delivers until ctx ends; then each webhook being sent finishes its
// current POST, records what was sent and releases its lease. It returns
// nil when ctx ended.
func (d *Deliverer) Run(ctx context.Context) error {
	d.defaults()
	d.Logger.Info("webhook deliverer started", "holder", d.Holder, "concurrency", d.Concurrency)
	var wg sync.WaitGroup
	if d.Listen != nil {
		wg.Go(func() { d.listen(ctx) })
	}
	var mu sync.Mutex
	active := map[int64]bool{}
	var statsAt time.Time
	for ctx.Err() == nil {
		mu.Lock()
		free := d.Concurrency - len(active)
		mu.Unlock()
		if free > 0 {
			claims, err := d.Store.ClaimWebhookDeliveries(ctx, storage.DeliveryClaimQuery{Holder: d.Holder, TTL: d.Lease,
				ValidSince: d.Clock().Add(-domain.MaxWithoutPass), Limit: free})
			if err != nil && ctx.Err() == nil {
				d.Logger.Warn("claim webhooks to deliver", "err", err)
			}
			for _, c := range claims {
				mu.Lock()
				busy := active[c.ID]
				active[c.ID] = true
				mu.Unlock()
				if busy {
					continue // its lease lapsed and came back to us while it drains
				}
				d.metrics.draining.Inc()
				wg.Go(func() {
					d.Deliver(ctx, c)
					mu.Lock()
					delete(active, c.ID)
					mu.Unlock()
					d.metrics.draining.Dec()
					d.poke()
				})
			}
		}
		if time.Since(statsAt) >= statsEvery {
			statsAt = time.Now()
			if s, err := d.Store.WebhookDeliveryStats(ctx); err == nil {
				d.metrics.pending.Set(float64(s.Pending))
				d.metrics.failing.Set(float64(s.Failing))
			}
		}
		t := time.NewTimer(d.Poll)
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-t.C:
		}
		t.Stop()
	}
	wg.Wait()
	d.Logger.Info("webhook deliverer stopped")
	return nil
}

func (d *Deliverer) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// listen turns notifications into wake-ups, listening again after a
// backoff whenever the connection fails.
func (d *Deliverer) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		wait, closeConn, err := d.Listen.ListenWebhookDeliveries(ctx)
		if err != nil {
			if ctx.Err() == nil {
				d.Logger.Warn("listen for deliveries; polling meanwhile", "retry_in", backoff, "err", err)
			}
			sleep(ctx, backoff)
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		d.poke()
		for wait(ctx) == nil {
			d.poke()
		}
		closeConn()
	}
}

func sleep(ctx context.Context, dt time.Duration) {
	t := time.NewTimer(dt)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// drain is one claimed webhook being sent.
type drain struct {
	d     *Deliverer
	c     storage.DeliveryClaim
	log   *slog.Logger
	ctx   context.Context // ends with the deliverer: stop after the current POST
	lost  atomic.Bool     // the lease was lost (or the webhook deleted or invalid)
	rec   *recorder
	sends context.Context // outlives ctx: the current POST finishes, its outcome is recorded
	// posts is the context of the POSTs: sends, but cancelled (errLeaseLost)
	// when the lease is lost or about to lapse, so no POST of this drain is
	// in flight when another deliverer may claim the webhook.
	posts     context.Context
	stopPosts context.CancelCauseFunc
}

// errLeaseLost cancels a drain's POST in flight: its lease was lost, or
// its renewals failed until it was two heartbeats from lapsing.
var errLeaseLost = errors.New("delivery lease lost")

// Deliver sends claimed webhook c's due deliveries (a probe when it is
// failing), records the outcomes and releases the lease. Run calls it
// for each claim.
func (d *Deliverer) Deliver(ctx context.Context, c storage.DeliveryClaim) {
	d.defaults()
	w := &drain{d: d, c: c, ctx: ctx, sends: context.WithoutCancel(ctx),
		log: d.Logger.With("webhook_id", c.ID, "app_id", c.AppID)}
	w.posts, w.stopPosts = context.WithCancelCause(w.sends)
	defer w.stopPosts(nil)
	defer func() {
		release, cancel := context.WithTimeout(w.sends, 5*time.Second)
		defer cancel()
		if err := d.Store.ReleaseDeliveryLease(release, c.ID, d.Holder); err != nil {
			w.log.Warn("release delivery lease", "err", err)
		}
	}()
	if !domain.EffectiveValid(c.Webhook, d.Clock()) {
		return
	}
	stopLease := w.keepLease()
	defer stopLease()
	if c.Probe() {
		if !w.probe() {
			return
		}
	}
	w.rec = newRecorder(w)
	w.queue()
	w.rec.close()
}

// keepLease renews the lease every heartbeat until stopped, from a
// goroutine of its own (the POST in flight does not delay it), each
// renewal bounded by a heartbeat. A renewal refused (lost, deleted,
// invalid) stops the drain; so does a lease two heartbeats from lapsing
// because its renewals failed (the database away): a renewal may take a
// whole heartbeat and the next check come a heartbeat after it, so two
// heartbeats out the drain stops before the lapse, never after. Either
// way the POST in flight is aborted (its delivery stays pending, without
// an attempt counted, and goes again: at least once), so two deliverers
// never send a webhook at once.
func (w *drain) keepLease() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	beat := w.d.Heartbeat
	expires := time.Now().Add(w.d.Lease) // (the claim, a moment ago)
	lose := func(msg string) {
		w.log.Warn(msg)
		w.lost.Store(true)
		w.stopPosts(errLeaseLost)
	}
	wg.Go(func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if time.Until(expires) <= 2*beat {
				lose("delivery lease not renewed in time; stopping before it lapses")
				return
			}
			start := time.Now()
			ctx, cancel := context.WithTimeout(w.sends, beat)
			ok, err := w.d.Store.RenewDeliveryLease(ctx, w.c.ID, w.d.Holder, w.d.Lease, w.d.Clock().Add(-domain.MaxWithoutPass))
			cancel()
			if err != nil {
				w.log.Warn("renew delivery lease; retrying", "err", err)
				continue
			}
			expires = start.Add(w.d.Lease)
			if !ok {
				lose("delivery lease lost or webhook no longer deliverable; stopping")
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// read bounds one of the drain's reads as the lease's renewal is bounded:
// a database that does not answer within a third of the lease stops the
// drain (its lease would lapse anyway) rather than holding it, and the
// worker's shutdown, for ever.
func (w *drain) read() (context.Context, context.CancelFunc) {
	return context.WithTimeout(w.sends, w.d.Lease/3)
}

func (w *drain) stopped() bool { return w.ctx.Err() != nil || w.lost.Load() }

// fetched is a read of pending rows, made ahead of the sends.
type fetched struct {
	rows []storage.WebhookDelivery
	err  error
}

func (w *drain) fetch(after int64) <-chan fetched {
	ch := make(chan fetched, 1)
	go func() {
		ctx, cancel := w.read()
		defer cancel()
		rows, err := w.d.Store.PendingDeliveries(ctx, w.c.ID, after, w.d.Batch)
		ch <- fetched{rows, err}
	}()
	return ch
}

// queue sends the pending deliveries in id order, the next batch read
// while this one is sent, until the queue is empty, a delivery fails
// (head of line: it is retried later and the rest waits), the webhook
// turns failing or the drain is stopped.
func (w *drain) queue() {
	next := w.fetch(0)
	sent := false
	for {
		f := <-next
		if f.err != nil {
			w.log.Warn("read pending deliveries", "err", f.err)
			return
		}
		if len(f.rows) == w.d.Batch {
			next = w.fetch(f.rows[len(f.rows)-1].ID)
		}
		for _, row := range f.rows {
			// The claim found the head due by the database's clock; a later
			// row not due (only one written so) waits for another claim.
			if w.stopped() || w.rec.failed.Load() || sent && row.NextAttemptAt.After(w.d.Clock()) {
				return
			}
			sent = true
			o, kind := w.send(row)
			switch kind {
			case notSent:
				return
			case answered:
				w.rec.add(o, false)
				continue
			case rejected, unreachable:
				if row.Attempts+1 < w.d.Attempts {
					o.State, o.RetryIn, o.JobState = storage.DeliveryPending, retryIn(w.d.Backoff, row.Attempts), ""
					w.d.metrics.attempts.WithLabelValues(outcomeRetried).Inc()
					w.rec.add(o, false)
					return
				}
				o.State = storage.DeliveryDead
				if kind == rejected {
					o.DeadReason = storage.DeadRejected
					o.JobState = jobState(o, false)
					w.d.metrics.attempts.WithLabelValues(outcomeDeadRejected).Inc()
					w.log.Warn("delivery rejected; parked", "delivery_id", row.ID, "status", o.Status)
					w.rec.add(o, false)
					continue
				}
				o.DeadReason, o.ReplayJobID = storage.DeadUnreachable, 0
				w.d.metrics.attempts.WithLabelValues(outcomeDeadUnreachable).Inc()
				w.log.Warn("delivery unreachable after its last attempt; the webhook is failing", "delivery_id", row.ID,
					"status", o.Status, "err", o.Error)
				w.rec.add(o, true)
				return
			}
		}
		if len(f.rows) < w.d.Batch {
			return
		}
	}
}

// MaxRetryBackoff is the longest wait between attempts at a delivery
// (unless the first wait, AVIARY_WEBHOOK_RETRY_BACKOFF, is longer): the
// doubling stops there.
const MaxRetryBackoff = time.Hour

// retryIn is the wait after failed attempt n+1 (n attempts before it):
// first doubled n times, at most max(first, MaxRetryBackoff), never
// overflowing.
func retryIn(first time.Duration, n int) time.Duration {
	limit := max(first, MaxRetryBackoff)
	wait := first
	for range n {
		if wait >= limit/2 {
			return limit
		}
		wait *= 2
	}
	return wait
}

// probe re-sends the failing webhook's oldest unreachable-dead delivery:
// answered (or rejected: it is parked), the webhook recovers and its queue
// is sent on (true); else the next probe is scheduled.
func (w *drain) probe() bool {
	read, cancelRead := w.read()
	row, ok, err := w.d.Store.ProbeDelivery(read, w.c.ID)
	cancelRead()
	if err != nil {
		w.log.Warn("read the probe delivery", "err", err)
		return false
	}
	b := storage.DeliveryBatch{WebhookID: w.c.ID, Recover: true}
	if ok {
		o, kind := w.send(row)
		switch kind {
		case notSent:
			return false
		case answered:
		case rejected:
			o.State, o.DeadReason = storage.DeliveryDead, storage.DeadRejected
			o.JobState = jobState(o, false)
			w.d.metrics.attempts.WithLabelValues(outcomeDeadRejected).Inc()
		default:
			o.State, o.DeadReason, o.ReplayJobID = storage.DeliveryDead, storage.DeadUnreachable, 0
			b.Recover, b.Fail, b.ProbeIn = false, true, w.d.ProbeInterval
			w.d.metrics.attempts.WithLabelValues(outcomeProbeFailed).Inc()
		}
		b.Outcomes = []storage.DeliveryOutcome{o}
	}
	ctx, cancel := context.WithTimeout(w.sends, 10*time.Second)
	defer cancel()
	if err := w.d.Store.RecordDeliveryBatch(ctx, b); err != nil {
		w.d.metrics.recordErr.Inc()
		w.log.Warn("record the probe", "err", err)
		return false
	}
	if b.Recover {
		w.log.Info("webhook answered a probe; its deliveries go again")
	}
	return b.Recover && !w.stopped()
}

// Answer classes.
const (
	answered    = iota // 2xx
	unreachable        // no answer, 5xx, 408, 429
	rejected           // any other answer
	notSent            // not sent (its replay status could not be written): no attempt
)

func classify(status int) int {
	switch {
	case status >= 200 && status <= 299:
		return answered
	case status == 0 || status >= 500 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests:
		return unreachable
	default:
		return rejected
	}
}

// send POSTs row (a replay status written now) and returns its outcome:
// delivered when answered, else to be completed by the caller.
func (w *drain) send(row storage.WebhookDelivery) (storage.DeliveryOutcome, int) {
	o := storage.DeliveryOutcome{DeliveryID: row.ID}
	body := row.Body
	if row.Kind == storage.DeliveryReplayStatus {
		var err error
		if body, o.JobState, err = w.replayStatus(row); err != nil {
			w.log.Warn("write the replay status; it waits for the next claim", "delivery_id", row.ID, "err", err)
			return o, notSent
		}
		o.Body, o.ReplayJobID = body, row.ReplayJobID
	}
	if w.lost.Load() {
		return o, notSent
	}
	ctx, cancel := context.WithTimeout(w.posts, w.d.Timeout)
	defer cancel()
	o.StartedAt = w.d.Clock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.c.URL, bytes.NewReader(body))
	if err != nil {
		o.Error = "build request: " + err.Error()
		return o, rejected
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSignature, domain.Sign(w.c.ConsumerSecret, body))
	if id := eventID(row, body); id != "" {
		req.Header.Set(HeaderEventID, id)
	}
	req.Header.Set(HeaderDelivery, strconv.FormatInt(row.ID, 10))
	req.Header.Set(HeaderAttempt, strconv.Itoa(row.Attempts+1))
	start := time.Now()
	resp, err := w.d.Client.Do(req)
	elapsed := time.Since(start)
	o.LatencyMS = int(elapsed.Milliseconds())
	w.d.metrics.latency.Observe(elapsed.Seconds())
	if err != nil {
		if errors.Is(context.Cause(w.posts), errLeaseLost) {
			// Aborted by us, not failed by the receiver: no attempt.
			w.log.Info("delivery aborted: the lease is lost; it goes again", "delivery_id", row.ID)
			return o, notSent
		}
		o.Error = truncate(err.Error(), 300)
		return o, unreachable
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	_ = resp.Body.Close()
	o.Status = resp.StatusCode
	kind := classify(o.Status)
	if kind == answered {
		o.State = storage.DeliveryDelivered
		w.d.metrics.delivered.Inc()
	} else {
		o.Error = fmt.Sprintf("HTTP %d", o.Status)
	}
	return o, kind
}

// jobState is the state a replay job ends in when its status delivery o
// is final: what the status said when delivered, else incomplete.
func jobState(o storage.DeliveryOutcome, delivered bool) string {
	if o.ReplayJobID == 0 {
		return ""
	}
	if delivered {
		return o.JobState
	}
	return storage.ReplayIncomplete
}

// replayStatus writes the replay_job_status event of row's job: Complete
// when every delivery of the job was delivered. The outcomes sent before
// it are recorded first.
func (w *drain) replayStatus(row storage.WebhookDelivery) ([]byte, string, error) {
	if w.rec != nil && !w.rec.flush() {
		return nil, "", fmt.Errorf("the outcomes before it are not recorded")
	}
	read, cancel := w.read()
	defer cancel()
	complete, err := w.d.Store.ReplayJobComplete(read, row.ReplayJobID)
	if err != nil {
		return nil, "", err
	}
	state, desc, stored := "Incomplete", "Some events of the replay window were not delivered.", storage.ReplayIncomplete
	if complete {
		state, desc, stored = "Complete", "Every event of the replay window was delivered.", storage.ReplayComplete
	}
	body, err := json.Marshal(map[string]any{"replay_job_status": replayJobStatus{
		WebhookID: strconv.FormatInt(row.WebhookID, 10), JobState: state, Description: desc,
		JobID: strconv.FormatInt(row.ReplayJobID, 10)}})
	return body, stored, err
}

type replayJobStatus struct {
	WebhookID   string `json:"webhook_id"`
	JobState    string `json:"job_state"`
	Description string `json:"job_state_description"`
	JobID       string `json:"job_id"`
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// eventID is the x-aviary-event-id of row (body its payload): a post
// delivery's log event seq; an activity delivery's event_uuid, the
// delivery's own id (docs/activity.md, "The envelope"); "" for the others.
func eventID(row storage.WebhookDelivery, body []byte) string {
	switch row.Kind {
	case storage.DeliveryPost:
		return strconv.FormatInt(row.EventSeq, 10)
	case storage.DeliveryActivity:
		var env struct {
			Data struct {
				EventUUID string `json:"event_uuid"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Data.EventUUID == "" {
			return strconv.FormatInt(row.EventSeq, 10) // not an envelope: the log event, as before
		}
		return env.Data.EventUUID
	}
	return ""
}
