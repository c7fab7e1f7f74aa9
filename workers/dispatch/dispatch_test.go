package dispatch_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/dispatch"
)

// redisSink publishes every event to a Redis stream through one pipeline
// per batch (the shape of the real sinks: a network round trip a batch).
type redisSink struct {
	rdb *redis.Client
	key string
}

func (s *redisSink) Name() string { return "redis" }

func (s *redisSink) Handle(ctx context.Context, batch []events.Event) error {
	pipe := s.rdb.Pipeline()
	for _, e := range batch {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.key, Values: []any{"seq", e.Seq, "type", string(e.Type), "p", e.Payload}})
	}
	_, err := pipe.Exec(ctx)
	return err
}

// received reads the seqs the redis sink published, in stream order.
func received(t *testing.T, s *redisSink) []int64 {
	t.Helper()
	msgs, err := s.rdb.XRange(t.Context(), s.key, "-", "+").Result()
	if err != nil {
		t.Fatalf("XRANGE: %v", err)
	}
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i], _ = strconv.ParseInt(m.Values["seq"].(string), 10, 64)
	}
	return out
}

// recordingSink records the batches it takes; it fails while failing
// says so.
type recordingSink struct {
	name    string
	mu      sync.Mutex
	batches [][]int64
	failing func() bool
}

func (s *recordingSink) Name() string { return s.name }

func (s *recordingSink) Handle(_ context.Context, batch []events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seqs := make([]int64, len(batch))
	for i, e := range batch {
		seqs[i] = e.Seq
	}
	s.batches = append(s.batches, seqs)
	if s.failing != nil && s.failing() {
		return errors.New("sink refused")
	}
	return nil
}

func (s *recordingSink) seqs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

// start runs d until the test ends (or stop is called) and waits for it.
func start(t *testing.T, d *dispatch.Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func allSeqs(t *testing.T, db *postgres.DB) []int64 {
	t.Helper()
	evs, err := db.EventsAfter(t.Context(), 0, 100_000)
	if err != nil {
		t.Fatalf("EventsAfter: %v", err)
	}
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func cursorAt(t *testing.T, db *postgres.DB, name string) int64 {
	t.Helper()
	seq, err := db.EventCursor(t.Context(), name)
	if err != nil {
		t.Fatalf("EventCursor: %v", err)
	}
	return seq
}

// With polling practically off (an hour) and a lease that needs no
// renewal, only the NOTIFY of an append can wake the idle dispatcher: the
// events arriving proves the wake-up, whatever the time it took.
func TestDispatcherWakesOnNotify(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	rdb, prefix := storagetest.RedisPrefix(t)
	sink := &redisSink{rdb: rdb, key: prefix + "events"}
	alice := factory.User(t, db, nil)
	d := &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Sinks: []dispatch.Sink{sink},
		Cursor: "notify", Poll: time.Hour, Lease: 3 * time.Hour}
	start(t, d)
	// The first event may be read by the first pass; once it is
	// committed, the dispatcher waits idle for an hour unless woken.
	factory.Post(t, db, &factory.PostOpts{Author: alice})
	first := allSeqs(t, db)
	eventually(t, "first event committed", func() bool { return cursorAt(t, db, "notify") == first[0] })
	time.Sleep(50 * time.Millisecond) // let it reach its idle wait
	for range 3 {
		factory.Post(t, db, &factory.PostOpts{Author: alice})
	}
	want := allSeqs(t, db)
	eventually(t, "events published", func() bool { return slices.Equal(received(t, sink), want) })
	eventually(t, "cursor committed", func() bool { return cursorAt(t, db, "notify") == want[len(want)-1] })
}

// Two dispatchers on one cursor: every event is delivered, and no event is
// delivered by both, also when the holder stops midway and the other
// takes over.
func TestDispatcherLeaseOneHolder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	sinks := []*recordingSink{{name: "a"}, {name: "b"}}
	stops := make([]func(), 2)
	for i, s := range sinks {
		stops[i] = start(t, &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Sinks: []dispatch.Sink{s},
			Cursor: "shared", Batch: 7, Poll: 20 * time.Millisecond, Lease: 2 * time.Second})
	}
	post := func(n int) {
		for range n {
			if _, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "x"}); err != nil {
				t.Fatalf("CreatePost: %v", err)
			}
		}
	}
	post(60)
	first := allSeqs(t, db)
	eventually(t, "first events dispatched", func() bool { return cursorAt(t, db, "shared") == first[len(first)-1] })
	// Stop whichever holds the lease; the other takes over.
	holder := 0
	if len(sinks[1].seqs()) > 0 {
		holder = 1
	}
	stops[holder]()
	post(60)
	all := allSeqs(t, db)
	eventually(t, "all events dispatched", func() bool { return cursorAt(t, db, "shared") == all[len(all)-1] })
	a, b := sinks[0].seqs(), sinks[1].seqs()
	for _, seq := range a {
		if slices.Contains(b, seq) {
			t.Errorf("event %d delivered by both dispatchers", seq)
		}
	}
	got := slices.Sorted(slices.Values(append(slices.Clone(a), b...)))
	if !slices.Equal(got, all) {
		t.Errorf("delivered %v, want %v", got, all)
	}
	if len(sinks[1-holder].seqs()) == 0 {
		t.Error("the second dispatcher never took over")
	}
}

// A sink that fails leaves the cursor where it was; the same batch is
// offered again (to the failing sink, after those before it took it)
// until it is taken, then the cursor moves. A dispatcher stopped while its
// sink fails leaves the batch to the next one.
func TestDispatcherSinkFailure(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	for range 3 {
		factory.Post(t, db, &factory.PostOpts{Author: alice})
	}
	want := allSeqs(t, db)

	var mu sync.Mutex
	fail := true
	failing := func() bool { mu.Lock(); defer mu.Unlock(); return fail }
	before := &recordingSink{name: "before"}
	flaky := &recordingSink{name: "flaky", failing: failing}
	start(t, &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Sinks: []dispatch.Sink{before, flaky},
		Cursor: "flaky", MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	eventually(t, "the batch offered three times", func() bool { return len(flaky.seqs()) >= 3*len(want) })
	if c := cursorAt(t, db, "flaky"); c != 0 {
		t.Errorf("cursor %d while the sink fails, want 0", c)
	}
	if got := before.seqs(); !slices.Equal(got, want) {
		t.Errorf("the sink before the failing one took %v, want %v once", got, want)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	eventually(t, "cursor moved", func() bool { return cursorAt(t, db, "flaky") == want[len(want)-1] })
	flaky.mu.Lock()
	for _, b := range flaky.batches {
		if !slices.Equal(b, want) {
			t.Errorf("offered %v, want the same batch %v every time", b, want)
		}
	}
	flaky.mu.Unlock()

	// Another cursor: its dispatcher stops while the sink fails; the next
	// dispatcher delivers the batch.
	down := &recordingSink{name: "down", failing: func() bool { return true }}
	stop := start(t, &dispatch.Dispatcher{Log: db, Cursors: db, Sinks: []dispatch.Sink{down}, Cursor: "handover",
		MinBackoff: 5 * time.Millisecond})
	eventually(t, "the batch offered", func() bool { return len(down.seqs()) > 0 })
	stop()
	up := &recordingSink{name: "up"}
	start(t, &dispatch.Dispatcher{Log: db, Cursors: db, Sinks: []dispatch.Sink{up}, Cursor: "handover"})
	eventually(t, "delivered after the handover", func() bool { return cursorAt(t, db, "handover") == want[len(want)-1] })
	if got := up.seqs(); !slices.Equal(got, want) {
		t.Errorf("the next dispatcher delivered %v, want %v", got, want)
	}
}

func TestRetentionSweep(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	for range 4 {
		factory.Post(t, db, &factory.PostOpts{Author: alice})
	}
	seqs := allSeqs(t, db)
	pool := storagetest.BarePool(t, url)
	if _, err := pool.Exec(ctx, `UPDATE events SET created_at = now() - interval '8 days' WHERE seq < $1`, seqs[2]); err != nil {
		t.Fatalf("age events: %v", err)
	}
	// Stream connections: closed ones older than their retention go; a
	// recent closed one and an open one (however old) stay.
	app := factory.App(t, db, nil)
	conns := make([]string, 4)
	for i := range conns {
		c, err := db.OpenStreamConnection(ctx, storage.StreamConnection{AppID: app.ID, Endpoint: storage.EndpointFilteredStream}, 10)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.ID
	}
	for _, id := range conns[:3] {
		if err := db.CloseStreamConnection(ctx, id, storage.DisconnectClient); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE stream_connections SET connected_at = now() - interval '40 days',
		disconnected_at = CASE WHEN id = ANY($1::uuid[]) THEN now() - interval '31 days' ELSE disconnected_at END,
		heartbeat_at = now()`, conns[:2]); err != nil {
		t.Fatalf("age connections: %v", err)
	}
	// Webhook deliveries: those older than the events' retention go
	// (whatever their state), with their attempts; a recent one stays.
	hook, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://a.example/hook", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var news []storage.NewDelivery
	for i := range 3 {
		news = append(news, storage.NewDelivery{WebhookID: hook.ID, AppID: app.ID, EventSeq: int64(i + 1), EventAt: time.Now(), Body: []byte(`{}`)})
	}
	if _, err := db.AddWebhookDeliveries(ctx, news); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET created_at = now() - interval '8 days',
		state = CASE WHEN event_seq = 1 THEN 'delivered' ELSE state END WHERE event_seq < 3`); err != nil {
		t.Fatalf("age deliveries: %v", err)
	}
	r := &dispatch.Retention{Store: db, Age: dispatch.DefaultRetention, Interval: time.Minute, Batch: 1, Holder: "one"}
	if n, err := r.Sweep(ctx); err != nil || n != (dispatch.Swept{Events: 2, Deliveries: 2, Connections: 2}) {
		t.Fatalf("Sweep = %+v, %v; want 2 events, 2 deliveries, 2 connections", n, err)
	}
	var leftDeliveries []int64
	if err := pool.QueryRow(ctx, `SELECT array_agg(event_seq) FROM webhook_deliveries`).Scan(&leftDeliveries); err != nil ||
		!slices.Equal(leftDeliveries, []int64{3}) {
		t.Errorf("deliveries left %v (%v), want [3]", leftDeliveries, err)
	}
	list, err := db.StreamConnections(ctx, storage.ConnectionQuery{AppID: app.ID, Status: storage.ConnectionsAll, Limit: 10})
	var left []string
	for _, c := range list {
		left = append(left, c.ID)
	}
	slices.Sort(left)
	if want := slices.Sorted(slices.Values(conns[2:])); err != nil || !slices.Equal(left, want) {
		t.Errorf("connections left %v (%v), want %v", left, err, want)
	}
	if got := allSeqs(t, db); !slices.Equal(got, seqs[2:]) {
		t.Errorf("left %v, want %v", got, seqs[2:])
	}
	// Another replica within the interval: its turn was taken.
	other := &dispatch.Retention{Store: db, Age: time.Nanosecond, Interval: time.Minute, Holder: "two"}
	if n, err := other.Sweep(ctx); err != nil || n != (dispatch.Swept{}) {
		t.Errorf("second replica's Sweep = %d, %v; want 0 (not its turn)", n, err)
	}
}

// Full batches are committed once per CommitEvery (an hour here, so not
// at all while they come): the cursor moves with the batch that is not
// full (caught up), or, when the log ends on a full batch, before the
// dispatcher waits.
func TestDispatcherCommitCadence(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	run := func(cursor string) {
		all := allSeqs(t, db)
		sink := &recordingSink{name: "record"}
		start(t, &dispatch.Dispatcher{Log: db, Cursors: db, Sinks: []dispatch.Sink{sink}, Cursor: cursor,
			Batch: 2, CommitEvery: time.Hour, Poll: 20 * time.Millisecond})
		eventually(t, cursor+": caught up and committed", func() bool { return cursorAt(t, db, cursor) == all[len(all)-1] })
		if got := sink.seqs(); !slices.Equal(got, all) {
			t.Fatalf("%s: delivered %v, want %v", cursor, got, all)
		}
	}
	for range 5 {
		factory.Post(t, db, &factory.PostOpts{Author: alice})
	}
	run("odd") // 2, 2, 1: the last batch is not full
	factory.Post(t, db, &factory.PostOpts{Author: alice})
	run("even") // 2, 2, 2, then nothing
}
