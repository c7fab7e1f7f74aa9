package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
)

// Defaults of HubDeps.
const (
	// DefaultPoll is how often a hub renews its connections' heartbeats and
	// looks for terminations a lost control did not carry.
	DefaultPoll = 2 * time.Second
	// DefaultBlock is how long one read of the matches stream waits.
	DefaultBlock = time.Second
	// connQueueMax is how many deliveries a stream may fall behind before
	// it is dropped as too slow. The queue grows only while posts wait (an
	// idle stream holds none), so a burst (a worker's backlog, a catch-up)
	// does not drop a client that reads; at about 60 bytes a delivery, a
	// full queue is some 60 KB.
	connQueueMax = 1024
	// readCount is how many matches one read takes.
	readCount = 500
	// catchUpBatch is how many events one read of the log takes.
	catchUpBatch = 500
	maxBackoff   = 5 * time.Second
	// pollTimeout bounds one heartbeat (well inside the 30 s a row stays
	// open without one).
	pollTimeout = 5 * time.Second
)

// HubDeps is what a hub needs.
type HubDeps struct {
	Bus *bus.Bus
	// Log and Rules serve the catch-up after a Redis error; without them
	// the hub only routes what the bus carries.
	Log   events.Log
	Rules RuleSource
	Conns ConnectionStore
	// Replica names this process in the connection records.
	Replica string
	Logger  *slog.Logger
	Poll    time.Duration
	Block   time.Duration
}

// Delivery is one matched post for one filtered stream, or one rendered
// activity event for one activity stream (Body set).
type Delivery struct {
	Seq    int64
	PostID int64
	Rules  []events.RuleHit
	// Body is an activity stream's line without "\r\n" (docs/activity.md);
	// SubscriptionID the subscription it was rendered for.
	Body           []byte
	SubscriptionID int64
}

// Conn is a stream this process holds.
type Conn struct {
	storage.StreamConnection
	mu     sync.Mutex
	queue  []Delivery
	ready  chan struct{} // one signal: deliveries wait in queue
	end    chan struct{}
	once   sync.Once
	reason string
	// floor is the (seq, subscription) of the last activity an activity
	// stream's backfill wrote: live deliveries up to it are skipped (the
	// handler's goroutine alone reads and writes it).
	floor [2]int64
}

// seen reports whether d is an activity at or before the backfill's last.
func (c *Conn) seen(d Delivery) bool {
	return d.Body != nil && !beyond(c.floor, d.Seq, d.SubscriptionID)
}

// beyond reports whether the activity (seq, sub) comes after last, a
// (seq, subscription) pair: the order the activity sink publishes in.
func beyond(last [2]int64, seq, sub int64) bool {
	return seq > last[0] || seq == last[0] && sub > last[1]
}

// Ready is signalled when deliveries wait; Take them.
func (c *Conn) Ready() <-chan struct{} { return c.ready }

// Take removes and returns the deliveries waiting, oldest first.
func (c *Conn) Take() []Delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.queue
	c.queue = nil
	return out
}

// push queues d; false when the stream is connQueueMax behind.
func (c *Conn) push(d Delivery) bool {
	c.mu.Lock()
	if len(c.queue) >= connQueueMax {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, d)
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
	return true
}

// Ended is closed when the hub ends the stream; Reason says why.
func (c *Conn) Ended() <-chan struct{} { return c.end }

// Reason is why the hub ended the stream (storage.Disconnect*), "" while
// it has not.
func (c *Conn) Reason() string {
	select {
	case <-c.end:
		return c.reason
	default:
		return ""
	}
}

// finish ends the stream for reason (the first reason wins).
func (c *Conn) finish(reason string) {
	c.once.Do(func() {
		c.reason = reason
		close(c.end)
	})
}

// ErrStopping refuses a stream while the hub shuts down.
var ErrStopping = errors.New("streams: the hub is stopping")

// Hub routes matches to this process's streams (docs/streams.md).
type Hub struct {
	HubDeps
	mu    sync.Mutex
	conns map[string]*Conn
	// byApp indexes conns by app, for routing.
	byApp    map[int64]map[string]*Conn
	stopping bool
	streams  sync.WaitGroup
	// lastSeq is the newest event routed (the read loop's alone).
	lastSeq int64
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewHub builds a hub; Start runs it.
func NewHub(d HubDeps) *Hub {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Poll <= 0 {
		d.Poll = DefaultPoll
	}
	if d.Block <= 0 {
		d.Block = DefaultBlock
	}
	return &Hub{HubDeps: d, conns: map[string]*Conn{}, byApp: map[int64]map[string]*Conn{}}
}

// Start reads the log's head (matches of older events are not routed) and
// runs the read, control and poll loops until Stop.
func (h *Hub) Start(ctx context.Context) error {
	if h.Log != nil {
		head, err := h.Log.EventHead(ctx)
		if err != nil {
			return fmt.Errorf("start the stream hub: %w", err)
		}
		h.lastSeq = head
	}
	ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	h.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); h.readLoop(ctx) }()
	go func() { defer wg.Done(); h.activityLoop(ctx) }()
	go func() { defer wg.Done(); h.controlLoop(ctx) }()
	go func() { defer wg.Done(); h.pollLoop(ctx) }()
	go func() { wg.Wait(); close(h.done) }()
	return nil
}

// Stop ends every local stream with the operational-disconnect error,
// waits (until ctx ends) for their handlers to write it and close their
// records, then stops the loops. Streams opened afterwards are refused.
// Call it before http.Server.Shutdown, which would otherwise wait for the
// streams for its whole grace period.
func (h *Hub) Stop(ctx context.Context) {
	h.mu.Lock()
	h.stopping = true
	for _, c := range h.conns {
		c.finish(storage.DisconnectOperational)
	}
	h.mu.Unlock()
	waited := make(chan struct{})
	go func() { h.streams.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
	}
	if h.cancel != nil {
		h.cancel()
		<-h.done
	}
}

// Register adds a stream whose record is open; ErrStopping once Stop began.
func (h *Hub) Register(rec storage.StreamConnection) (*Conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return nil, ErrStopping
	}
	c := &Conn{StreamConnection: rec, ready: make(chan struct{}, 1), end: make(chan struct{})}
	h.conns[rec.ID] = c
	if h.byApp[c.AppID] == nil {
		h.byApp[c.AppID] = map[string]*Conn{}
	}
	h.byApp[c.AppID][c.ID] = c
	h.streams.Add(1)
	return c, nil
}

// Unregister removes a stream when its handler returns.
func (h *Hub) Unregister(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[c.ID]; ok {
		delete(h.conns, c.ID)
		delete(h.byApp[c.AppID], c.ID)
		if len(h.byApp[c.AppID]) == 0 {
			delete(h.byApp, c.AppID)
		}
		h.streams.Done()
	}
}

// Terminate asks every replica to end the connections of control c (the
// records are marked already; a lost control is carried out by the polls).
func (h *Hub) Terminate(ctx context.Context, c bus.Control) error {
	c.Kind = bus.Terminate
	h.apply(c)
	return h.Bus.PublishControl(ctx, c)
}

// snapshot lists the local streams.
func (h *Hub) snapshot() []*Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Conn, 0, len(h.conns))
	for _, c := range h.conns {
		out = append(out, c)
	}
	return out
}

// route hands m to the local streams of the apps it matched, each with its
// app's rules (m.Rules is ordered by app); a stream too far behind is
// ended.
func (h *Hub) route(m events.Match) {
	byAppID := func(a, b events.RuleHit) int { return cmp.Compare(a.AppID, b.AppID) }
	if !slices.IsSortedFunc(m.Rules, byAppID) {
		m.Rules = slices.Clone(m.Rules)
		slices.SortStableFunc(m.Rules, byAppID)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := 0; i < len(m.Rules); {
		j := i
		for j < len(m.Rules) && m.Rules[j].AppID == m.Rules[i].AppID {
			j++
		}
		d := Delivery{Seq: m.Seq, PostID: m.PostID, Rules: m.Rules[i:j:j]}
		for _, c := range h.byApp[m.Rules[i].AppID] {
			if c.Endpoint == storage.EndpointActivityStream {
				continue
			}
			if !c.push(d) {
				c.finish(storage.DisconnectSlowClient)
			}
		}
		i = j
	}
}

// readLoop reads the matches stream after its last id and routes what is
// newer than lastSeq. It starts after the stream's newest entry at start
// (a concrete id, never "$" again: a read after an empty block would skip
// what came between the two reads). After a Redis error it retries with
// backoff and, once Redis answers, catches up from the log before reading
// the stream again from its start (Seq skips what the catch-up delivered).
func (h *Hub) readLoop(ctx context.Context) {
	after, failing, backoff := "", false, 100*time.Millisecond
	epoch := ""
	for ctx.Err() == nil {
		var ds []bus.Delivery
		var err error
		if after == "" {
			after, err = h.Bus.LastMatchID(ctx)
		} else {
			ds, err = h.Bus.ReadMatches(ctx, after, h.Block, readCount)
		}
		if err == nil {
			err = h.checkEpoch(ctx, &epoch, &failing)
		}
		if err == nil && failing {
			err = h.catchUp(ctx)
			if err == nil {
				failing, backoff, after = false, 100*time.Millisecond, bus.StartID
				continue
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
				h.Logger.Warn("stream hub: reading matches failed; will catch up from the event log", "err", err)
			}
			failing = true
			sleep(ctx, backoff)
			backoff = min(backoff*2, maxBackoff)
			continue
		}
		for _, d := range ds {
			after = d.StreamID
			if d.Match.Seq <= h.lastSeq {
				continue
			}
			h.lastSeq = d.Match.Seq
			h.route(d.Match)
		}
	}
}

// checkEpoch reads the bus's epoch; a change since the last read means
// Redis lost its data (restarted empty) and with it, maybe, matches this
// hub had not read, though no call failed: it sets failing, so the loop
// catches up from the log. The first read only records the epoch.
func (h *Hub) checkEpoch(ctx context.Context, epoch *string, failing *bool) error {
	e, err := h.Bus.Epoch(ctx)
	if err != nil {
		return err
	}
	if *epoch != "" && e != *epoch && !*failing {
		h.Logger.Warn("stream hub: Redis lost its data (the bus epoch changed); catching up from the event log")
		*failing = true
	}
	*epoch = e
	return nil
}

// catchUp routes the posts of the events after lastSeq that match the
// rules of the apps with local streams.
func (h *Hub) catchUp(ctx context.Context) error {
	if h.Log == nil || h.Rules == nil {
		return nil // no log to catch up from (tests of the routing alone)
	}
	apps := h.localApps()
	if len(apps) == 0 {
		head, err := h.Log.EventHead(ctx)
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		h.lastSeq = max(h.lastSeq, head)
		return nil
	}
	rules, err := h.Rules.StreamRulesOf(ctx, apps)
	if err != nil {
		return fmt.Errorf("catch up: %w", err)
	}
	set := streamrules.NewSet(rules)
	for {
		evs, err := h.Log.EventsAfter(ctx, h.lastSeq, catchUpBatch)
		if err != nil {
			return fmt.Errorf("catch up after event %d: %w", h.lastSeq, err)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, ev := range evs {
			m, ok, err := set.MatchEvent(ev)
			if err != nil {
				h.Logger.ErrorContext(ctx, "stream catch-up: event skipped", "err", err)
			}
			if ok {
				h.route(m)
			}
			h.lastSeq = ev.Seq
		}
	}
}

// localApps lists the apps with local streams.
func (h *Hub) localApps() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	apps := slices.Collect(maps.Keys(h.byApp))
	slices.Sort(apps)
	return apps
}

// controlLoop carries out the controls other replicas publish.
func (h *Hub) controlLoop(ctx context.Context) {
	for c := range h.Bus.Controls(ctx) {
		h.apply(c)
	}
}

// apply ends the local streams a terminate control names.
func (h *Hub) apply(c bus.Control) {
	if c.Kind != bus.Terminate {
		return
	}
	for _, conn := range h.appConns(c.AppID) {
		switch {
		case c.Endpoint != "" && conn.Endpoint != c.Endpoint:
		case c.ConnectionIDs != nil && !slices.Contains(c.ConnectionIDs, conn.ID):
		default:
			conn.finish(storage.DisconnectTerminated)
		}
	}
}

// appConns lists the local streams of app.
func (h *Hub) appConns(app int64) []*Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Values(h.byApp[app]))
}

// pollLoop renews the local streams' heartbeats every Poll and ends those
// whose records ask for it.
func (h *Hub) pollLoop(ctx context.Context) {
	t := time.NewTicker(h.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.poll(ctx)
	}
}

func (h *Hub) poll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	local := h.snapshot()
	ids := make([]string, len(local))
	for i, c := range local {
		ids[i] = c.ID
	}
	end, err := h.Conns.HeartbeatStreamConnections(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			h.Logger.Warn("stream hub: heartbeat failed", "err", err)
		}
		return
	}
	for _, c := range local {
		if why, ok := end[c.ID]; ok {
			c.finish(why)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
