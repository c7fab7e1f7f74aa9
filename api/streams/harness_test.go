package streams_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/domain/streamrules"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// bundle is the API on real backends with a started hub whose bus is on
// its own Redis key prefix (through a proxy the test can take down).
type bundle struct {
	*apitest.Bundle
	Hub    *streams.Hub
	Bus    *bus.Bus // the test's own, straight to Redis
	Proxy  *storagetest.Proxy
	RC     *redis.Client
	Prefix string
	Log    *testLog
	Rules  *testRules
}

// options tune the streams module of a bundle.
type options struct {
	keepAlive   time.Duration
	connections int
	// poll is the hub's heartbeat interval (default 200ms).
	poll time.Duration
}

func setupStreams(t *testing.T, o options) *bundle {
	t.Helper()
	rc, prefix := storagetest.RedisPrefix(t)
	proxy := storagetest.NewProxy(t, storagetest.RedisAddr())
	b := &bundle{Bus: bus.New(rc, prefix), Proxy: proxy, RC: rc, Prefix: prefix}
	b.Bundle = apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		dbURL, _ := storagetest.DatabaseURL(db)
		b.Log, b.Rules = newTestLog(t, db, dbURL), newTestRules(t, dbURL)
		b.Hub = startHub(t, db, b.Log, b.Rules, proxy.Addr(), prefix, "replica-a", o.poll)
		d.Modules.Streams = streams.New(streams.Deps{Store: db, Hub: b.Hub, Log: b.Log, Rules: b.Rules, Errors: apierr.Writer{},
			Logger: d.Logger, KeepAlive: o.keepAlive, Connections: o.connections})
	})
	return b
}

// startHub starts a hub on db whose bus reaches Redis at addr.
func startHub(t *testing.T, db *postgres.DB, log events.Log, rules streams.RuleSource, addr, prefix, replica string, poll time.Duration) *streams.Hub {
	t.Helper()
	hrc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { hrc.Close() })
	hub := streams.NewHub(streams.HubDeps{Bus: bus.New(hrc, prefix), Log: log, Rules: rules, Conns: db, Replica: replica,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), NewMatcher: testMatcher, Poll: cmp.Or(poll, 200*time.Millisecond), Block: 200 * time.Millisecond})
	if err := hub.Start(context.Background()); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hub.Stop(ctx)
	})
	return hub
}

// replica serves a second API process on the bundle's database and Redis
// (streams only), with its own started hub: another replica.
func (b *bundle) replica(t *testing.T, name string) (*httptest.Server, *streams.Hub) {
	t.Helper()
	w := apierr.Writer{}
	authn, err := auth.New(b.DB, auth.NewRedisNonceStore(b.RC, b.Prefix+"nonce:"), "", time.Now, w)
	if err != nil {
		t.Fatalf("auth: %v", err)
	}
	hub := startHub(t, b.DB, b.Log, b.Rules, storagetest.RedisAddr(), b.Prefix, name, 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mod := streams.New(streams.Deps{Store: b.DB, Hub: hub, Log: b.Log, Rules: b.Rules, Errors: w, Logger: log})
	srv := httptest.NewServer(api.New(api.Deps{Modules: api.Modules{Streams: mod}, Auth: authn, Errors: w, Logger: log}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { // before Close, which waits for the streams
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hub.Stop(ctx)
	})
	return srv, hub
}

// testMatcher is streamrules' matcher once it matches (the rules helper's
// work), else a stand-in: a rule matches a post whose text holds its value
// (case-insensitive).
func testMatcher(rules []storage.StreamRule) streams.Matcher {
	probe := streamrules.NewSet([]storage.StreamRule{{ID: 1, AppID: 1, Value: "probe"}})
	if len(probe.Match(events.Post{ID: 1, Text: "probe"})) > 0 {
		return streamrules.NewSet(rules)
	}
	return substringMatcher(rules)
}

type substringMatcher []storage.StreamRule

func (s substringMatcher) Match(p events.Post) []events.RuleHit {
	var hits []events.RuleHit
	for _, r := range s {
		if strings.Contains(strings.ToLower(p.Text), strings.ToLower(r.Value)) {
			hits = append(hits, events.RuleHit{AppID: r.AppID, RuleID: r.ID, Tag: r.Tag})
		}
	}
	return hits
}

// testLog is the event log of the test database: storage/postgres.DB once
// it implements events.Log (the event log's branch), else a reader of the
// events table as migration 0024 shapes it, created here when missing.
type testLog struct {
	events.Log
	pool *pgxpool.Pool
}

const eventsDDL = `CREATE SEQUENCE IF NOT EXISTS events_seq AS bigint;
CREATE TABLE IF NOT EXISTS events (seq bigint PRIMARY KEY, type text NOT NULL, app_id bigint NOT NULL DEFAULT 0,
  user_id bigint NOT NULL DEFAULT 0, subject_id bigint NOT NULL DEFAULT 0, payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp())`

func newTestLog(t *testing.T, db *postgres.DB, dbURL string) *testLog {
	t.Helper()
	pool := storagetest.BarePool(t, dbURL)
	if _, err := pool.Exec(context.Background(), eventsDDL); err != nil {
		t.Fatalf("events table: %v", err)
	}
	l := &testLog{pool: pool}
	if real, ok := any(db).(events.Log); ok {
		l.Log = real
	} else {
		l.Log = sqlLog{pool}
	}
	return l
}

// appendPost appends a post.create event for post id (text by the author)
// and returns its seq.
func (l *testLog) appendPost(t *testing.T, id int64, text string, appID int64) int64 {
	t.Helper()
	payload, _ := json.Marshal(events.Post{ID: id, Text: text, AppID: appID, CreatedAt: time.Now()})
	var seq int64
	err := l.pool.QueryRow(context.Background(), `INSERT INTO events (seq, type, app_id, subject_id, payload)
		VALUES (nextval('events_seq'), $1, $2, $3, $4) RETURNING seq`, string(events.PostCreate), appID, id, payload).Scan(&seq)
	if err != nil {
		t.Fatalf("append event: %v", err)
	}
	return seq
}

// sqlLog reads the events table (test stand-in of storage/postgres.DB's
// events.Log).
type sqlLog struct{ pool *pgxpool.Pool }

func (l sqlLog) EventsAfter(ctx context.Context, after int64, limit int) ([]events.Event, error) {
	return l.read(ctx, `seq > $1`, []any{after}, limit)
}

func (l sqlLog) EventsSince(ctx context.Context, since time.Time, after int64, limit int) ([]events.Event, error) {
	return l.read(ctx, `seq > $1 AND created_at >= $2`, []any{after, since}, limit)
}

func (l sqlLog) read(ctx context.Context, where string, args []any, limit int) ([]events.Event, error) {
	rows, err := l.pool.Query(ctx, `SELECT seq, type, app_id, user_id, subject_id, payload, created_at FROM events WHERE `+where+
		fmt.Sprintf(` ORDER BY seq LIMIT %d`, limit), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (events.Event, error) {
		var e events.Event
		err := r.Scan(&e.Seq, &e.Type, &e.AppID, &e.UserID, &e.SubjectID, &e.Payload, &e.CreatedAt)
		return e, err
	})
}

func (l sqlLog) EventHead(ctx context.Context) (int64, error) {
	var head int64
	err := l.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&head)
	return head, err
}

// testRules are stream rules in a table of the test's own (the rules
// helper's stream_rules and its store are on another branch).
type testRules struct{ pool *pgxpool.Pool }

func newTestRules(t *testing.T, dbURL string) *testRules {
	t.Helper()
	pool := storagetest.BarePool(t, dbURL)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE test_stream_rules (id bigint PRIMARY KEY, app_id bigint NOT NULL,
		value text NOT NULL, tag text NOT NULL DEFAULT '', created_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatalf("rules table: %v", err)
	}
	return &testRules{pool}
}

func (r *testRules) add(t *testing.T, id, appID int64, value, tag string) {
	t.Helper()
	if _, err := r.pool.Exec(context.Background(), `INSERT INTO test_stream_rules (id, app_id, value, tag) VALUES ($1, $2, $3, $4)`, id, appID, value, tag); err != nil {
		t.Fatalf("add rule: %v", err)
	}
}

func (r *testRules) StreamRulesOf(ctx context.Context, appIDs []int64) ([]storage.StreamRule, error) {
	rows, err := r.pool.Query(ctx, `SELECT id, app_id, value, tag, created_at FROM test_stream_rules WHERE app_id = ANY($1) ORDER BY app_id, id`, appIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[storage.StreamRule])
}

// streamClient is an open stream: its lines (keep-alives as "") arrive
// on Lines, closed at the end of the stream.
type streamClient struct {
	Resp   *http.Response
	Lines  chan string
	cancel context.CancelFunc
}

// open connects to the stream at base+path with the app's bearer token.
func open(t *testing.T, base, path, bearer string) *streamClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	req.Header.Set("Authorization", bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open stream: %v", err)
	}
	s := &streamClient{Resp: resp, Lines: make(chan string, 100), cancel: cancel}
	t.Cleanup(s.Close)
	if resp.StatusCode != 200 {
		return s
	}
	go func() {
		defer close(s.Lines)
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			s.Lines <- strings.TrimSuffix(line, "\r\n")
		}
	}()
	return s
}

// Close hangs up.
func (s *streamClient) Close() {
	s.cancel()
	s.Resp.Body.Close()
}

// next is the next line that is not a keep-alive; "" and false when the
// stream ended or within passed.
func (s *streamClient) next(t *testing.T, within time.Duration) (string, bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line, ok := <-s.Lines:
			if !ok {
				return "", false
			}
			if line != "" {
				return line, true
			}
		case <-deadline:
			return "", false
		}
	}
}

// ended reports whether the stream ends within d.
func (s *streamClient) ended(d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-s.Lines:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func decode(t *testing.T, line string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("stream line %q: %v", line, err)
	}
	return v
}

// call sends a request to the server at base (as apitest.Bundle.Call).
func call(t *testing.T, base, method, path, authz, body string) apitest.Reply {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", authz)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := apitest.Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}
