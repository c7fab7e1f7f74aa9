package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/validation"
)

// matrixConfig sizes the fault matrix: the short version (the default)
// runs with the e2e tests; AVIARY_FAULTS=full is `make faults`.
type matrixConfig struct {
	mode string
	// kills is the number of worker SIGKILLs; each comes at a moment drawn
	// uniformly from [0, killWindow) after the previous replacement.
	kills      int
	killWindow time.Duration
	// cut is how long a dependency stays unreachable (or hung).
	cut time.Duration
	// longLines is the size of the long compliance jobs that run while
	// workers are killed.
	longLines int
	// storm is the number of compliance jobs created at once while Redis
	// restarts empty.
	storm int
}

func faultsConfig() matrixConfig {
	if os.Getenv("AVIARY_FAULTS") == "full" {
		return matrixConfig{mode: "full", kills: 100, killWindow: 4 * time.Second, cut: 30 * time.Second, storm: 60, longLines: 1_000_000}
	}
	return matrixConfig{mode: "short", kills: 5, killWindow: 2 * time.Second, cut: 5 * time.Second, storm: 20, longLines: 300_000}
}

// faultRow is one fault's line in the report.
type faultRow struct {
	name       string
	start, end time.Time
	// recovery: from the fault's end until a probe compliance job,
	// created then, was complete (the system processing new work again).
	recovery time.Duration
	detail   string
	problems []string
}

// matrix is the system under faults: the private services, the proxies
// every process reaches them through, the API replicas and the workers.
type matrix struct {
	t                         *testing.T
	cfg                       matrixConfig
	s                         *stack
	env                       *matrixEnv
	pg                        *storagetest.PostgresProcess
	redis                     *storagetest.RedisProcess
	minio                     *storagetest.MinIOProcess
	bucket                    string
	pgProxy, redisProxy, s3px *storagetest.Proxy
	apiB                      *exec.Cmd
	mu                        sync.Mutex
	workers                   map[int]*exec.Cmd
	probe                     *complianceFamily
	rng                       *rand.Rand
}

// TestFaultMatrix is issue 32's fault matrix (docs/fault-matrix.md): two
// API replicas and two workers on a PostgreSQL, Redis and MinIO of the
// test's own, each reached through a fault proxy, run every family's
// workload while faults happen one after another; then everything
// accepted must reach a final state, applied exactly once.
func TestFaultMatrix(t *testing.T) {
	cfg := faultsConfig()
	seed := uint64(time.Now().UnixNano())
	m := &matrix{t: t, cfg: cfg, workers: map[int]*exec.Cmd{}, rng: rand.New(rand.NewPCG(seed, 32))}
	m.setUp()
	t.Logf("fault matrix (%s): seed %d", cfg.mode, seed)

	families := append(jobFamilies(), eventFamilies()...)
	ctx := context.Background()
	for _, f := range families {
		if err := f.prepare(ctx, m.env); err != nil {
			t.Fatalf("prepare %s: %v", f.name(), err)
		}
		if c, ok := f.(*complianceFamily); ok {
			m.probe = c
		}
	}
	if m.probe == nil {
		t.Fatal("no compliance family for the recovery probe")
	}
	began := time.Now()
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, f := range families {
		wg.Add(1)
		go func() { defer wg.Done(); f.run(runCtx, m.env) }()
	}
	time.Sleep(3 * time.Second) // the workload under way before the first fault

	var rows []faultRow
	var pickups []time.Duration
	rows = append(rows, m.fault(fmt.Sprintf("SIGKILL a worker ×%d (replacement started after each)", cfg.kills), func(r *faultRow) {
		pickups = m.killWorkers(r)
	}))
	rows = append(rows, m.fault("SIGKILL API replica mid-append", m.killAPIMidAppend))
	rows = append(rows, m.fault("SIGKILL API replica mid-batch", m.killAPIMidBatch))
	rows = append(rows, m.fault(fmt.Sprintf("Redis restarted empty during an enqueue storm (%d jobs)", cfg.storm), m.redisStorm))
	rows = append(rows, m.fault("PostgreSQL restarted (immediate)", func(r *faultRow) { m.pg.Restart() }))
	rows = append(rows, m.fault("MinIO restarted mid-upload", m.minioRestartMidUpload))
	rows = append(rows, m.fault(fmt.Sprintf("Redis unreachable %v (proxy down)", cfg.cut), func(r *faultRow) { m.down(m.redisProxy, r) }))
	rows = append(rows, m.fault(fmt.Sprintf("MinIO unreachable %v (proxy down)", cfg.cut), func(r *faultRow) { m.down(m.s3px, r) }))
	rows = append(rows, m.fault(fmt.Sprintf("PostgreSQL unreachable %v (proxy down)", cfg.cut), func(r *faultRow) { m.down(m.pgProxy, r) }))
	rows = append(rows, m.fault(fmt.Sprintf("Redis hung %v (proxy frozen)", cfg.cut), func(r *faultRow) {
		m.redisProxy.Freeze()
		time.Sleep(cfg.cut)
		m.redisProxy.Thaw()
	}))
	rows = append(rows, m.fault(fmt.Sprintf("MinIO hung %v (proxy frozen)", cfg.cut), func(r *faultRow) {
		m.s3px.Freeze()
		time.Sleep(cfg.cut)
		m.s3px.Thaw()
	}))

	time.Sleep(2 * time.Second)
	stopRun()
	wg.Wait()
	workloadEnd := time.Now()

	// Each family settles, and the final checks run, on a budget of its
	// own: one family waiting for something that never comes must not
	// leave the others (or the checks) no time.
	var reports []familyReport
	for _, f := range families {
		settleCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		r := f.settle(settleCtx, m.env)
		cancel()
		if r.family == "" {
			r.family = f.name()
		}
		reports = append(reports, r)
	}
	checksCtx, cancelChecks := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelChecks()
	checks := m.finalChecks(checksCtx)

	report := m.render(began, workloadEnd, rows, pickups, reports, checks)
	t.Logf("\n%s", report)
	if path := os.Getenv("AVIARY_FAULTS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
	for _, r := range rows {
		for _, p := range r.problems {
			t.Errorf("%s: %s", r.name, p)
		}
	}
	for _, r := range reports {
		for _, p := range r.problems {
			t.Errorf("%s: %s", r.family, p)
		}
	}
	for _, p := range checks.problems {
		t.Errorf("final checks: %s", p)
	}
}

// setUp starts the private services, their proxies and the stack with two
// API replicas and two workers.
func (m *matrix) setUp() {
	t := m.t
	m.pg = storagetest.PrivatePostgres(t)
	conn, err := pgx.Connect(context.Background(), m.pg.URL)
	if err != nil {
		t.Fatalf("connect to the private PostgreSQL: %v", err)
	}
	if _, err := conn.Exec(context.Background(), `CREATE DATABASE aviary`); err != nil {
		t.Fatalf("create the database: %v", err)
	}
	conn.Close(context.Background())
	m.pgProxy = storagetest.NewProxy(t, m.pg.Addr)
	m.redis = storagetest.PrivateRedis(t)
	m.redisProxy = storagetest.NewProxy(t, m.redis.Addr)
	m.minio = storagetest.PrivateMinIO(t)
	m.bucket = m.minio.Bucket(t)
	m.s3px = storagetest.NewProxy(t, strings.TrimPrefix(m.minio.Server.Endpoint, "http://"))
	images := catalogImageServer(t, "http://127.0.0.1:9/refused.png")
	srv := m.minio.Server
	m.s = newStack(t, stackOptions{
		dbURL:    fmt.Sprintf("postgres://postgres@%s/aviary?sslmode=disable", m.pgProxy.Addr()),
		redisURL: "redis://" + m.redisProxy.Addr() + "/0",
		blobEnv: []string{"AVIARY_BLOB_DRIVER=s3", "AVIARY_S3_ENDPOINT=http://" + m.s3px.Addr(), "AVIARY_S3_BUCKET=" + m.bucket,
			"AVIARY_S3_ACCESS_KEY=" + srv.AccessKey, "AVIARY_S3_SECRET_KEY=" + srv.SecretKey, "AVIARY_S3_REGION=" + srv.Region},
		env: []string{"AVIARY_FETCH_ALLOWLIST=" + strings.TrimPrefix(images.URL, "http://"), clientTestTimeout, "AVIARY_WEBHOOK_ALLOW=127.0.0.1:*"},
	})
	baseB, apiB := m.s.startReplica()
	m.apiB = apiB
	m.startWorker()
	m.startWorker()
	m.env = &matrixEnv{s: m.s, apis: []string{m.s.baseURL, baseB}, client: &http.Client{Timeout: 30 * time.Second},
		webhookAllow: "127.0.0.1:*", images: images.URL}
}

func (m *matrix) startWorker() {
	w := m.s.start("worker", nil)
	m.mu.Lock()
	m.workers[w.Process.Pid] = w
	m.mu.Unlock()
}

// fault runs one fault, then measures the recovery with a probe job.
func (m *matrix) fault(name string, inject func(r *faultRow)) faultRow {
	r := faultRow{name: name, start: time.Now()}
	m.t.Logf("fault: %s", name)
	inject(&r)
	r.end = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if m.probe.probe(ctx, m.env) {
		r.recovery = time.Since(r.end)
	} else {
		r.recovery = -1
		r.problems = append(r.problems, "no probe job completed within 5 minutes of the fault's end")
	}
	m.t.Logf("fault: %s: done in %v, recovered %v later %s", name, r.end.Sub(r.start).Round(time.Millisecond), r.recovery.Round(time.Millisecond), r.detail)
	return r
}

// down makes a dependency unreachable for the cut's duration.
func (m *matrix) down(p *storagetest.Proxy, r *faultRow) {
	p.SetDown(true)
	time.Sleep(m.cfg.cut)
	p.SetDown(false)
}

// leasesOf are the tasks whose live lease pid holds.
func (m *matrix) leasesOf(pid int) []string {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, m.s.dbURL)
	if err != nil {
		return nil
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT task_id FROM task_leases WHERE holder LIKE '%:' || $1::text || ':%' AND expires_at > clock_timestamp()`, strconv.Itoa(pid))
	ids, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids
}

// heldByAnother waits until one of tasks is leased by a process other than
// pid, or the lease is gone with the task done (no lease row left).
func (m *matrix) heldByAnother(tasks []string, pid int, timeout time.Duration) (time.Time, bool) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, m.s.dbURL)
	if err != nil {
		return time.Time{}, false
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM task_leases WHERE task_id = ANY($1) AND holder NOT LIKE '%:' || $2::text || ':%'
			AND expires_at > clock_timestamp()`, tasks, strconv.Itoa(pid)).Scan(&n)
		if err == nil && n > 0 {
			return time.Now(), true
		}
	}
	return time.Time{}, false
}

// killWorkers SIGKILLs a random worker at random moments, starting a
// replacement after each, and returns for each kill that interrupted a
// task the time until another worker held that task's lease.
func (m *matrix) killWorkers(r *faultRow) []time.Duration {
	var pickups []time.Duration
	idle, missed := 0, 0
	// A long job runs throughout, started again when it completes, so
	// kills find a task to interrupt.
	stop := make(chan struct{})
	longDone := make(chan string, 1)
	go func() { longDone <- m.longJobs(stop) }()
	defer func() {
		close(stop)
		long := <-longDone
		r.detail += "; " + long
		if strings.Contains(long, "PROBLEM") {
			r.problems = append(r.problems, long)
		}
	}()
	for range m.cfg.kills {
		time.Sleep(time.Duration(m.rng.Int64N(int64(m.cfg.killWindow))))
		m.mu.Lock()
		pids := slices.Sorted(func(yield func(int) bool) {
			for pid := range m.workers {
				if !yield(pid) {
					return
				}
			}
		})
		pid := pids[m.rng.IntN(len(pids))]
		w := m.workers[pid]
		delete(m.workers, pid)
		m.mu.Unlock()
		tasks := m.leasesOf(pid)
		_ = w.Process.Signal(syscall.SIGKILL)
		killed := time.Now()
		_ = w.Wait()
		m.startWorker()
		if len(tasks) == 0 {
			idle++
			continue
		}
		if at, ok := m.heldByAnother(tasks, pid, 60*time.Second); ok {
			pickups = append(pickups, at.Sub(killed))
		} else {
			missed++
		}
	}
	r.detail = fmt.Sprintf("%d kills mid-task (task taken over), %d with no task, %d whose task no other worker leased within 60 s (finished or failed over otherwise)",
		len(pickups), idle, missed)
	return pickups
}

// longJobs runs long compliance jobs one after another until stop, then
// waits for the last to finish, and checks each: complete, with exactly
// the expected result lines.
func (m *matrix) longJobs(stop chan struct{}) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upload, want := m.probe.longUpload(m.cfg.longLines)
	var done, attempts int
	var problems []string
	for {
		select {
		case <-stop:
			return fmt.Sprintf("%d long jobs (%d lines each) complete exactly once after %d attempts%s",
				done, m.cfg.longLines, attempts, strings.Join(problems, ""))
		default:
		}
		id, uploaded, _, _ := m.probe.submitBody(ctx, m.env, m.probe.longAuthz, 3000000+done, upload)
		if !uploaded {
			continue
		}
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Minute)
		var job storage.ComplianceJob
		waitFinal(wctx, func() bool {
			j, err := m.s.db.ComplianceJob(wctx, id)
			job = j
			return err == nil && j.Status.Final()
		})
		wcancel()
		attempts += job.Attempts
		if job.Status != storage.JobComplete || job.ResultLines != int64(want) || job.LinesRead != int64(m.cfg.longLines) {
			problems = append(problems, fmt.Sprintf(" PROBLEM: long job %d ended %s with %d lines read, %d result lines (want %d, %d)",
				id, job.Status, job.LinesRead, job.ResultLines, m.cfg.longLines, want))
		} else {
			done++
		}
	}
}

// slowBody sends b in pieces of chunk bytes every 40 ms, so a request is
// in flight for a while.
func slowBody(b []byte, chunk int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for len(b) > 0 {
			n := min(chunk, len(b))
			if _, err := pw.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
			time.Sleep(40 * time.Millisecond)
		}
		pw.Close()
	}()
	return pr
}

// inFlightKill sends a request with a slow body to replica B, SIGKILLs B
// while the body is being read, and restarts B on its port. It returns
// the request's outcome.
func (m *matrix) inFlightKill(authz, method, path string, body []byte, contentType string) error {
	// Two seconds' worth of sending, the kill after one.
	req, err := http.NewRequest(method, m.env.apis[1]+path, slowBody(body, max(1, len(body)/50)))
	if err != nil {
		return err
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", contentType)
	done := make(chan error, 1)
	go func() {
		st, raw, err := m.env.send(req, authz)
		if err == nil {
			err = fmt.Errorf("answered %d %s before the kill", st, raw)
		}
		done <- err
	}()
	time.Sleep(time.Second)
	_ = m.apiB.Process.Signal(syscall.SIGKILL)
	_ = m.apiB.Wait()
	err = <-done
	port := strings.TrimPrefix(m.env.apis[1], "http://127.0.0.1:")
	m.apiB = m.s.startReplicaAt(port)
	return err
}

// bigImage is a PNG of about 4.8 MB (two segments: 4 MiB and the rest).
func bigImage(t testing.TB) []byte { return noisyPNG(t, 1100, 1100) }

// uploadBig uploads img in two segments to replica A (segment 0 through
// first, when given, instead of plainly), finalizes it and waits for the
// media to succeed; problems are returned.
func (m *matrix) uploadBig(img []byte, first func(sid string, body []byte, ct string) error) (string, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e := m.env
	var sid string
	if !retry(ctx, 2*time.Minute, func(int) bool {
		st, raw, err := e.callJSON(ctx, e.api(0), "user", http.MethodPost, "/2/media/upload/initialize",
			map[string]any{"media_type": "image/png", "media_category": "tweet_image", "total_bytes": len(img)})
		sid, _ = dataOf(raw)["id"].(string)
		return err == nil && st == http.StatusOK
	}) {
		return "", []string{"initialize never succeeded"}
	}
	segs := [][]byte{img[:4<<20], img[4<<20:]}
	detail := ""
	for i, seg := range segs {
		body, ct := appendBody(multipartMediaLast, i, seg)
		if i == 0 && first != nil {
			detail = outcome(first(sid, body, ct))
		}
		if !retry(ctx, 2*time.Minute, func(int) bool {
			st, _, err := e.call(ctx, e.api(0), "user", http.MethodPost, "/2/media/upload/"+sid+"/append", body, ct)
			return err == nil && st == http.StatusOK
		}) {
			return detail, []string{fmt.Sprintf("media %s: append %d never succeeded", sid, i)}
		}
	}
	if !retry(ctx, 2*time.Minute, func(a int) bool {
		st, _, err := e.call(ctx, e.api(0), "user", http.MethodPost, "/2/media/upload/"+sid+"/finalize", nil, "")
		return err == nil && (st == http.StatusOK || (a > 0 && st == http.StatusConflict))
	}) {
		return detail, []string{fmt.Sprintf("media %s: finalize never succeeded", sid)}
	}
	id, _ := validation.ParseID(sid)
	var rec storage.Media
	if !waitFinal(ctx, func() bool {
		r, err := m.s.db.Media(ctx, id)
		rec = r
		return err == nil && (r.State == storage.MediaSucceeded || r.State == storage.MediaFailed)
	}) || rec.State != storage.MediaSucceeded {
		return detail, []string{fmt.Sprintf("media %s ended %q", sid, rec.State)}
	}
	return detail, nil
}

// killAPIMidAppend kills replica B while it reads a 4 MiB segment; the
// client sends the segment again to A and the upload completes.
func (m *matrix) killAPIMidAppend(r *faultRow) {
	detail, problems := m.uploadBig(bigImage(m.t), func(sid string, body []byte, ct string) error {
		return m.inFlightKill("user", http.MethodPost, "/2/media/upload/"+sid+"/append", body, ct)
	})
	r.detail = "the append in flight: " + detail + "; sent again to the other replica"
	if len(problems) == 0 {
		r.detail += "; the upload succeeded"
	}
	r.problems = problems
}

// killAPIMidBatch kills replica B while it reads a 2,000-user audience
// batch; the client sends it again to A and it is applied once.
func (m *matrix) killAPIMidBatch(r *faultRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e := m.env
	var aud string
	if !retry(ctx, 2*time.Minute, func(int) bool {
		st, raw, err := e.callJSON(ctx, e.api(0), "user", http.MethodPost,
			"/12/accounts/"+m.s.creds.AdsAccountID+"/custom_audiences?"+url.Values{"name": {"mid-batch"}}.Encode(), nil)
		aud, _ = dataOf(raw)["id"].(string)
		return err == nil && st == http.StatusOK
	}) {
		r.problems = append(r.problems, "create audience never succeeded")
		return
	}
	var users []any
	for k := range 2000 {
		users = append(users, map[string]any{"partner_user_id": []string{fmt.Sprintf("batch-user-%d-%s", k, strings.Repeat("x", 80))}})
	}
	body, _ := json.Marshal([]any{map[string]any{"operation_type": "Update", "params": map[string]any{"users": users}}})
	path := "/12/accounts/" + m.s.creds.AdsAccountID + "/custom_audiences/" + aud + "/users"
	inFlight := m.inFlightKill("user", http.MethodPost, path, body, "application/json")
	if !retry(ctx, 2*time.Minute, func(int) bool {
		st, _, err := e.call(ctx, e.api(0), "user", http.MethodPost, path, body, "application/json")
		return err == nil && st == http.StatusOK
	}) {
		r.problems = append(r.problems, "the batch was never accepted by the other replica")
		return
	}
	var members, batches int64
	waitFinal(ctx, func() bool {
		pending, err := pgQuery[int64](ctx, e, `SELECT count(*) FROM custom_audience_batches WHERE custom_audience_id = $1 AND state = 'PENDING'`, aud)
		return err == nil && pending == 0
	})
	members, _ = pgQuery[int64](ctx, e, `SELECT count(*) FROM custom_audience_members WHERE audience_id = $1`, aud)
	batches, _ = pgQuery[int64](ctx, e, `SELECT count(*) FROM custom_audience_batches WHERE custom_audience_id = $1 AND state = 'APPLIED'`, aud)
	r.detail = fmt.Sprintf("the batch in flight: %s; sent again to the other replica: %d batch applied, %d members", outcome(inFlight), batches, members)
	if members != 2000 || batches != 1 {
		r.problems = append(r.problems, fmt.Sprintf("%d batches applied, %d members; want 1 and 2000", batches, members))
	}
}

// redisStorm creates cfg.storm compliance jobs at once and restarts Redis
// empty in the middle; every job accepted must complete.
func (m *matrix) redisStorm(r *faultRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var jobs []int64
	unknown, refused := 0, 0
	reasons := map[string]int{}
	var wg sync.WaitGroup
	for g := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range m.cfg.storm / 5 {
				id, uploaded, unk, why := m.probe.submitBody(ctx, m.env, "bearer", 2000000+g*1000+k, m.probe.upload)
				mu.Lock()
				if why != "" {
					reasons[why]++
				}
				switch {
				case uploaded:
					jobs = append(jobs, id)
				case unk:
					unknown++
				default:
					refused++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	m.redis.Crash()
	time.Sleep(time.Second)
	m.redis.Revive()
	wg.Wait()
	done := 0
	for _, id := range jobs {
		if waitFinal(ctx, func() bool {
			j, err := m.s.db.ComplianceJob(ctx, id)
			return err == nil && j.Status.Final()
		}) {
			if j, _ := m.s.db.ComplianceJob(ctx, id); j.Status == storage.JobComplete && j.ResultLines == int64(m.probe.lines) {
				done++
				continue
			}
		}
		j, _ := m.s.db.ComplianceJob(ctx, id)
		r.problems = append(r.problems, fmt.Sprintf("storm job %d: %s with %d result lines", id, j.Status, j.ResultLines))
	}
	r.detail = fmt.Sprintf("%d jobs accepted and uploaded, %d complete exactly once; %d refused or not uploaded, %d unanswered (%v)", len(jobs), done, refused, unknown, reasons)
}

// minioRestartMidUpload restarts MinIO while a 4 MiB segment streams into
// it; the client retries the segment and the upload completes.
func (m *matrix) minioRestartMidUpload(r *faultRow) {
	detail, problems := m.uploadBig(bigImage(m.t), func(sid string, body []byte, ct string) error {
		req, _ := http.NewRequest(http.MethodPost, m.env.apis[0]+"/2/media/upload/"+sid+"/append", slowBody(body, 32<<10))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", ct)
		done := make(chan error, 1)
		go func() {
			st, raw, err := m.env.send(req, "user")
			if err == nil {
				err = fmt.Errorf("answered %d %.120s", st, raw)
			}
			done <- err
		}()
		time.Sleep(time.Second)
		m.minio.Restart()
		return <-done
	})
	r.detail = "the append in flight: " + detail + "; retried"
	if len(problems) == 0 {
		r.detail += "; the upload succeeded"
	}
	r.problems = problems
}

// matrixChecks are the checks after everything settled.
type matrixChecks struct {
	queues                           string
	multipart, objects, unreferenced int
	problems, notes                  []string
}

// finalChecks looks for work left in Redis, open multipart uploads and
// unreferenced objects in the bucket.
func (m *matrix) finalChecks(ctx context.Context) matrixChecks {
	var c matrixChecks
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: m.redis.Addr})
	defer insp.Close()
	var left []string
	waitFinal(ctx, func() bool {
		left = left[:0]
		queues, err := insp.Queues()
		if err != nil {
			left = append(left, err.Error())
			return false
		}
		var parts []string
		for _, q := range queues {
			info, err := insp.GetQueueInfo(q)
			if err != nil {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: pending %d, active %d, scheduled %d, retry %d, archived %d, processed %d",
				q, info.Pending, info.Active, info.Scheduled, info.Retry, info.Archived, info.Processed))
			if info.Pending+info.Active+info.Retry > 0 {
				left = append(left, fmt.Sprintf("%s: %d pending, %d active, %d retry", q, info.Pending, info.Active, info.Retry))
			}
			if info.Archived > 0 {
				tasks, _ := insp.ListArchivedTasks(q)
				for _, task := range tasks {
					c.problems = append(c.problems, fmt.Sprintf("archived task %s (%s): %s", task.ID, task.Type, task.LastErr))
				}
			}
		}
		slices.Sort(parts)
		c.queues = strings.Join(parts, "; ")
		if len(c.problems) > 0 {
			return true
		}
		return len(left) == 0
	})
	if len(left) > 0 {
		c.problems = append(c.problems, "tasks left in Redis after settling: "+strings.Join(left, "; "))
	}

	mc := m.minio.Client(m.t)
	for u := range mc.ListIncompleteUploads(ctx, m.bucket, "", true) {
		if u.Err == nil {
			c.multipart++
			if c.multipart <= 10 {
				c.notes = append(c.notes, fmt.Sprintf("open multipart upload %s (started %s)", u.Key, u.Initiated.Format(time.RFC3339)))
			}
		}
	}
	ids, err := m.recordIDs(ctx)
	if err != nil {
		c.problems = append(c.problems, "read the record ids: "+err.Error())
	}
	for obj := range mc.ListObjects(ctx, m.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			continue
		}
		c.objects++
		if !referenced(obj.Key, ids) {
			c.unreferenced++
			if c.unreferenced <= 10 {
				c.notes = append(c.notes, "unreferenced object "+obj.Key)
			}
		}
	}
	return c
}

// referenced reports whether the record an object key belongs to exists
// (media/<id>/..., compliance/<app>/<job>/...); other keys count as
// referenced. ids holds the ids of the media and compliance jobs.
func referenced(key string, ids map[int64]bool) bool {
	if job, ok := storage.ComplianceJobOfKey(key); ok {
		return ids[job]
	}
	parts := strings.Split(key, "/")
	if len(parts) < 2 || parts[0] != "media" {
		return true
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	return err != nil || ids[n]
}

// recordIDs are the ids of every media record and compliance job (ids are
// unique across tables).
func (m *matrix) recordIDs(ctx context.Context) (map[int64]bool, error) {
	conn, err := pgx.Connect(ctx, m.s.dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(ctx, `SELECT id FROM media UNION ALL SELECT id FROM compliance_jobs`)
	list, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	ids := map[int64]bool{}
	for _, id := range list {
		ids[id] = true
	}
	return ids, err
}

// render writes the report as markdown.
func (m *matrix) render(began, workloadEnd time.Time, rows []faultRow, pickups []time.Duration, reports []familyReport, c matrixChecks) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Fault matrix (%s run, %s)\n\n", m.cfg.mode, began.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Workload %v under faults; two API replicas, two workers; PostgreSQL, Redis and MinIO of the test's own behind fault proxies.\n\n",
		workloadEnd.Sub(began).Round(time.Second))
	b.WriteString("| Fault | At | Lasted | Time to recover | Outcome |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		rec := r.recovery.Round(10 * time.Millisecond).String()
		if r.recovery < 0 {
			rec = "not recovered"
		}
		outcome := strings.Join(strings.Fields(r.detail), " ")
		if len(r.problems) > 0 {
			outcome += " **PROBLEMS: " + strings.Join(r.problems, "; ") + "**"
		}
		fmt.Fprintf(&b, "| %s | +%v | %v | %s | %s |\n", r.name, r.start.Sub(began).Round(time.Second),
			r.end.Sub(r.start).Round(10*time.Millisecond), rec, strings.TrimSpace(outcome))
	}
	if len(pickups) > 0 {
		s := slices.Clone(pickups)
		slices.Sort(s)
		fmt.Fprintf(&b, "\nWorker kill -> task taken over by another worker (%d kills mid-task): min %v, median %v, max %v.\n",
			len(s), s[0].Round(10*time.Millisecond), s[len(s)/2].Round(10*time.Millisecond), s[len(s)-1].Round(10*time.Millisecond))
	}
	b.WriteString("\n| Family | Submitted | Accepted | Unknown | Final | Exactly once | Lost | Duplicated | Settled after workload | Notes |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range reports {
		notes := strings.Join(r.notes, "; ")
		if len(r.problems) > 0 {
			notes += " **PROBLEMS: " + strings.Join(r.problems, "; ") + "**"
		}
		settled := "-"
		if !r.settled.IsZero() {
			settled = r.settled.Sub(workloadEnd).Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %s | %s |\n", r.family, r.submitted, r.accepted, r.unknown,
			r.final, r.exactlyOnce, r.lost, r.duplicated, settled, strings.TrimSpace(notes))
	}
	fmt.Fprintf(&b, "\nAfter settling: asynq queues: %s.\n", c.queues)
	fmt.Fprintf(&b, "Bucket: %d objects, %d unreferenced (record gone; within retention), %d open multipart uploads.\n", c.objects, c.unreferenced, c.multipart)
	for _, n := range c.notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	for _, p := range c.problems {
		fmt.Fprintf(&b, "- **PROBLEM: %s**\n", p)
	}
	return b.String()
}

// outcome says briefly how a request in flight during a fault ended.
func outcome(err error) string {
	if errors.Is(err, errNoAnswer) {
		return "cut off (no answer)"
	}
	return strings.Join(strings.Fields(fmt.Sprint(err)), " ")
}
