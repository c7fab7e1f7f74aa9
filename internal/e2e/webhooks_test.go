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
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a webhook receiver on a fixed loopback port that behaves as
// the platform's own CLI receiver (xurl webhook start) does: GET /webhook
// with a crc_token answers {"response_token": "sha256=" +
// base64(HMAC-SHA256(consumer secret, token))} as an encoded JSON line,
// POST /webhook answers 200 with no body. On top of that it checks the
// signature of every POST and records what arrived, in arrival order. It
// can be stopped (connections refused) and started again on the same
// port.
type receiver struct {
	t      testing.TB
	secret string
	addr   string

	mu       sync.Mutex
	srv      *http.Server
	crcs     int
	got      []delivery
	badSigs  int
	arrivals chan struct{}
}

// delivery is one POST the receiver took.
type delivery struct {
	EventID string
	Body    map[string]any
	Raw     []byte
	At      time.Time
}

func newReceiver(t testing.TB, secret string) *receiver {
	t.Helper()
	r := &receiver{t: t, secret: secret, addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), arrivals: make(chan struct{}, 1)}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// url is the webhook URL to register.
func (r *receiver) url() string { return "http://" + r.addr + "/webhook" }

func (r *receiver) start() {
	r.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger a moment after stop
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("receiver listen %s: %v", r.addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/webhook", r.serve)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go srv.Serve(ln) //nolint:errcheck // ends with Close
}

func (r *receiver) stop() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		// Shutdown, not Close: a POST the receiver has recorded gets its
		// 200 before the receiver goes away. Close could cut that answer
		// off, and the deliverer (at least once) would rightly send the
		// delivery again, which the test would count as a duplicate.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodGet:
		token := req.URL.Query().Get("crc_token")
		if token == "" {
			http.Error(w, "Error: crc_token missing from request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.crcs++
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"response_token": "sha256=" + r.sign([]byte(token))}) //nolint:errcheck // the client reads it
	case http.MethodPost:
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "Error reading request body", http.StatusInternalServerError)
			return
		}
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		ok := hmac.Equal([]byte(req.Header.Get("x-twitter-webhooks-signature")), []byte("sha256="+r.sign(raw)))
		r.mu.Lock()
		if !ok {
			r.badSigs++
		}
		r.got = append(r.got, delivery{EventID: req.Header.Get("x-aviary-event-id"), Body: body, Raw: raw, At: time.Now()})
		r.mu.Unlock()
		select {
		case r.arrivals <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
	}
}

func (r *receiver) sign(b []byte) string {
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write(b)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// deliveries is a copy of what arrived so far.
func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// counts are the CRC checks answered and the POSTs whose signature was
// wrong.
func (r *receiver) counts() (crcs, badSigs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.crcs, r.badSigs
}

// waitFor waits until cond holds of what arrived (or fails the test).
func (r *receiver) waitFor(what string, timeout time.Duration, cond func([]delivery) bool) []delivery {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.deliveries()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting %v for %s; %d deliveries arrived: %s", timeout, what, len(got), summarize(got))
		}
		select {
		case <-r.arrivals:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// postIDs are the post ids of the deliveries that carry a post, in order.
func postIDs(ds []delivery) []string {
	var out []string
	for _, d := range ds {
		if data, ok := d.Body["data"].(map[string]any); ok {
			id, _ := data["id"].(string)
			out = append(out, id)
		}
	}
	return out
}

func summarize(ds []delivery) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, string(d.Raw))
	}
	if len(parts) > 20 {
		parts = append(parts[:20], "...")
	}
	return strings.Join(parts, "\n")
}

// containsAll reports whether got holds every id of want.
func containsAll(got, want []string) bool {
	for _, id := range want {
		if !slices.Contains(got, id) {
			return false
		}
	}
	return true
}

// xdkWebhooksScript registers a webhook and links it to the filtered
// stream with the official SDK @xdevplatform/xdk, given only Aviary's base
// URL and the app's bearer token: webhooks.create, webhooks.get,
// webhooks.validate (PUT: a CRC check now), webhooks.createStreamLink,
// webhooks.getStreamLinks. With cfg.replay set it instead asks for a
// replay job (webhooks.createWebhookReplayJob) and reports a second one
// asked at once (a conflict while the first runs or a second job).
const xdkWebhooksScript = `'use strict';
const { Client, ApiError } = require('@xdevplatform/xdk');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);

async function attempt(promise) {
  try {
    return { ok: await promise };
  } catch (e) {
    return e instanceof ApiError ? { status: e.status, data: e.data } : { error: String(e) };
  }
}

async function main() {
  const xdk = new Client({ baseUrl: cfg.base, bearerToken: cfg.bearer });
  const out = {};
  if (cfg.replay) {
    out.replay = await xdk.webhooks.createWebhookReplayJob({ webhookId: cfg.webhookId, fromDate: cfg.fromDate, toDate: cfg.toDate });
    out.again = await attempt(xdk.webhooks.createWebhookReplayJob({ webhookId: cfg.webhookId, fromDate: cfg.fromDate, toDate: cfg.toDate }));
  } else {
    out.created = await xdk.webhooks.create({ url: cfg.url });
    out.listed = await xdk.webhooks.get();
    out.validated = await xdk.webhooks.validate(out.created.data.id);
    out.linked = await xdk.webhooks.createStreamLink(out.created.data.id);
    out.links = await xdk.webhooks.getStreamLinks();
    out.duplicate = await attempt(xdk.webhooks.create({ url: cfg.url }));
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiError ? JSON.stringify({ status: e.status, data: e.data }) : e);
  process.exit(1);
});
`

type xdkWebhooks struct {
	Created struct {
		Data struct {
			ID, URL   string
			Valid     bool
			CreatedAt string `json:"createdAt"`
		}
	}
	Listed struct {
		Data []struct {
			ID, URL string
			Valid   bool
		}
		Meta struct {
			ResultCount int `json:"resultCount"`
		}
	}
	Validated struct{ Data struct{ Valid bool } }
	Linked    struct{ Data struct{ Provisioned bool } }
	Links     struct {
		Data []struct {
			WebhookID string `json:"webhookId"`
		}
	}
	Duplicate struct {
		Status int
		Data   map[string]any
	}
	Replay struct {
		Data struct {
			JobID     string `json:"jobId"`
			CreatedAt string `json:"createdAt"`
		}
	}
	Again struct {
		Status int
		Data   map[string]any
	}
}

// webhookEnv are the settings of a webhook test stack: the receiver's
// loopback address allowed (development setting), and retries, dead
// letters and probes on a seconds scale instead of minutes.
var webhookEnv = []string{
	"AVIARY_WEBHOOK_ALLOW=127.0.0.1:*",
	"AVIARY_WEBHOOK_RETRY_BACKOFF=100ms",
	"AVIARY_WEBHOOK_DELIVERY_ATTEMPTS=3",
	"AVIARY_WEBHOOK_PROBE_INTERVAL=300ms",
	"AVIARY_RECONCILE=true",
}

// TestWebhooksEndToEnd (issue 27): a webhook registered and linked to the
// filtered stream with xdk receives every matching post once, in order,
// signed with the app's consumer secret; a receiver that goes down gets
// everything once when it is back, in order, after the webhook was shown
// failing; a replay job re-delivers the window's stored events and ends
// with the replay_job_status event; the retired replay path names the new
// one.
func TestWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, xdkPackage, xdkVersion)
	s := newStack(t, stackOptions{driver: "local", workers: 2, env: webhookEnv})
	recv := newReceiver(t, s.creds.ConsumerSecret)

	var reg xdkWebhooks
	runNodeScript(t, s, modules, xdkWebhooksScript, map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "url": recv.url()}, &reg)
	id := reg.Created.Data.ID
	if id == "" || reg.Created.Data.URL != recv.url() || !reg.Created.Data.Valid || reg.Created.Data.CreatedAt == "" {
		t.Fatalf("webhooks.create answered %+v", reg.Created)
	}
	if len(reg.Listed.Data) != 1 || reg.Listed.Data[0].ID != id || reg.Listed.Meta.ResultCount != 1 {
		t.Errorf("webhooks.get answered %+v", reg.Listed)
	}
	if !reg.Validated.Data.Valid || !reg.Linked.Data.Provisioned {
		t.Errorf("webhooks.validate answered %+v, createStreamLink %+v", reg.Validated, reg.Linked)
	}
	if len(reg.Links.Data) != 1 || reg.Links.Data[0].WebhookID != id {
		t.Errorf("webhooks.getStreamLinks answered %+v", reg.Links)
	}
	if reg.Duplicate.Status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(reg.Duplicate.Data), "DuplicateUrlFailed") {
		t.Errorf("a second webhooks.create of the URL answered %+v, want 400 DuplicateUrlFailed", reg.Duplicate)
	}
	if crcs, _ := recv.counts(); crcs < 2 {
		t.Errorf("the receiver answered %d CRC checks, want one at registration and one for validate", crcs)
	}

	rules := s.addRules(s.baseURL, s.creds.BearerToken, ruleSpec{Value: "heron", Tag: "herons"})
	demo := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	s.mustPostAt(demo, s.baseURL, "a kingfisher, no match")
	var first []string
	for i := range 5 {
		first = append(first, s.mustPostAt(demo, s.baseURL, fmt.Sprintf("heron number %d", i)))
	}
	got := recv.waitFor("the first five posts", 30*time.Second, func(ds []delivery) bool { return containsAll(postIDs(ds), first) })
	if ids := postIDs(got); !slices.Equal(ids, first) {
		t.Errorf("received posts %v, want exactly %v in order", ids, first)
	}
	for _, d := range got {
		mr, _ := d.Body["matching_rules"].([]any)
		if len(mr) != 1 || fmt.Sprint(mr[0]) != fmt.Sprint(map[string]any{"id": rules["heron"], "tag": "herons"}) {
			t.Errorf("delivery %s: matching_rules %v, want the heron rule %s", d.Raw, mr, rules["heron"])
		}
		if d.EventID == "" {
			t.Errorf("delivery %s came without x-aviary-event-id", d.Raw)
		}
	}

	// The receiver goes down: the webhook is shown failing, then gets
	// everything once it is back.
	recv.stop()
	var during []string
	for i := range 10 {
		during = append(during, s.mustPostAt(demo, s.baseURL, fmt.Sprintf("heron while down %d", i)))
	}
	waitWebhookState(t, s, id, "failing", 30*time.Second)
	recv.start()
	want := append(slices.Clone(first), during...)
	got = recv.waitFor("the posts made while down", 60*time.Second, func(ds []delivery) bool { return containsAll(postIDs(ds), want) })
	if ids := postIDs(got); !slices.Equal(ids, want) {
		t.Errorf("after the outage the receiver has %v, want each of %v once, in order", ids, want)
	}
	waitWebhookState(t, s, id, "ok", 30*time.Second)

	// Replay of the window holding every post so far.
	before := len(recv.deliveries())
	from := time.Now().UTC().Add(-5 * time.Minute).Format("200601021504")
	to := time.Now().UTC().Format("200601021504")
	var rep xdkWebhooks
	runNodeScript(t, s, modules, xdkWebhooksScript, map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken,
		"replay": true, "webhookId": id, "fromDate": from, "toDate": to}, &rep)
	job := rep.Replay.Data.JobID
	if job == "" || rep.Replay.Data.CreatedAt == "" {
		t.Fatalf("createWebhookReplayJob answered %+v", rep.Replay)
	}
	if rep.Again.Status != 0 && (rep.Again.Status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(rep.Again.Data), "ReplayConflictError")) {
		t.Errorf("a second replay at once answered %+v, want 400 ReplayConflictError or a second job", rep.Again)
	}
	got = recv.waitFor("the replay's status event", 60*time.Second, func(ds []delivery) bool {
		return slices.ContainsFunc(ds[before:], func(d delivery) bool { return replayStatus(d, job) != "" })
	})
	replayed := got[before:]
	end := slices.IndexFunc(replayed, func(d delivery) bool { return replayStatus(d, job) != "" })
	if ids := postIDs(replayed[:end]); !slices.Equal(ids, want) {
		t.Errorf("the replay delivered %v, want the stored events %v in order", ids, want)
	}
	if state := replayStatus(replayed[end], job); state != "Complete" {
		t.Errorf("replay status %s, want Complete", replayed[end].Raw)
	}
	if _, bad := recv.counts(); bad != 0 {
		t.Errorf("%d deliveries carried a wrong x-twitter-webhooks-signature", bad)
	}

	retired := s.bearerAt(s.baseURL, http.MethodPost, "/2/account_activity/replay/webhooks/"+id+"/subscriptions/all", nil)
	if retired.Status != http.StatusGone || !strings.Contains(string(retired.Raw), "/2/webhooks/replay") {
		t.Errorf("the retired replay path answered %d %s, want 410 naming /2/webhooks/replay", retired.Status, retired.Raw)
	}
}

// replayStatus is the job_state of d when it is job's replay_job_status
// event, "" otherwise.
func replayStatus(d delivery, job string) string {
	st, ok := d.Body["replay_job_status"].(map[string]any)
	if !ok || st["job_id"] != job {
		return ""
	}
	state, _ := st["job_state"].(string)
	return state
}

// waitWebhookState waits until GET /2/webhooks/{id} shows the delivery
// state want (ok, failing or paused).
func waitWebhookState(t *testing.T, s *stack, id, want string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var last response
	for ctx.Err() == nil {
		last = s.bearerAt(s.baseURL, http.MethodGet, "/2/webhooks/"+id, nil)
		data, _ := last.Body["data"].(map[string]any)
		delivery, _ := data["delivery"].(map[string]any)
		if delivery["state"] == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("webhook %s did not turn %s in %v: %d %s (%v)", id, want, timeout, last.Status, last.Raw, errors.New("timeout"))
}

// BenchmarkWebhookLatency measures, b.N times in turn, the time from the
// start of POST /2/tweets to the moment the post arrives at a local
// receiver through a stream link (the app has BENCH_STREAM_RULES, 1,000,
// rules), through an `aviary api` and an `aviary worker` process: the
// append, the webhook dispatcher's wake-up, the match, the rendering and
// the delivery's record, the deliverer's wake-up, the signed POST.
// Reported: p50/p99 (goal p99 < 500 ms).
//
//	go test ./internal/e2e -run '^$' -bench 'WebhookLatency' -benchtime 200x
func BenchmarkWebhookLatency(b *testing.B) {
	s := newStack(b, stackOptions{driver: "local", workers: 1, env: streamBenchEnv(webhookEnv...)})
	recv := newReceiver(b, s.creds.ConsumerSecret)
	created := s.bearerAt(s.baseURL, http.MethodPost, "/2/webhooks", map[string]any{"url": recv.url()})
	data, _ := created.Body["data"].(map[string]any)
	id, _ := data["id"].(string)
	if id == "" {
		b.Fatalf("create webhook: %d %s", created.Status, created.Raw)
	}
	if linked := s.bearerAt(s.baseURL, http.MethodPost, "/2/tweets/search/webhooks/"+id+"?expansions=author_id", nil); linked.Status != http.StatusOK {
		b.Fatalf("link webhook: %d %s", linked.Status, linked.Raw)
	}
	rules := benchInt(b, "BENCH_STREAM_RULES", 1000)
	s.addBenchRules(benchRules(rules))
	tok := s.demoToken()
	run := func(i int) time.Duration {
		start := time.Now()
		id := s.mustPostAt(tok, s.baseURL, fmt.Sprintf("latencyprobe %d, a short post to time #bench", i))
		carries := func(d delivery) bool { return slices.Equal(postIDs([]delivery{d}), []string{id}) }
		got := recv.waitFor("post "+id, 30*time.Second, func(ds []delivery) bool { return slices.ContainsFunc(ds, carries) })
		return got[slices.IndexFunc(got, carries)].At.Sub(start)
	}
	for i := range 10 { // warm-up
		run(-1 - i)
	}
	var totals []time.Duration
	for i := 0; b.Loop(); i++ {
		totals = append(totals, run(i))
	}
	b.ReportMetric(percentileMs(totals, 0.50), "p50-ms")
	b.ReportMetric(percentileMs(totals, 0.99), "p99-ms")
	b.ReportMetric(percentileMs(totals, 1), "max-ms")
	b.ReportMetric(float64(rules), "rules")
}
