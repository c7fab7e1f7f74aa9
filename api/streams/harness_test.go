package streams_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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
		b.Hub = startHub(t, db, proxy.Addr(), prefix, "replica-a", o.poll)
		d.Modules.Streams = streams.New(streams.Deps{Store: db, Hub: b.Hub, Log: db, Rules: db, Errors: apierr.Writer{},
			Logger: d.Logger, KeepAlive: o.keepAlive, Connections: o.connections})
	})
	return b
}

// startHub starts a hub on db (its connections, event log and rules) whose
// bus reaches Redis at addr.
func startHub(t *testing.T, db *postgres.DB, addr, prefix, replica string, poll time.Duration) *streams.Hub {
	t.Helper()
	hrc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { hrc.Close() })
	hub := streams.NewHub(streams.HubDeps{Bus: bus.New(hrc, prefix), Log: db, Rules: db, Conns: db, Replica: replica,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: cmp.Or(poll, 200*time.Millisecond), Block: 200 * time.Millisecond})
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
	hub := startHub(t, b.DB, storagetest.RedisAddr(), b.Prefix, name, 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mod := streams.New(streams.Deps{Store: b.DB, Hub: hub, Log: b.DB, Rules: b.DB, Errors: w, Logger: log})
	srv := httptest.NewServer(api.New(api.Deps{Modules: api.Modules{Streams: mod}, Auth: authn, Errors: w, Logger: log}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { // before Close, which waits for the streams
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hub.Stop(ctx)
	})
	return srv, hub
}

// rule stores a stream rule of the app through the rules' store.
func (b *bundle) rule(t *testing.T, appID int64, value, tag string) storage.StreamRule {
	t.Helper()
	got, err := b.DB.AddStreamRules(context.Background(), storage.StreamRuleAdd{AppID: appID,
		Rules: []storage.NewStreamRule{{Value: value, Tag: tag}}, Max: streams.DefaultRulesMax})
	if err != nil || len(got.Created) != 1 {
		t.Fatalf("add rule %q: %+v, %v", value, got, err)
	}
	return got.Created[0]
}

// post creates a post by the author through the API (its post.create
// event is appended by the store) and returns its id.
func (b *bundle) post(t *testing.T, text string) (string, int64) {
	t.Helper()
	id := b.Create(t, "oauth:author", map[string]any{"text": text})
	n, _ := strconv.ParseInt(id, 10, 64)
	return id, n
}

// event is the post.create event the store appended for post id.
func (b *bundle) event(t *testing.T, id int64) events.Event {
	t.Helper()
	evs, err := b.DB.EventsAfter(context.Background(), 0, 10000)
	if err != nil {
		t.Fatalf("read the log: %v", err)
	}
	for _, ev := range evs {
		if ev.Type == events.PostCreate && ev.SubjectID == id {
			return ev
		}
	}
	t.Fatalf("no post.create event for post %d", id)
	return events.Event{}
}

// dispatch does what the dispatcher's stream matcher does for the posts'
// events: matches them against every stored rule (streamrules.NewSet) and
// publishes the matches on the bus. It returns the matches.
func (b *bundle) dispatch(t *testing.T, ids ...int64) []events.Match {
	t.Helper()
	out := b.dispatchMatches(t, ids...)
	if err := b.Bus.PublishMatches(context.Background(), out); err != nil {
		t.Fatalf("publish: %v", err)
	}
	return out
}

// dispatchMatches matches the posts' events against every stored rule, as
// dispatch does, without publishing.
func (b *bundle) dispatchMatches(t *testing.T, ids ...int64) []events.Match {
	t.Helper()
	ctx := context.Background()
	rules, _, err := b.DB.AllStreamRules(ctx)
	if err != nil {
		t.Fatalf("rules: %v", err)
	}
	set := streamrules.NewSet(rules)
	var out []events.Match
	for _, id := range ids {
		m, ok, err := set.MatchEvent(b.event(t, id))
		if err != nil || !ok {
			t.Fatalf("post %d matched no rule (%v)", id, err)
		}
		out = append(out, m)
	}
	return out
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
