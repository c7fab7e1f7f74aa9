package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The filtered stream's benchmarks (issue 26, docs/benchmarks.md "The event
// half"): how long a post takes from POST /2/tweets to a stream with 1,000
// rules, and how many open streams one API replica holds and at what
// memory. scripts/bench runs them with the dispatcher's benchmark
// (workers/dispatch) and the matcher's (domain/streamrules).
//
//	go test ./internal/e2e -run '^$' -bench 'StreamLatency' -benchtime 200x
//	BENCH_STREAM_CONNECTIONS=10000 go test ./internal/e2e -run '^$' -bench 'StreamConnections' -benchtime 1x

// streamBenchEnv are the settings of a stream benchmark's processes: rate
// limits and the day's post limits out of the way (evaluated, never
// refusing).
func streamBenchEnv(extra ...string) []string {
	env := []string{"AVIARY_RATE_LIMIT_SCALE=" + benchEnv("BENCH_RATE_LIMIT_SCALE", "1000000"),
		"AVIARY_POSTS_USER_24H_LIMIT=1000000", "AVIARY_POSTS_APP_24H_LIMIT=1000000", "AVIARY_LOG_LEVEL=warn"}
	return benchAviaryEnv(append(env, extra...)...)
}

// benchRules are n-1 rules that the benchmark's posts do not match, of the
// kinds applications write (terms, phrases, hashtags, mentions, from:,
// conjunctions with negations and lang:), and last the rule they match.
func benchRules(n int) []ruleSpec {
	rules := make([]ruleSpec, 0, n)
	for i := 0; i < n-1; i++ {
		var v string
		switch i % 6 {
		case 0:
			v = fmt.Sprintf("falcon%d", i)
		case 1:
			v = fmt.Sprintf(`"peregrine %d sighting"`, i)
		case 2:
			v = fmt.Sprintf("#raptor%d", i)
		case 3:
			v = fmt.Sprintf("from:birder%d", i)
		case 4:
			v = fmt.Sprintf("(osprey%d OR kite%d) -is:retweet", i, i)
		default:
			v = fmt.Sprintf("harrier%d lang:fr -@owler%d", i, i)
		}
		rules = append(rules, ruleSpec{Value: v, Tag: "noise " + strconv.Itoa(i)})
	}
	return append(rules, ruleSpec{Value: "latencyprobe #bench", Tag: "probe"})
}

// addBenchRules adds rules through the API in requests of 100.
func (s *stack) addBenchRules(rules []ruleSpec) {
	s.t.Helper()
	for len(rules) > 0 {
		n := min(100, len(rules))
		s.addRules(s.baseURL, s.creds.BearerToken, rules[:n]...)
		rules = rules[n:]
	}
}

// percentileMs is the p-quantile of ds (sorted in place) in milliseconds.
func percentileMs(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return float64(ds[min(len(ds)-1, max(0, int(math.Ceil(p*float64(len(ds))))-1))]) / float64(time.Millisecond)
}

// BenchmarkStreamLatency measures, b.N times in turn, the time from the
// start of POST /2/tweets (a user's post, OAuth 1.0a) to the moment the post
// is read off an open GET /2/tweets/search/stream whose app has 1,000 rules
// (BENCH_STREAM_RULES), through an `aviary api` and an `aviary worker`
// process: the append to the log, the dispatcher's wake-up (LISTEN), the
// match against every app's rules, Redis, the replica's hub, the rendering
// and the write. Reported: p50/p99 of that (goal p99 < 100 ms) and of the
// POST alone.
func BenchmarkStreamLatency(b *testing.B) {
	s := newStack(b, stackOptions{driver: "local", workers: 1, env: streamBenchEnv()})
	rules := benchInt(b, "BENCH_STREAM_RULES", 1000)
	s.addBenchRules(benchRules(rules))
	st := openStream(b, http.DefaultClient, s.baseURL, s.creds.BearerToken, nil)
	if st.Status != http.StatusOK {
		b.Fatalf("stream: %d %s", st.Status, st.Raw)
	}
	tok := s.demoToken()
	run := func(i int) (total, post time.Duration) {
		start := time.Now()
		id := s.mustPostAt(tok, s.baseURL, fmt.Sprintf("latencyprobe %d, a short post to time #bench", i))
		post = time.Since(start)
		m := st.waitPost(id, 30*time.Second)
		return m.At.Sub(start), post
	}
	for i := range 10 { // warm-up: connections, caches, the rule set loaded
		run(-1 - i)
	}
	var totals, posts []time.Duration
	for i := 0; b.Loop(); i++ {
		total, post := run(i)
		totals, posts = append(totals, total), append(posts, post)
	}
	b.ReportMetric(percentileMs(totals, 0.50), "p50-ms")
	b.ReportMetric(percentileMs(totals, 0.99), "p99-ms")
	b.ReportMetric(percentileMs(totals, 1), "max-ms")
	b.ReportMetric(percentileMs(posts, 0.50), "post-p50-ms")
	b.ReportMetric(percentileMs(posts, 0.99), "post-p99-ms")
	b.ReportMetric(float64(rules), "rules")
}

// raiseFileLimit lifts this process's open-file limit to its hard limit
// (the processes it starts inherit it) and returns the new soft limit.
func raiseFileLimit(b *testing.B) uint64 {
	b.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatalf("getrlimit: %v", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatalf("setrlimit: %v", err)
	}
	return lim.Cur
}

// heldStreams are many open streams of one app, each read by a goroutine
// that only looks for one post id (the fan-out probe).
type heldStreams struct {
	client  *http.Client
	url     string
	bearers []string // the apps' tokens, taken in turn
	next    atomic.Int64
	cancel  context.CancelFunc
	ctx     context.Context
	wg      sync.WaitGroup

	mu     sync.Mutex
	probe  []byte
	sent   time.Time
	got    []time.Duration
	ended  atomic.Int64
	failed error
}

func newHeldStreams(base string, bearers []string) *heldStreams {
	ctx, cancel := context.WithCancel(context.Background())
	return &heldStreams{url: base + "/2/tweets/search/stream", bearers: bearers, ctx: ctx, cancel: cancel,
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: -1,
			ReadBufferSize: 1024, WriteBufferSize: 1024}}}
}

// open opens n more streams, inflight at a time.
func (h *heldStreams) open(n, inflight int) error {
	sem := make(chan struct{}, inflight)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := h.openOne(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func (h *heldStreams) openOne() error {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.bearers[int(h.next.Add(1)-1)%len(h.bearers)])
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fmt.Errorf("open stream: %d %s", resp.StatusCode, raw)
	}
	h.wg.Add(1)
	go h.read(resp.Body)
	return nil
}

func (h *heldStreams) read(body io.ReadCloser) {
	defer h.wg.Done()
	defer body.Close()
	r := bufio.NewReaderSize(body, 512)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			err = nil // a long line: its id is near its start, the rest is skipped
		}
		if err != nil {
			if h.ctx.Err() == nil {
				h.ended.Add(1)
			}
			return
		}
		h.mu.Lock()
		if h.probe != nil && bytes.Contains(line, h.probe) {
			h.got = append(h.got, time.Since(h.sent))
		}
		h.mu.Unlock()
	}
}

// expect arms the fan-out probe: lines containing token.
func (h *heldStreams) expect(token string, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probe, h.sent, h.got = []byte(token), sent, nil
}

// received is how many streams have the probe so far, and their delays.
func (h *heldStreams) received() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

func (h *heldStreams) close() {
	h.cancel()
	h.wg.Wait()
}

// BenchmarkStreamConnections opens BENCH_STREAM_CONNECTIONS (10,000)
// filtered streams on one `aviary api` process from this process, spread
// over BENCH_STREAM_APPS (100) apps (each app's connection limit,
// AVIARY_STREAM_CONNECTIONS, raised to its share), BENCH_STREAM_CONNECT_INFLIGHT
// (16) connects in flight, and reports the API's RSS before and with them
// open (after 5 s settled), the RSS per connection over the first and the
// second half (flat memory: the two are about equal), the time to open
// them, and how long one post matching a rule of every app takes to reach
// all of them (fan-out p50/p99/all).
func BenchmarkStreamConnections(b *testing.B) {
	n := benchInt(b, "BENCH_STREAM_CONNECTIONS", 10000)
	apps := min(benchInt(b, "BENCH_STREAM_APPS", 100), n)
	inflight := benchInt(b, "BENCH_STREAM_CONNECT_INFLIGHT", 16)
	if limit := raiseFileLimit(b); limit < uint64(n)+1000 {
		b.Skipf("open-file limit %d is too low for %d streams (raise the hard limit: ulimit -Hn)", limit, n)
	}
	perApp := (n+apps-1)/apps + 10
	s := newStack(b, stackOptions{driver: "local", workers: 1,
		env: streamBenchEnv("AVIARY_STREAM_CONNECTIONS=" + strconv.Itoa(perApp))})
	bearers := s.benchApps(apps)
	for _, bearer := range bearers {
		s.addRules(s.baseURL, bearer, ruleSpec{Value: "fanoutprobe", Tag: "probe"})
	}
	pid := s.api.Process.Pid
	h := newHeldStreams(s.baseURL, bearers)
	b.Cleanup(h.close)
	if err := h.open(10, 10); err != nil { // warm-up
		b.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	idle := procStatusKB(b, pid, "VmRSS")
	for b.Loop() {
		start := time.Now()
		if err := h.open(n/2-10, inflight); err != nil {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		half := procStatusKB(b, pid, "VmRSS")
		if err := h.open(n-n/2, inflight); err != nil {
			b.Fatal(err)
		}
		opened := time.Since(start) - 5*time.Second
		time.Sleep(5 * time.Second)
		full := procStatusKB(b, pid, "VmRSS")
		if ended := h.ended.Load(); ended > 0 {
			b.Fatalf("%d streams ended by the server while held", ended)
		}
		fanout := measureFanout(b, s, h, n)
		b.ReportMetric(float64(n), "streams")
		b.ReportMetric(float64(apps), "apps")
		b.ReportMetric(float64(idle)/1024, "api-idle-RSS-MB")
		b.ReportMetric(float64(full)/1024, "api-RSS-MB")
		b.ReportMetric(float64(full-idle)/float64(n), "KB/conn")
		b.ReportMetric(float64(half-idle)/float64(n/2), "first-half-KB/conn")
		b.ReportMetric(float64(full-half)/float64(n-n/2), "second-half-KB/conn")
		b.ReportMetric(float64(procStatusKB(b, pid, "VmHWM"))/1024, "api-peak-RSS-MB")
		b.ReportMetric(opened.Seconds(), "open-s")
		b.ReportMetric(percentileMs(fanout, 0.50), "fanout-p50-ms")
		b.ReportMetric(percentileMs(fanout, 0.99), "fanout-p99-ms")
		b.ReportMetric(percentileMs(fanout, 1), "fanout-all-ms")
	}
}

// benchApps returns the bearer tokens of n apps: the bootstrap app's and
// n-1 created through the store (as `aviary admin app create` does).
func (s *stack) benchApps(n int) []string {
	s.t.Helper()
	out := []string{s.creds.BearerToken}
	ctx := context.Background()
	for i := 1; i < n; i++ {
		app, err := s.db.CreateApp(ctx, fmt.Sprintf("bench-streams-%d", i), "")
		if err != nil {
			s.t.Fatalf("create app: %v", err)
		}
		tok, err := s.db.CreateBearerToken(ctx, app.ID)
		if err != nil {
			s.t.Fatalf("create bearer token: %v", err)
		}
		out = append(out, tok.Token)
	}
	return out
}

// measureFanout posts one matching post (a unique token in its text) and
// waits until all n streams read it (up to 60 s); it returns each stream's
// delay from the POST's start.
func measureFanout(b *testing.B, s *stack, h *heldStreams, n int) []time.Duration {
	b.Helper()
	token := "fanout" + strconv.FormatInt(time.Now().UnixNano(), 36)
	sent := time.Now()
	h.expect(token, sent) // armed before the post: a fast stream must not read it first
	s.mustPostAt(s.demoToken(), s.baseURL, "fanoutprobe: one post to every stream, "+token)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := h.received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			b.Fatalf("the post reached %d of %d streams in 60 s", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
