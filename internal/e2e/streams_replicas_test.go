package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/ops/posts"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// startReplica starts another `aviary api` process of the stack on its own
// port (no sandbox listener) and returns its base URL once it is ready.
func (s *stack) startReplica(extraEnv ...string) (base string, cmd *exec.Cmd) {
	s.t.Helper()
	port := strconv.Itoa(freePort(s.t))
	return "http://127.0.0.1:" + port, s.startReplicaAt(port, extraEnv...)
}

// kill ends a process with SIGKILL, as a crash or an OOM kill does.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", cmd.Process.Pid, err)
	}
	_ = cmd.Wait()
}

// TestStreamAcrossReplicas runs two API replicas (A and B) and two worker
// replicas on one PostgreSQL and Redis. A stream held on A receives a post
// made through B; it is listed through B (GET /2/connections) and
// terminated through B by its UUID, ending with the platform's disconnect
// payload, and then listed as inactive with its disconnection. The
// connection limit (2 here) holds across the replicas, DELETE
// /2/connections/all through B ends streams held on both, and their slots
// are free at once. Then each worker in turn is SIGKILLed: the post made
// right after still reaches the stream (the survivor's dispatcher takes
// the cursor's lease), and the stream has had its keep-alives meanwhile.
func TestStreamAcrossReplicas(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", env: []string{"AVIARY_STREAM_KEEPALIVE=1s", "AVIARY_STREAM_CONNECTIONS=2"}})
	baseA := s.baseURL
	baseB, _ := s.startReplica()
	workers := []*exec.Cmd{s.start("worker", nil), s.start("worker", nil)}
	tok := s.demoToken()
	bearer := s.creds.BearerToken
	ruleID := s.addRules(baseB, bearer, ruleSpec{Value: "swift", Tag: "swifts"})["swift"]
	fields := url.Values{"tweet.fields": {"author_id,created_at"}}

	onA := openStream(t, http.DefaultClient, baseA, bearer, fields)
	if onA.Status != http.StatusOK {
		t.Fatalf("stream on A: %d %s", onA.Status, onA.Raw)
	}
	id := s.mustPostAt(tok, baseB, "A swift over the roofs")
	if m := onA.waitPost(id, 10*time.Second); len(m.MatchingRules) != 1 || m.MatchingRules[0].ID != ruleID || m.MatchingRules[0].Tag != "swifts" {
		t.Errorf("matching_rules %+v, want [{%s swifts}]", m.MatchingRules, ruleID)
	}
	listed := s.waitConnections(baseB, "active", 1, 5*time.Second)[0]
	uuid, _ := listed["id"].(string)
	if uuid == "" || listed["client_ip"] != "127.0.0.1" || listed["connected_at"] == nil || listed["disconnected_at"] != nil || listed["endpoint_name"] == nil {
		t.Errorf("the stream on A as listed through B: %v", listed)
	}

	killed := s.bearerAt(baseB, http.MethodDelete, "/2/connections", map[string]any{"uuids": []string{uuid}})
	if data, _ := killed.Body["data"].(map[string]any); killed.Status != http.StatusOK || data["successful_kills"] != float64(1) || data["failed_kills"] != float64(0) {
		t.Errorf("DELETE /2/connections {uuids} through B = %d %s", killed.Status, killed.Raw)
	}
	wantDisconnectPayload(t, "stream on A terminated through B", onA.waitEnd(5*time.Second))
	past := s.waitConnections(baseB, "inactive", 1, 5*time.Second)[0]
	if past["id"] != uuid || past["disconnected_at"] == nil || past["disconnect_reason"] == nil || past["disconnect_reason"] == "" {
		t.Errorf("the terminated stream as listed through B: %v", past)
	}

	checkLimitAndTerminateAll(t, s, baseA, baseB, fields)

	st, opened := openStream(t, http.DefaultClient, baseA, bearer, fields), time.Now()
	if st.Status != http.StatusOK {
		t.Fatalf("stream after DELETE /2/connections/all: %d %s (slots not freed?)", st.Status, st.Raw)
	}
	for i := range workers {
		kill(t, workers[i])
		id := s.mustPostAt(tok, baseB, fmt.Sprintf("A swift again, worker %d down", i))
		start := time.Now()
		st.waitPost(id, 60*time.Second)
		t.Logf("post made with worker %d SIGKILLed reached the stream after %v (the cursor's lease is 15 s)", i, time.Since(start))
		if i == 0 { // a replacement, so one worker lives while the other is killed
			workers[i] = s.start("worker", nil)
		}
	}
	if n := st.keepAliveCount(); n == 0 {
		t.Errorf("no \\r\\n keep-alive in %v of an idle stream (AVIARY_STREAM_KEEPALIVE=1s)", time.Since(opened))
	}
}

// checkLimitAndTerminateAll opens the app's two allowed streams, one on
// each replica; a third, on either, is refused with TooManyConnections.
// DELETE /2/connections/all through B ends both.
func checkLimitAndTerminateAll(t *testing.T, s *stack, baseA, baseB string, fields url.Values) {
	t.Helper()
	bearer := s.creds.BearerToken
	a := openStream(t, http.DefaultClient, baseA, bearer, fields)
	b := openStream(t, http.DefaultClient, baseB, bearer, fields)
	if a.Status != http.StatusOK || b.Status != http.StatusOK {
		t.Fatalf("two streams within the limit: %d %s / %d %s", a.Status, a.Raw, b.Status, b.Raw)
	}
	third := openStream(t, http.DefaultClient, baseA, bearer, fields)
	var body map[string]any
	_ = json.Unmarshal(third.Raw, &body)
	if third.Status != http.StatusTooManyRequests || body["connection_issue"] != "TooManyConnections" || body["title"] != "ConnectionException" {
		t.Errorf("a third stream of the app (limit 2) = %d %s, want 429 TooManyConnections", third.Status, third.Raw)
	}
	s.waitConnections(baseB, "active", 2, 5*time.Second)
	all := s.bearerAt(baseB, http.MethodDelete, "/2/connections/all", nil)
	if data, _ := all.Body["data"].(map[string]any); all.Status != http.StatusOK || data["successful_kills"] != float64(2) {
		t.Errorf("DELETE /2/connections/all through B = %d %s, want 2 kills", all.Status, all.Raw)
	}
	wantDisconnectPayload(t, "stream on A after DELETE /2/connections/all", a.waitEnd(5*time.Second))
	wantDisconnectPayload(t, "stream on B after DELETE /2/connections/all", b.waitEnd(5*time.Second))
}

// appID is the demo app's id.
func (s *stack) appID() int64 {
	s.t.Helper()
	var id int64
	s.query(s.t, func(conn *pgx.Conn) error {
		return conn.QueryRow(context.Background(), `SELECT id FROM apps WHERE consumer_key = $1`, s.creds.ConsumerKey).Scan(&id)
	})
	return id
}

// storePost creates a post of the demo user through the operation the API
// creates posts with (ops/posts: one transaction that also appends the
// post's event), for moments the API refuses user-context requests: with
// Redis away the OAuth 1.0a nonce check fails closed (docs/outages.md).
func (s *stack) storePost(appID int64, text string) string {
	s.t.Helper()
	author, err := strconv.ParseInt(s.creds.UserID, 10, 64)
	if err != nil {
		s.t.Fatalf("user id %q: %v", s.creds.UserID, err)
	}
	p, err := posts.Create(context.Background(), s.db, posts.Compose(author, appID, "aviary-demo", text))
	if err != nil {
		s.t.Fatalf("create post through the store: %v", err)
	}
	return strconv.FormatInt(p.ID, 10)
}

// poster creates posts through the API every interval until stopped and
// records the ids of those created (201); refusals (Redis away) are
// counted, not fatal.
type poster struct {
	mu      sync.Mutex
	ids     []string
	refused int
	stop    chan struct{}
	done    chan struct{}
}

func startPoster(s *stack, base, prefix string, every time.Duration) *poster {
	p := &poster{stop: make(chan struct{}), done: make(chan struct{})}
	tok := s.demoToken()
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-time.After(every):
			}
			body, _ := json.Marshal(map[string]any{"text": fmt.Sprintf("%s %d", prefix, i)})
			status, raw, err := s.trySigned(tok, base, http.MethodPost, "/2/tweets", body, "application/json")
			var created struct {
				Data struct{ ID string } `json:"data"`
			}
			p.mu.Lock()
			if err == nil && status == http.StatusCreated && json.Unmarshal(raw, &created) == nil && created.Data.ID != "" {
				p.ids = append(p.ids, created.Data.ID)
			} else {
				p.refused++
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// finish stops the poster and returns the ids created and the refusals.
func (p *poster) finish() ([]string, int) {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids, p.refused
}

// TestStreamRedisRestart restarts the stack's Redis (its own redis-server,
// killed and started again empty on the same address) while a stream is
// open and posts keep coming: through the API before and after (about
// every 50 ms; the API refuses user-context posts while Redis is away) and
// through the store while it is away. The stream stays open, and every post
// created reaches it, possibly twice (the dispatcher publishes again what
// it could not, the replica catches up from the log).
func TestStreamRedisRestart(t *testing.T) {
	t.Parallel()
	redisSrv := storagetest.PrivateRedis(t)
	s := newStackWithRedisDB(t, stackOptions{driver: "local", workers: 2,
		env: []string{"AVIARY_REDIS_URL=redis://" + redisSrv.Addr + "/0", "AVIARY_STREAM_KEEPALIVE=1s"}}, 0)
	s.addRules(s.baseURL, s.creds.BearerToken, ruleSpec{Value: "plover", Tag: "plovers"})
	st := openStream(t, http.DefaultClient, s.baseURL, s.creds.BearerToken, nil)
	if st.Status != http.StatusOK {
		t.Fatalf("stream: %d %s", st.Status, st.Raw)
	}
	first := s.mustPostAt(s.demoToken(), s.baseURL, "plover warm-up")
	st.waitPost(first, 10*time.Second)
	appID := s.appID()

	p := startPoster(s, s.baseURL, "plover through the API", 50*time.Millisecond)
	time.Sleep(time.Second)
	redisSrv.Crash()
	var direct []string
	for i := range 10 {
		direct = append(direct, s.storePost(appID, fmt.Sprintf("plover while Redis is away %d", i)))
		time.Sleep(200 * time.Millisecond)
	}
	redisSrv.Revive()
	time.Sleep(2 * time.Second)
	viaAPI, refused := p.finish()
	after := s.mustPostAt(s.demoToken(), s.baseURL, "plover after the restart")

	want := append(append(append([]string{}, viaAPI...), direct...), after)
	if missing := st.waitIDs(want, 60*time.Second); len(missing) > 0 {
		t.Fatalf("%d of %d posts never reached the stream after the Redis restart: %v (stream ended: %v)", len(missing), len(want), missing, st.ended())
	}
	dups := 0
	for _, n := range st.got {
		if n > 1 {
			dups++
		}
	}
	t.Logf("%d posts through the API (%d refused while Redis was away), %d through the store while it was away: all received, %d of them twice or more",
		len(viaAPI), refused, len(direct), dups)
	if st.ended() != nil {
		t.Errorf("the stream ended during the Redis restart: %v", st.ended())
	}
}
