package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// scaleOptions is the scaling phase: which job families, drained by how
// many worker replicas, pinned or not, and the size of each backlog.
type scaleOptions struct {
	families    []string // compliance, media, webhooks
	workers     []int    // replicas of each run, e.g. 1, 2, 4
	pin         bool     // worker i on CPU i mod NumCPU (taskset)
	concurrency int      // AVIARY_WORKER_CONCURRENCY (0: the default, 8)
	jobs, lines int      // compliance: jobs x ids
	media       int      // media: images
	imageSide   int      // media: 64 (the mix's gradient) or a noisy side x side PNG
	hooks       int      // webhooks: webhooks linked to the rule
	hookPosts   int      // webhooks: matching posts, each delivered to every webhook
	hookDelay   time.Duration
	timeout     time.Duration
}

var allFamilies = []string{"compliance", "media", "webhooks"}

// parseInts parses "1,2,4".
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseFamilies parses "compliance,media,webhooks" ("all": every one).
func parseFamilies(s string) ([]string, error) {
	if s == "all" {
		return allFamilies, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "compliance", "media", "webhooks":
			out = append(out, f)
		case "":
		default:
			return nil, fmt.Errorf("unknown job family %q (compliance, media, webhooks)", f)
		}
	}
	return out, nil
}

// scaleRun is one backlog of one family drained by a number of workers.
type scaleRun struct {
	family      string
	unit        string // what an item is: "jobs", "images", "deliveries"
	backlog     string // its size, in words
	workers     int
	concurrency int
	pinned      []int // each worker's CPU (nil: not pinned)
	items       int   // in the backlog
	complete    int   // completed when the run ended
	duplicates  int   // items completed more than once (webhooks: receipts beyond one per delivery)
	drain       time.Duration
	// span is the first to the last completion, from the records (or the
	// receiver); perMinute = (complete-1)/span, which leaves out the
	// workers' start, and wallPerMinute = complete/drain, which does not.
	span                     time.Duration
	perMinute, wallPerMinute float64
	use                      usage
}

// usage is the CPU, in cores, each part used over a run's drain.
type usage struct {
	workers            []float64
	api                float64
	pgOurs, pgAll      float64 // the stack's database's backends; every backend (other sessions' too)
	redis, loadgen     float64
	hostBusy           float64 // percent of all CPUs
	loadStart, loadEnd string  // /proc/loadavg
}

// stackCores is what the stack and this program used: the workers, the
// API, the stack database's backends, Redis and the load generator.
func (u usage) stackCores() float64 {
	return sum(u.workers) + u.api + u.pgOurs + u.redis + u.loadgen
}

// busyCores is the host's busy share in cores.
func (u usage) busyCores() float64 { return u.hostBusy / 100 * float64(runtime.NumCPU()) }

// saturated names the resource that bounded the run, from its usage: the
// host's CPUs when they were (nearly) all busy (and whether by the stack
// or by other processes), a worker's core when a pinned worker used
// (nearly) all of it, else no CPU: the work waited on something else (the
// receiver, the database's round trips, the task slots).
func (r scaleRun) saturated() string {
	u := r.use
	switch {
	case r.pinned != nil && maxOf(u.workers) >= 0.9:
		return "a worker's core"
	case u.hostBusy >= 90 && u.stackCores() < u.busyCores()/2:
		return "host CPUs, mostly by other processes"
	case u.hostBusy >= 90:
		return "host CPUs, by the stack"
	default:
		return "no CPU: slots and waits"
	}
}

func maxOf(v []float64) (m float64) {
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// backlog is one family's backlog of a run, created while no worker runs.
type backlog struct {
	items int
	// progress reads how many items are done (and how many twice).
	progress func(ctx context.Context) (complete, duplicates int, err error)
	// span reads the first and the last completion.
	span func(ctx context.Context) (time.Duration, error)
}

// scaler runs the scaling phase on a stack of its own.
type scaler struct {
	s     *stack
	c     *client
	m     *mix
	o     scaleOptions
	pool  *pgxpool.Pool
	recv  *receiver
	hook  []string // webhook ids
	image []byte   // the media backlog's image
	runs  int
}

// scale measures, for each family, the same backlog drained by each number
// of workers: with the workers stopped it creates the backlog, starts n
// workers (pinned when asked) and times until the records show every item
// done, sampling every process's CPU over the drain.
func scale(ctx context.Context, s *stack, c *client, m *mix, o scaleOptions) ([]scaleRun, error) {
	if o.pin {
		if _, err := exec.LookPath("taskset"); err != nil {
			return nil, fmt.Errorf("-scale-pin needs taskset (util-linux): %w", err)
		}
	}
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	defer pool.Close()
	sc := &scaler{s: s, c: c, m: m, o: o, pool: pool, image: m.png}
	if sc.imageSide() != 64 {
		if sc.image, err = noisyPNG(sc.imageSide()); err != nil {
			return nil, err
		}
	}
	// The API answers an image's finalize at once (the backlog is made
	// while no worker runs) and, for the webhooks family, lets the
	// receiver on this machine in and takes o.hooks webhooks per app.
	apiEnv := []string{"AVIARY_MEDIA_IMAGE_WAIT=0"}
	if contains(o.families, "webhooks") {
		if sc.recv, err = startReceiver(c.creds.ConsumerSecret, o.hookDelay); err != nil {
			return nil, err
		}
		defer sc.recv.close()
		allow := "AVIARY_WEBHOOK_ALLOW=" + sc.recv.hostPort()
		apiEnv = append(apiEnv, allow, fmt.Sprintf("AVIARY_WEBHOOKS_MAX=%d", o.hooks))
		s.env = append(s.env, allow) // the workers', too
	}
	s.stopWorkers()
	if err := s.restartAPI(ctx, apiEnv...); err != nil {
		return nil, err
	}
	if sc.recv != nil {
		if err := sc.setupWebhooks(ctx); err != nil {
			return nil, err
		}
	}
	var runs []scaleRun
	for _, fam := range o.families {
		for _, n := range o.workers {
			r, err := sc.run(ctx, fam, n)
			if err != nil {
				return runs, fmt.Errorf("%s, %d workers: %w", fam, n, err)
			}
			runs = append(runs, r)
		}
	}
	s.stopWorkers()
	return runs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (sc *scaler) run(ctx context.Context, fam string, n int) (scaleRun, error) {
	sc.s.stopWorkers()
	sc.runs++
	r := scaleRun{family: fam, workers: n, concurrency: sc.o.concurrency}
	var b backlog
	var err error
	switch fam {
	case "compliance":
		r.unit, r.backlog = "jobs", fmt.Sprintf("%d jobs x %d ids", sc.o.jobs, sc.o.lines)
		b, err = sc.complianceBacklog(ctx)
	case "media":
		r.unit, r.backlog = "images", fmt.Sprintf("%d PNG %dx%d (%d KB)", sc.o.media, sc.imageSide(), sc.imageSide(), len(sc.image)/1024)
		b, err = sc.mediaBacklog(ctx)
	case "webhooks":
		r.unit, r.backlog = "deliveries", fmt.Sprintf("%d posts x %d webhooks, receiver %s", sc.o.hookPosts, sc.o.hooks, sc.o.hookDelay)
		b, err = sc.webhookBacklog(ctx)
	}
	if err != nil {
		return r, fmt.Errorf("backlog: %w", err)
	}
	r.items = b.items
	var env []string
	if sc.o.concurrency > 0 {
		env = append(env, fmt.Sprintf("AVIARY_WORKER_CONCURRENCY=%d", sc.o.concurrency))
	}
	others := []int{sc.s.apiPID, os.Getpid()}
	start := takeSnap(others...)
	for i := range n {
		cpu := -1
		if sc.o.pin {
			cpu = i % runtime.NumCPU()
			r.pinned = append(r.pinned, cpu)
		}
		if err := sc.s.addWorkerOn(cpu, env...); err != nil {
			return r, err
		}
	}
	for {
		if r.complete, r.duplicates, err = b.progress(ctx); err != nil {
			return r, err
		}
		r.drain = time.Since(start.at)
		if r.complete >= r.items || r.drain > sc.o.timeout {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	end := takeSnap(append(others, sc.s.workerPIDs()...)...)
	r.use = sc.usage(ctx, start, end)
	if r.span, err = b.span(ctx); err != nil {
		return r, err
	}
	if r.complete > 1 && r.span > 0 {
		r.perMinute = float64(r.complete-1) / r.span.Minutes()
	}
	r.wallPerMinute = float64(r.complete) / r.drain.Minutes()
	return r, nil
}

// usage splits the CPU used between two snapshots: each worker, the API,
// the stack database's PostgreSQL backends (and every backend), Redis,
// this program.
func (sc *scaler) usage(ctx context.Context, a, b cpuSnap) usage {
	u := usage{api: cores(a, b, sc.s.apiPID), loadgen: cores(a, b, os.Getpid()),
		pgAll: coresOf(a, b, b.postgres), redis: coresOf(a, b, b.redis),
		hostBusy: hostBusyPct(a, b), loadStart: a.loadAvg, loadEnd: b.loadAvg}
	for _, pid := range sc.s.workerPIDs() {
		u.workers = append(u.workers, cores(a, b, pid))
	}
	rows, err := sc.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err == nil {
		var ours []int
		for rows.Next() {
			var pid int
			if rows.Scan(&pid) == nil {
				ours = append(ours, pid)
			}
		}
		rows.Close()
		u.pgOurs = coresOf(a, b, ours)
	}
	return u
}

// complianceBacklog: jobs compliance jobs of lines ids each, spread over
// the stack's apps (one job per app runs at a time, so the apps bound the
// parallelism), uploaded so only the workers' part is left.
func (sc *scaler) complianceBacklog(ctx context.Context) (backlog, error) {
	ids := make([]string, 0, sc.o.jobs)
	for i := range sc.o.jobs {
		id, err := sc.c.complianceJob(ctx, sc.c.bearers[i%len(sc.c.bearers)], sc.m.idsFile(sc.o.lines))
		if err != nil {
			return backlog{}, err
		}
		ids = append(ids, id)
	}
	return sc.recordBacklog(ids, "compliance_jobs", "status = 'complete'", "completed_at"), nil
}

// recordBacklog is a backlog of the records ids of table: an item is done
// when done (an SQL condition) holds, and the span runs over the done
// records' at column.
func (sc *scaler) recordBacklog(ids []string, table, done, at string) backlog {
	where := fmt.Sprintf("FROM %s WHERE %s AND id::text = ANY($1)", table, done)
	return backlog{items: len(ids),
		progress: func(ctx context.Context) (n, _ int, err error) {
			err = sc.pool.QueryRow(ctx, "SELECT count(*) "+where, ids).Scan(&n)
			return n, 0, err
		},
		span: func(ctx context.Context) (time.Duration, error) {
			return sc.spanOf(ctx, fmt.Sprintf("SELECT EXTRACT(EPOCH FROM max(%s) - min(%s)) ", at, at)+where, ids)
		}}
}

// mediaBacklog: images uploaded and finalized (the API set not to wait
// for the worker), each a media:process task on the media queue.
func (sc *scaler) mediaBacklog(ctx context.Context) (backlog, error) {
	ids := make([]string, sc.o.media)
	errs := make([]error, sc.o.media)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ids[i], errs[i] = sc.c.uploadImage(ctx, sc.image)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return backlog{}, err
		}
	}
	return sc.recordBacklog(ids, "media", "state = 'succeeded'", "processed_at"), nil
}

func (sc *scaler) imageSide() int {
	if sc.o.imageSide <= 0 {
		return 64
	}
	return sc.o.imageSide
}

// spanOf runs a query of seconds over ids.
func (sc *scaler) spanOf(ctx context.Context, q string, ids []string) (time.Duration, error) {
	var secs *float64
	if err := sc.pool.QueryRow(ctx, q, ids).Scan(&secs); err != nil {
		return 0, fmt.Errorf("read span: %w", err)
	}
	if secs == nil {
		return 0, nil
	}
	return time.Duration(*secs * float64(time.Second)), nil
}

// setupWebhooks registers o.hooks webhooks of the demo app on the
// receiver (each passes the CRC), links each to the app's filtered-stream
// rules and adds the rule the backlog's posts match.
func (sc *scaler) setupWebhooks(ctx context.Context) error {
	c := sc.c
	rule := c.bearer(http.MethodPost, c.base+"/2/tweets/search/stream/rules", []byte(`{"add":[{"value":"scalehook","tag":"load scaling"}]}`), "application/json")
	if err := c.do(ctx, rule, http.StatusCreated, nil); err != nil {
		return fmt.Errorf("stream rule: %w", err)
	}
	// A registration answered 503 may have gone through: its retry's
	// DuplicateUrlFailed is that webhook; the ids are read from the list.
	for i := range sc.o.hooks {
		body := fmt.Appendf(nil, `{"url":%q}`, sc.recv.url(i))
		err := c.do(ctx, c.bearer(http.MethodPost, c.base+"/2/webhooks", body, "application/json"), http.StatusOK, nil)
		if err != nil && !strings.Contains(err.Error(), "DuplicateUrlFailed") {
			return fmt.Errorf("register webhook: %w", err)
		}
	}
	var list struct {
		Data []struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		} `json:"data"`
	}
	if err := c.do(ctx, c.bearer(http.MethodGet, c.base+"/2/webhooks", nil, ""), http.StatusOK, &list); err != nil {
		return fmt.Errorf("list webhooks: %w", err)
	}
	for _, h := range list.Data {
		if err := c.do(ctx, c.bearer(http.MethodPost, c.base+"/2/tweets/search/webhooks/"+h.ID, nil, ""), http.StatusOK, nil); err != nil {
			return fmt.Errorf("link webhook: %w", err)
		}
		sc.hook = append(sc.hook, h.ID)
	}
	if len(sc.hook) != sc.o.hooks {
		return fmt.Errorf("%d webhooks registered, want %d", len(sc.hook), sc.o.hooks)
	}
	return nil
}

// webhookBacklog: hookPosts posts matching the rule, created while no
// worker runs; the workers' webhooks dispatcher records one delivery per
// post and webhook and their deliverers POST them to the receiver, which
// answers after hookDelay. Done is every (webhook, event) received and no
// delivery of the stack pending.
func (sc *scaler) webhookBacklog(ctx context.Context) (backlog, error) {
	sc.recv.reset()
	for i := range sc.o.hookPosts {
		if _, err := sc.c.createPost(ctx, fmt.Sprintf("scalehook run %d post %d at %d", sc.runs, i, time.Now().UnixNano())); err != nil {
			return backlog{}, err
		}
	}
	// A post answered 503 may exist all the same: the records count them.
	var posts int
	if err := sc.pool.QueryRow(ctx, `SELECT count(*) FROM posts WHERE text LIKE $1`, fmt.Sprintf("scalehook run %d post %%", sc.runs)).Scan(&posts); err != nil {
		return backlog{}, fmt.Errorf("count posts: %w", err)
	}
	items := posts * len(sc.hook)
	return backlog{items: items,
		progress: func(ctx context.Context) (n, dup int, err error) {
			n, dup = sc.recv.counts()
			if n < items {
				return n, dup, nil
			}
			var pending int
			if err := sc.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'`).Scan(&pending); err != nil {
				return n, dup, fmt.Errorf("read deliveries: %w", err)
			}
			if pending > 0 {
				return items - 1, dup, nil // received, not yet recorded
			}
			return n, dup, nil
		},
		span: func(context.Context) (time.Duration, error) { return sc.recv.span(), nil }}, nil
}
