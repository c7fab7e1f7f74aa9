package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/api/auth"
)

// The event families of the fault matrix (issue 32, docs/fault-matrix.md):
//
//   - dispatcher: every accepted post's post.create event is in the log
//     exactly once (the outbox: same transaction as the post) and every
//     dispatcher cursor (dispatch, webhooks, activity, activity-stream)
//     passes it;
//   - webhooks: a webhook linked to the filtered stream receives every
//     accepted matching post at least once, correctly signed (a redelivery
//     is a note: delivery is at least once, receivers de-duplicate on
//     x-aviary-event-id);
//   - streams: a filtered stream client that reconnects, to the other
//     replica, with backfill_minutes covering its gap, sees every accepted
//     matching post at least once (copies from backfill are a note);
//   - activity: the same over the activity stream (GET
//     /2/activity/stream), whose post.create events of the demo user come
//     from the workers' activity-stream sink instead of the hubs' rules
//     (so a Redis that lost its data is covered by the sink's publisher,
//     not by a catch-up from the log).
//
// Each family posts through the API replicas in turn with its own word in
// every text, so the families' posts never match each other's rules; the
// webhook link routes every rule of the app, so the webhook also receives
// the stream family's posts, which its checks ignore.

// eventFamilies are the matrix's event families: the event dispatcher,
// webhook delivery, the filtered stream, the activity stream.
func eventFamilies() []family {
	tag := evRunTag()
	return []family{
		&dispatcherFamily{work: evWork{word: "evdisp" + tag, every: 150 * time.Millisecond}},
		&webhooksFamily{work: evWork{word: "evhook" + tag, every: 150 * time.Millisecond}},
		&streamsFamily{work: evWork{word: "evstrm" + tag, every: 150 * time.Millisecond}},
		&streamsFamily{activity: true, work: evWork{word: "evact" + tag, every: 150 * time.Millisecond}},
	}
}

// evRunTag is a few random hex digits that make a run's words its own.
func evRunTag() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dispatchCursors are the dispatcher cursors a worker runs (docs/events.md,
// docs/webhooks.md, docs/activity.md): each must pass every event.
var dispatchCursors = []string{"dispatch", "webhooks", "activity", "activity-stream"}

// ---------------------------------------------------------------------------
// Posting: the families' common workload.

// evSub is one POST /2/tweets a family sent.
type evSub struct {
	text string
	// sent is when the request started (latencies count from it).
	sent time.Time
	id   string
	// unknown: sent and not answered, resolved by its text at settle.
	unknown bool
	// failed: answered 5xx; looked up too (a post committed before the
	// failure would exist), and reported apart.
	failed bool
}

// evWork posts texts holding word through the replicas in turn, every
// interval, until its context ends, and keeps what was accepted.
type evWork struct {
	word  string
	every time.Duration

	mu        sync.Mutex
	submitted int
	refused   int // answered 4xx (a limit, Redis away failing closed, ...)
	notSent   int // no replica took the connection (every one down)
	// failures are the first 5xx answers (status, replica, body), for the
	// report.
	failures []string
	subs     []*evSub
}

// evDo sends one request to base with env's client (a per-request
// timeout), signed as the demo user (OAuth 1.0a) when user is true, else
// with the app's bearer token. sent is false when the connection was
// refused (nothing reached the server).
func evDo(ctx context.Context, env *matrixEnv, user bool, base, method, path string, body any) (status int, raw []byte, sent bool, err error) {
	s := env.s
	var rd io.Reader
	var payload []byte
	if body != nil {
		if payload, err = json.Marshal(body); err != nil {
			return 0, nil, false, err
		}
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if user {
		if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, s.creds.AccessToken, s.creds.AccessTokenSecret, time.Now(), ""); err != nil {
			return 0, nil, false, err
		}
	} else {
		req.Header.Set("Authorization", "Bearer "+s.creds.BearerToken)
	}
	client := env.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, !errors.Is(err, syscall.ECONNREFUSED), err
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(resp.Body)
	return resp.StatusCode, raw, true, err
}

// run posts until ctx ends. A refused connection (a replica down) tries
// the next replica with the same text; an answer lost leaves the post
// unknown, and a 5xx failed, both resolved at settle by their text (a
// client would send a new post; each text is unique); a 4xx is a refusal.
func (w *evWork) run(ctx context.Context, env *matrixEnv) {
	for n, turn := 0, 0; ctx.Err() == nil; n++ {
		text := fmt.Sprintf("%s post %d through the fault matrix", w.word, n)
		sub := &evSub{text: text}
		w.mu.Lock()
		w.submitted++
		w.mu.Unlock()
		for tries := 0; ctx.Err() == nil; tries++ {
			base := env.api(turn)
			turn++
			sub.sent = time.Now()
			status, raw, sent, err := evDo(ctx, env, true, base, http.MethodPost, "/2/tweets", map[string]any{"text": text})
			if !sent {
				if tries%len(env.apis) == len(env.apis)-1 {
					w.mu.Lock()
					w.notSent++
					w.mu.Unlock()
					sleepCtx(ctx, 200*time.Millisecond)
				}
				continue
			}
			var created struct {
				Data struct{ ID string } `json:"data"`
			}
			switch {
			case err == nil && status == http.StatusCreated && json.Unmarshal(raw, &created) == nil && created.Data.ID != "":
				sub.id = created.Data.ID
			case err == nil && status >= 400 && status < 500:
				w.mu.Lock()
				w.refused++
				w.mu.Unlock()
				sub = nil
			case err == nil && status >= 500:
				sub.failed = true // it may exist all the same
				w.mu.Lock()
				if len(w.failures) < 5 {
					w.failures = append(w.failures, fmt.Sprintf("%s %q at %s: %d %s", sub.sent.Format("15:04:05.000"), text, base, status, raw))
				}
				w.mu.Unlock()
			default: // no answer, or a cut one: it may exist
				sub.unknown = true
			}
			break
		}
		if sub != nil && (sub.id != "" || sub.unknown || sub.failed) {
			w.mu.Lock()
			w.subs = append(w.subs, sub)
			w.mu.Unlock()
		}
		sleepCtx(ctx, w.every)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// resolve looks the unknown posts up by their text (each text is unique)
// and returns the posts that exist: the accepted and the unknown found,
// by id. It also fills the report's counts.
func (w *evWork) resolve(ctx context.Context, pool *pgxpool.Pool, rep *familyReport) (map[string]*evSub, error) {
	w.mu.Lock()
	subs := slices.Clone(w.subs)
	rep.submitted = w.submitted
	refused, notSent := w.refused, w.notSent
	if len(w.failures) > 0 {
		rep.notes = append(rep.notes, "5xx answers: "+strings.Join(w.failures, "; "))
	}
	w.mu.Unlock()
	out := map[string]*evSub{}
	byText := map[string]*evSub{}
	failed := 0
	for _, sub := range subs {
		if sub.unknown || sub.failed {
			if sub.unknown {
				rep.unknown++
			} else {
				failed++
			}
			byText[sub.text] = sub
		} else {
			rep.accepted++
			out[sub.id] = sub
		}
	}
	rep.notes = append(rep.notes, fmt.Sprintf("posts: %d submitted, %d accepted, %d unknown (no answer), %d failed (5xx), %d refused (4xx), %d rounds with every replica refusing connections",
		rep.submitted, rep.accepted, rep.unknown, failed, refused, notSent))
	if len(byText) == 0 {
		return out, nil
	}
	texts := make([]string, 0, len(byText))
	for t := range byText {
		texts = append(texts, t)
	}
	var found, foundFailed int
	err := retryPG(ctx, func() error {
		rows, err := pool.Query(ctx, `SELECT id, text FROM posts WHERE text = ANY($1)`, texts)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var text string
			if err := rows.Scan(&id, &text); err != nil {
				return err
			}
			sub := byText[text]
			w.mu.Lock() // the dispatcher's poller reads the ids
			fresh := sub.id == ""
			if fresh {
				sub.id = strconv.FormatInt(id, 10)
			}
			w.mu.Unlock()
			if fresh {
				out[sub.id] = sub
				if sub.failed {
					foundFailed++
				} else {
					found++
				}
			}
		}
		return rows.Err()
	})
	rep.notes = append(rep.notes, fmt.Sprintf("found created: %d of the %d unknown, %d of the %d failed (5xx)", found, rep.unknown, foundFailed, failed))
	return out, err
}

// retryPG runs f until it succeeds or ctx ends (PostgreSQL may be
// restarting).
func retryPG(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
}

// latencyNote prints the p50/p99/max of ds (what: of what).
func latencyNote(what string, ds []time.Duration) string {
	if len(ds) == 0 {
		return what + ": none"
	}
	c := slices.Clone(ds)
	return fmt.Sprintf("%s: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d posts)", what,
		percentileMs(c, 0.50), percentileMs(c, 0.99), percentileMs(c, 1), len(c))
}

// ---------------------------------------------------------------------------
// dispatcher

// dispatcherFamily checks the outbox and the dispatcher cursors.
type dispatcherFamily struct {
	work evWork
	pool *pgxpool.Pool

	mu     sync.Mutex
	seq    map[string]int64     // post id -> its post.create event's seq (the first seen)
	passed map[string]time.Time // post id -> when every cursor was first seen past it
	done   chan struct{}
	stop   context.CancelFunc
}

func (f *dispatcherFamily) name() string { return "dispatcher" }

func (f *dispatcherFamily) prepare(ctx context.Context, env *matrixEnv) error {
	pool, err := pgxpool.New(context.Background(), env.s.dbURL)
	if err != nil {
		return err
	}
	f.pool = pool
	env.s.t.Cleanup(pool.Close)
	f.seq, f.passed = map[string]int64{}, map[string]time.Time{}
	// The poller watches the cursors pass the posts from now until settle
	// ends: the passage times are the family's recovery figures.
	pctx, cancel := context.WithCancel(context.Background())
	f.stop, f.done = cancel, make(chan struct{})
	go func() {
		defer close(f.done)
		for pctx.Err() == nil {
			_ = f.poll(pctx)
			sleepCtx(pctx, 200*time.Millisecond)
		}
	}()
	return nil
}

// poll maps the accepted posts to their events and marks those every
// cursor passed.
func (f *dispatcherFamily) poll(ctx context.Context) error {
	f.work.mu.Lock()
	var ids []int64
	for _, sub := range f.work.subs {
		if sub.id != "" {
			id, _ := strconv.ParseInt(sub.id, 10, 64)
			ids = append(ids, id)
		}
	}
	f.work.mu.Unlock()
	f.mu.Lock()
	ids = slices.DeleteFunc(ids, func(id int64) bool { _, ok := f.seq[strconv.FormatInt(id, 10)]; return ok })
	f.mu.Unlock()
	if len(ids) > 0 {
		rows, err := f.pool.Query(ctx, `SELECT subject_id, min(seq) FROM events WHERE type = 'post.create' AND subject_id = ANY($1) GROUP BY subject_id`, ids)
		if err != nil {
			return err
		}
		f.mu.Lock()
		for rows.Next() {
			var id, seq int64
			if err := rows.Scan(&id, &seq); err == nil {
				f.seq[strconv.FormatInt(id, 10)] = seq
			}
		}
		f.mu.Unlock()
		rows.Close()
		if rows.Err() != nil {
			return rows.Err()
		}
	}
	low, _, err := f.cursors(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	f.mu.Lock()
	for id, seq := range f.seq {
		if _, ok := f.passed[id]; !ok && seq <= low {
			f.passed[id] = now
		}
	}
	f.mu.Unlock()
	return nil
}

// cursors reads the dispatcher cursors: the lowest position among
// dispatchCursors (-1 when one is missing) and each row.
func (f *dispatcherFamily) cursors(ctx context.Context) (low int64, rows []string, err error) {
	r, err := f.pool.Query(ctx, `SELECT name, seq, coalesce(holder, ''), coalesce(to_char(held_until, 'HH24:MI:SS.MS'), '') FROM event_cursors ORDER BY name`)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	at := map[string]int64{}
	for r.Next() {
		var name, holder, until string
		var seq int64
		if err := r.Scan(&name, &seq, &holder, &until); err != nil {
			return 0, nil, err
		}
		at[name] = seq
		rows = append(rows, fmt.Sprintf("%s=%d (holder %q until %s)", name, seq, holder, until))
	}
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	low = math.MaxInt64
	for _, name := range dispatchCursors {
		seq, ok := at[name]
		if !ok {
			return -1, rows, nil
		}
		low = min(low, seq)
	}
	return low, rows, nil
}

func (f *dispatcherFamily) run(ctx context.Context, env *matrixEnv) { f.work.run(ctx, env) }

func (f *dispatcherFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	defer func() { f.stop(); <-f.done }()
	rep := familyReport{family: f.name()}
	posts, err := f.work.resolve(ctx, f.pool, &rep)
	if err != nil {
		rep.problems = append(rep.problems, fmt.Sprintf("resolving the unknown posts: %v", err))
	}
	// Wait for every post's event and every cursor past it.
	for {
		f.mu.Lock()
		n := 0
		for id := range posts {
			if _, ok := f.passed[id]; ok {
				n++
			}
		}
		f.mu.Unlock()
		if n == len(posts) || ctx.Err() != nil {
			break
		}
		// The poller maps only the accepted posts; the unknown found get
		// mapped here.
		f.mapFound(ctx, posts)
		sleepCtx(ctx, 250*time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Exactly once: the number of post.create events per post.
	counts := map[string]int{}
	err = retryPG(cctx, func() error {
		ids := make([]int64, 0, len(posts))
		for id := range posts {
			n, _ := strconv.ParseInt(id, 10, 64)
			ids = append(ids, n)
		}
		rows, err := f.pool.Query(cctx, `SELECT subject_id, count(*) FROM events WHERE type = 'post.create' AND subject_id = ANY($1) GROUP BY subject_id`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, n int64
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			counts[strconv.FormatInt(id, 10)] = int(n)
		}
		return rows.Err()
	})
	if err != nil {
		rep.problems = append(rep.problems, fmt.Sprintf("counting the events: %v", err))
	}
	low, cursorRows, cerr := f.cursors(cctx)
	var lat []time.Duration
	var maxSeq int64
	f.mu.Lock()
	for id, sub := range posts {
		switch n := counts[id]; {
		case n == 0:
			rep.lost++
			rep.problems = append(rep.problems, fmt.Sprintf("post %s (%q) has no post.create event in the log", id, sub.text))
			continue
		case n > 1:
			rep.duplicated++
			rep.problems = append(rep.problems, fmt.Sprintf("post %s has %d post.create events, want 1", id, n))
		default:
			rep.exactlyOnce++
		}
		maxSeq = max(maxSeq, f.seq[id])
		if at, ok := f.passed[id]; ok {
			rep.final++
			if !sub.unknown && !sub.failed { // those are watched from settle on only
				lat = append(lat, at.Sub(sub.sent))
			}
			if at.After(rep.settled) {
				rep.settled = at
			}
		} else {
			rep.lost++
			rep.problems = append(rep.problems, fmt.Sprintf("post %s's event (seq %d) not passed by every cursor: %s", id, f.seq[id], strings.Join(cursorRows, ", ")))
		}
	}
	f.mu.Unlock()
	if cerr != nil {
		rep.problems = append(rep.problems, fmt.Sprintf("reading the cursors: %v", cerr))
	} else if low < 0 {
		rep.problems = append(rep.problems, fmt.Sprintf("a dispatcher cursor of %v is missing: %s", dispatchCursors, strings.Join(cursorRows, ", ")))
	}
	rep.notes = append(rep.notes, latencyNote("from POST to every cursor past the event (polled every 200 ms; accepted posts)", lat),
		fmt.Sprintf("cursors at the end (newest event of the family: seq %d): %s", maxSeq, strings.Join(cursorRows, ", ")))
	return rep
}

// mapFound maps the posts the poller does not know (unknown posts found
// at settle) to their events, and marks them passed when the cursors are.
func (f *dispatcherFamily) mapFound(ctx context.Context, posts map[string]*evSub) {
	var ids []int64
	f.mu.Lock()
	for id := range posts {
		if _, ok := f.seq[id]; !ok {
			n, _ := strconv.ParseInt(id, 10, 64)
			ids = append(ids, n)
		}
	}
	f.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	rows, err := f.pool.Query(ctx, `SELECT subject_id, min(seq) FROM events WHERE type = 'post.create' AND subject_id = ANY($1) GROUP BY subject_id`, ids)
	if err != nil {
		return
	}
	defer rows.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for rows.Next() {
		var id, seq int64
		if rows.Scan(&id, &seq) == nil {
			f.seq[strconv.FormatInt(id, 10)] = seq
		}
	}
}

// ---------------------------------------------------------------------------
// webhooks

// webhooksFamily registers a receiver as a webhook linked to the filtered
// stream and checks what it receives.
type webhooksFamily struct {
	work    evWork
	pool    *pgxpool.Pool
	recv    *receiver
	webhook string
}

func (f *webhooksFamily) name() string { return "webhooks" }

func (f *webhooksFamily) prepare(ctx context.Context, env *matrixEnv) error {
	pool, err := pgxpool.New(context.Background(), env.s.dbURL)
	if err != nil {
		return err
	}
	f.pool = pool
	env.s.t.Cleanup(pool.Close)
	f.recv = newReceiver(env.s.t, env.s.creds.ConsumerSecret)
	if err := addRule(ctx, env, f.work.word, "webhook family"); err != nil {
		return err
	}
	status, raw, _, err := evRetry(ctx, env, http.MethodPost, "/2/webhooks", map[string]any{"url": f.recv.url()})
	if err != nil || status != http.StatusOK {
		return fmt.Errorf("POST /2/webhooks %s: %d %s %v", f.recv.url(), status, raw, err)
	}
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.Data.ID == "" {
		return fmt.Errorf("POST /2/webhooks answered %s", raw)
	}
	f.webhook = created.Data.ID
	status, raw, _, err = evRetry(ctx, env, http.MethodPost, "/2/tweets/search/webhooks/"+f.webhook, nil)
	if err != nil || status != http.StatusOK {
		return fmt.Errorf("link webhook %s to the filtered stream: %d %s %v", f.webhook, status, raw, err)
	}
	return nil
}

// evRetry is an app-only request that tries each replica in turn until
// one answers (prepare's requests, before any fault; at most 30 s).
func evRetry(ctx context.Context, env *matrixEnv, method, path string, body any) (int, []byte, bool, error) {
	var (
		status int
		raw    []byte
		sent   bool
		err    error
	)
	for i := 0; i < 60; i++ {
		status, raw, sent, err = evDo(ctx, env, false, env.api(i), method, path, body)
		if err == nil && status < 500 {
			return status, raw, sent, nil
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
	return status, raw, sent, err
}

// addRule adds the filtered-stream rule word (tag tag) to the app.
func addRule(ctx context.Context, env *matrixEnv, word, tag string) error {
	status, raw, _, err := evRetry(ctx, env, http.MethodPost, "/2/tweets/search/stream/rules", map[string]any{"add": []ruleSpec{{Value: word, Tag: tag}}})
	if err != nil || (status != http.StatusCreated && status != http.StatusOK) {
		return fmt.Errorf("add rule %q: %d %s %v", word, status, raw, err)
	}
	return nil
}

func (f *webhooksFamily) run(ctx context.Context, env *matrixEnv) { f.work.run(ctx, env) }

func (f *webhooksFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	rep := familyReport{family: f.name()}
	posts, err := f.work.resolve(ctx, f.pool, &rep)
	if err != nil {
		rep.problems = append(rep.problems, fmt.Sprintf("resolving the unknown posts: %v", err))
	}
	// got: post id -> its deliveries (arrival times, event ids).
	type arrivals struct {
		at     []time.Time
		events map[string]int
	}
	var got map[string]*arrivals
	collect := func() int {
		got = map[string]*arrivals{}
		for _, d := range f.recv.deliveries() {
			data, _ := d.Body["data"].(map[string]any)
			id, _ := data["id"].(string)
			if posts[id] == nil {
				continue
			}
			a := got[id]
			if a == nil {
				a = &arrivals{events: map[string]int{}}
				got[id] = a
			}
			a.at = append(a.at, d.At)
			a.events[d.EventID]++
		}
		return len(got)
	}
	for collect() < len(posts) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-f.recv.arrivals:
		case <-time.After(250 * time.Millisecond):
		}
	}
	var lat []time.Duration
	redelivered := 0
	for id, sub := range posts {
		a := got[id]
		if a == nil {
			rep.lost++
			rep.problems = append(rep.problems, fmt.Sprintf("post %s (%q) never delivered to webhook %s", id, sub.text, f.webhook))
			continue
		}
		rep.final++
		first := slices.MinFunc(a.at, func(x, y time.Time) int { return x.Compare(y) })
		lat = append(lat, first.Sub(sub.sent))
		if first.After(rep.settled) {
			rep.settled = first
		}
		if len(a.at) == 1 {
			rep.exactlyOnce++
		} else {
			rep.duplicated++
			redelivered += len(a.at) - 1
		}
		if len(a.events) != 1 {
			rep.problems = append(rep.problems, fmt.Sprintf("post %s delivered under %d event ids %v, want one", id, len(a.events), a.events))
		}
	}
	crcs, bad := f.recv.counts()
	if bad > 0 {
		rep.problems = append(rep.problems, fmt.Sprintf("%d deliveries carried a wrong x-twitter-webhooks-signature", bad))
	}
	rep.notes = append(rep.notes, latencyNote("from POST to the first delivery", lat),
		fmt.Sprintf("%d posts delivered more than once (%d extra copies): delivery is at least once, a worker killed between a POST and its record sends it again; receivers de-duplicate on x-aviary-event-id (docs/webhooks.md)", rep.duplicated, redelivered),
		fmt.Sprintf("receiver: %d deliveries in all, %d CRC checks, %d bad signatures", len(f.recv.deliveries()), crcs, bad))
	return rep
}

// ---------------------------------------------------------------------------
// streams

// streamsFamily holds a filtered stream (or, with activity, the activity
// stream) that reconnects, to the next replica, with backfill covering the
// time it was away.
type streamsFamily struct {
	activity bool
	work     evWork
	pool     *pgxpool.Pool

	mu       sync.Mutex
	arrived  map[string][]time.Time // post id -> arrival times, over every connection
	conns    int                    // connections opened (200)
	opened   []string               // when each reconnection opened, and where
	refusals map[int]int            // refused connection attempts by status (0: no answer)
	gaps     []time.Duration        // from losing a connection to the next one open
	backfill []int                  // backfill_minutes asked on each reconnection
	ends     []string               // why connections ended
	stop     context.CancelFunc
	done     chan struct{}
}

func (f *streamsFamily) name() string {
	if f.activity {
		return "activity"
	}
	return "streams"
}

// path is the stream the family holds.
func (f *streamsFamily) path() string {
	if f.activity {
		return "/2/activity/stream"
	}
	return "/2/tweets/search/stream"
}

// postID is the post a stream line carries: a filtered stream's post, an
// activity stream's post.create payload ("" for anything else).
func (f *streamsFamily) postID(m streamMsg) string {
	if !f.activity {
		return m.id()
	}
	if m.Data["event_type"] != "post.create" {
		return ""
	}
	payload, _ := m.Data["payload"].(map[string]any)
	id, _ := payload["id"].(string)
	return id
}

// subscribe adds the app's activity subscription to the demo user's
// post.create events (stream only: no webhook).
func subscribe(ctx context.Context, env *matrixEnv) error {
	body := map[string]any{"event_type": "post.create", "filter": map[string]any{"user_id": env.s.creds.UserID}}
	status, raw, _, err := evRetry(ctx, env, http.MethodPost, "/2/activity/subscriptions", body)
	if err != nil || (status != http.StatusCreated && status != http.StatusOK) {
		return fmt.Errorf("subscribe to post.create: %d %s %v", status, raw, err)
	}
	return nil
}

// streamKeepAlive is the stack's AVIARY_STREAM_KEEPALIVE (default 20 s).
func streamKeepAlive(env *matrixEnv) time.Duration {
	ka := 20 * time.Second
	for _, kv := range env.s.env {
		if v, ok := strings.CutPrefix(kv, "AVIARY_STREAM_KEEPALIVE="); ok {
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				ka = d
			}
		}
	}
	return ka
}

func (f *streamsFamily) prepare(ctx context.Context, env *matrixEnv) error {
	pool, err := pgxpool.New(context.Background(), env.s.dbURL)
	if err != nil {
		return err
	}
	f.pool = pool
	env.s.t.Cleanup(pool.Close)
	f.arrived, f.refusals = map[string][]time.Time{}, map[int]int{}
	if f.activity {
		err = subscribe(ctx, env)
	} else {
		err = addRule(ctx, env, f.work.word, "stream family")
	}
	if err != nil {
		return err
	}
	// The first connection, on the last replica, before any post.
	first, status, err := dialStream(env, env.api(len(env.apis)-1), f.path(), 0)
	if err != nil || status != http.StatusOK {
		return fmt.Errorf("open %s at %s: %d %v", f.path(), env.api(len(env.apis)-1), status, err)
	}
	f.conns++
	sctx, cancel := context.WithCancel(context.Background())
	f.stop, f.done = cancel, make(chan struct{})
	go f.hold(sctx, env, first)
	return nil
}

// dialStream opens GET path (a stream) at base (backfill minutes when >
// 0) without a test: errors are returned. A refused connection's status
// is returned with a nil conn.
func dialStream(env *matrixEnv, base, path string, backfill int) (*streamConn, int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	u := base + path
	if backfill > 0 {
		u += "?" + url.Values{"backfill_minutes": {strconv.Itoa(backfill)}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+env.s.creds.BearerToken)
	// No overall timeout (the stream is long); a bound on the answer's
	// headers so a frozen replica costs a bounded time.
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 15 * time.Second, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // drained to close
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode, nil
	}
	c := &streamConn{Status: resp.StatusCode, Header: resp.Header, msgs: make(chan streamMsg, 1024),
		done: make(chan struct{}), cancel: cancel, got: map[string]int{}}
	go c.read(resp.Body)
	return c, resp.StatusCode, nil
}

// hold reads conn, and when it ends (or stalls: no post nor keep-alive
// for three keep-alive intervals) reconnects to the next replica with
// backfill_minutes covering the gap since the last sign of life, until
// ctx ends.
func (f *streamsFamily) hold(ctx context.Context, env *matrixEnv, conn *streamConn) {
	defer close(f.done)
	stall := max(3*streamKeepAlive(env), 5*time.Second)
	turn := len(env.apis) - 1
	for {
		alive := time.Now()
		kas := conn.keepAliveCount()
		why := ""
		for why == "" {
			select {
			case <-ctx.Done():
				conn.close()
				return
			case m, open := <-conn.msgs:
				if !open {
					why = fmt.Sprintf("ended: %v", conn.ended())
					break
				}
				alive = time.Now()
				if id := f.postID(m); id != "" {
					f.mu.Lock()
					f.arrived[id] = append(f.arrived[id], m.At)
					f.mu.Unlock()
				} else if len(m.Errors) > 0 {
					why = "error payload: " + string(m.Raw)
				}
			case <-time.After(250 * time.Millisecond):
				if n := conn.keepAliveCount(); n != kas {
					kas, alive = n, time.Now()
				} else if time.Since(alive) > stall {
					why = fmt.Sprintf("stalled (nothing for %v)", time.Since(alive).Round(time.Millisecond))
				}
			}
		}
		conn.close()
		f.mu.Lock()
		f.ends = append(f.ends, time.Now().Format("15:04:05.000")+" "+why)
		f.mu.Unlock()
		lost := alive
		for {
			turn++
			minutes := min(5, int(time.Since(lost)/time.Minute)+1)
			c, status, err := dialStream(env, env.api(turn), f.path(), minutes)
			if c != nil {
				f.mu.Lock()
				f.conns++
				f.gaps = append(f.gaps, time.Since(lost))
				f.opened = append(f.opened, time.Now().Format("15:04:05.000")+" at "+env.api(turn))
				f.backfill = append(f.backfill, minutes)
				f.mu.Unlock()
				conn = c
				break
			}
			_ = err
			f.mu.Lock()
			f.refusals[status]++
			f.mu.Unlock()
			// A killed replica's connection counts toward the app's limit
			// until its heartbeat is 30 s old (docs/streams.md): a 429
			// until then.
			sleepCtx(ctx, time.Second)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

func (f *streamsFamily) run(ctx context.Context, env *matrixEnv) { f.work.run(ctx, env) }

func (f *streamsFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	defer func() { f.stop(); <-f.done }()
	rep := familyReport{family: f.name()}
	posts, err := f.work.resolve(ctx, f.pool, &rep)
	if err != nil {
		rep.problems = append(rep.problems, fmt.Sprintf("resolving the unknown posts: %v", err))
	}
	// missing counts the posts not yet seen: all of them, and those the
	// client was told were accepted (a post answered 5xx that exists anyway
	// is waited for a minute at most: see below).
	missing := func() (all, accepted int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for id, sub := range posts {
			if len(f.arrived[id]) == 0 {
				all++
				if !sub.failed {
					accepted++
				}
			}
		}
		return all, accepted
	}
	graceForFailed := time.Now().Add(time.Minute)
	for ctx.Err() == nil {
		all, accepted := missing()
		if all == 0 || (accepted == 0 && time.Now().After(graceForFailed)) {
			break
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var lat []time.Duration
	copies := 0
	for id, sub := range posts {
		at := f.arrived[id]
		if len(at) == 0 && sub.failed {
			// Answered 5xx, so not accepted as far as its client knows, yet
			// created (a commit whose outcome the API could not learn in
			// time, docs/outages.md): reported, not failed. Seen once in
			// CI, not understood yet (docs/fault-matrix-events.md).
			rep.notes = append(rep.notes, fmt.Sprintf("post %s (%q) answered 5xx, created anyway, never reached the stream", id, sub.text))
			continue
		}
		if len(at) == 0 {
			rep.lost++
			rep.problems = append(rep.problems, fmt.Sprintf("post %s (%q, sent %s) never reached the stream (%s)",
				id, sub.text, sub.sent.Format("15:04:05.000"), f.eventOf(ctx, id)))
			continue
		}
		rep.final++
		first := slices.MinFunc(at, func(x, y time.Time) int { return x.Compare(y) })
		lat = append(lat, first.Sub(sub.sent))
		if first.After(rep.settled) {
			rep.settled = first
		}
		if len(at) == 1 {
			rep.exactlyOnce++
		} else {
			rep.duplicated++
			copies += len(at) - 1
		}
	}
	var gaps []time.Duration
	gaps = append(gaps, f.gaps...)
	rep.notes = append(rep.notes, latencyNote("from POST to the first arrival on a stream", lat),
		fmt.Sprintf("%d connections opened, refused attempts by status %v (0: no answer), reconnection gaps %v with backfill_minutes %v", f.conns, f.refusals, roundAll(gaps), f.backfill),
		fmt.Sprintf("connections ended: %q; reconnections opened: %q", f.ends, f.opened),
		fmt.Sprintf("%d posts seen more than once (%d extra copies): backfill after a reconnection re-sends what the live stream sent, as the platform documents (docs/streams.md)", rep.duplicated, copies))
	return rep
}

// eventOf describes post id's post.create event (seq, created_at), for a
// report.
func (f *streamsFamily) eventOf(ctx context.Context, id string) string {
	var seq int64
	var at time.Time
	post, _ := strconv.ParseInt(id, 10, 64)
	err := f.pool.QueryRow(ctx, `SELECT seq, created_at FROM events WHERE type = 'post.create' AND subject_id = $1`, post).Scan(&seq, &at)
	if err != nil {
		return "its event: " + err.Error()
	}
	return fmt.Sprintf("event %d created %s", seq, at.Format("15:04:05.000"))
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond)
	}
	return out
}

// ---------------------------------------------------------------------------
// The families' own proof, until the matrix runs them.

// TestEventFamiliesUnderKills runs the four event families against two API
// replicas and two workers while, in about 40 s, each worker is SIGKILLed
// in turn (and replaced) and the API replica holding the stream is
// SIGKILLed and started again on its address; then it lets them settle
// (90 s at most) and fails on any problem a family reports. The stream
// limit is the default one connection per app, so the stream's reconnection
// waits out the killed replica's heartbeat (about 30 s) and backfills.
func TestEventFamiliesUnderKills(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 0,
		env: append(slices.Clone(webhookEnv), "AVIARY_STREAM_KEEPALIVE=1s")})
	port := strconv.Itoa(freePort(t))
	replica := s.startReplicaAt(port)
	workers := []*exec.Cmd{s.start("worker", nil), s.start("worker", nil)}
	env := &matrixEnv{s: s, apis: []string{s.baseURL, "http://127.0.0.1:" + port},
		client: &http.Client{Timeout: 10 * time.Second}, webhookAllow: "127.0.0.1:*"}
	waitCursors(t, s, 30*time.Second)

	fams := eventFamilies()
	for _, f := range fams {
		if err := f.prepare(context.Background(), env); err != nil {
			t.Fatalf("prepare %s: %v", f.name(), err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	var wg sync.WaitGroup
	for _, f := range fams {
		wg.Go(func() { f.run(ctx, env) })
	}
	start := time.Now()
	at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
	at(6 * time.Second)
	kill(t, workers[0])
	t.Logf("%v: worker 0 SIGKILLed", time.Since(start).Round(time.Millisecond))
	workers[0] = s.start("worker", nil)
	at(14 * time.Second)
	kill(t, replica)
	t.Logf("%v: API replica %s SIGKILLed", time.Since(start).Round(time.Millisecond), env.apis[1])
	at(20 * time.Second)
	replica = s.startReplicaAt(port)
	t.Logf("%v: API replica %s ready again", time.Since(start).Round(time.Millisecond), env.apis[1])
	at(26 * time.Second)
	kill(t, workers[1])
	t.Logf("%v: worker 1 SIGKILLed", time.Since(start).Round(time.Millisecond))
	workers[1] = s.start("worker", nil)
	wg.Wait()
	cancel()
	ran := time.Now()

	// Two posts whose answers were lost, as a killed replica leaves them:
	// one committed (made through the store, with its event), one never.
	// Settle must find the first by its text and hold it to the
	// invariants, and pass over the second.
	disp := fams[0].(*dispatcherFamily)
	lostAnswer := disp.work.word + " post whose answer was lost"
	s.storePost(s.appID(), lostAnswer)
	disp.work.mu.Lock()
	disp.work.submitted += 2
	disp.work.subs = append(disp.work.subs, &evSub{text: lostAnswer, sent: time.Now(), unknown: true},
		&evSub{text: disp.work.word + " post never created", sent: time.Now(), unknown: true})
	disp.work.mu.Unlock()

	sctx, scancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer scancel()
	var reports []familyReport
	for _, f := range fams {
		reports = append(reports, f.settle(sctx, env))
	}
	for _, r := range reports {
		settled := "never"
		if !r.settled.IsZero() {
			settled = fmt.Sprintf("%v after the run ended", r.settled.Sub(ran).Round(time.Millisecond))
		}
		t.Logf("%s: submitted %d, accepted %d, unknown %d, final %d, exactly once %d, lost %d, duplicated %d, settled %s",
			r.family, r.submitted, r.accepted, r.unknown, r.final, r.exactlyOnce, r.lost, r.duplicated, settled)
		for _, n := range r.notes {
			t.Logf("  %s: %s", r.family, n)
		}
		if r.accepted == 0 {
			t.Errorf("%s: nothing accepted", r.family)
		}
		if r.family == "dispatcher" && r.final < r.accepted+1 {
			t.Errorf("dispatcher: %d final of %d accepted: the unknown post that exists was not held to the invariants", r.final, r.accepted)
		}
		for _, p := range r.problems {
			t.Errorf("%s: %s", r.family, p)
		}
	}
}

// startReplicaAt starts an API replica on port (no sandbox listener) and
// waits until it is ready: a replica started again after a kill keeps its
// address, as it does behind a load balancer.
func (s *stack) startReplicaAt(port string, extraEnv ...string) *exec.Cmd {
	s.t.Helper()
	base := "http://127.0.0.1:" + port
	cmd := s.start("api", append([]string{"AVIARY_HTTP_ADDR=127.0.0.1:" + port, "AVIARY_SANDBOX_ADDR=off"}, extraEnv...))
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("replica %s not ready after 30 s", base)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitCursors waits until the workers' dispatchers have claimed every
// cursor of dispatchCursors (their rows exist).
func waitCursors(t *testing.T, s *stack, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var n int
		s.query(t, func(conn *pgx.Conn) error {
			return conn.QueryRow(context.Background(), `SELECT count(*) FROM event_cursors WHERE name = ANY($1)`, dispatchCursors).Scan(&n)
		})
		if n == len(dispatchCursors) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the cursors %v claimed after %v", n, dispatchCursors, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
