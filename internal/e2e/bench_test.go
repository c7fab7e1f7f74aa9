package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// The benchmarks of issue 7 (docs/benchmarks.md). Each workload runs through
// the real stack and then through its ceiling, a bare program under
// scripts/ceiling doing only the unavoidable work, in the same run on the
// same database; both figures and their ratio are reported (never asserted).
// scripts/bench runs them and prints the summary table.
//
//	go test ./internal/e2e -run '^$' -bench 'GetJob|Compliance/lines=1000000$' -benchtime 1x

// benchEnv reads a benchmark knob (see docs/benchmarks.md).
func benchEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// benchAviaryEnv is BENCH_AVIARY_ENV: extra KEY=VALUE settings (separated
// by spaces) for every Aviary process of a benchmark, applied last.
func benchAviaryEnv(env ...string) []string {
	return append(env, strings.Fields(os.Getenv("BENCH_AVIARY_ENV"))...)
}

func benchInt(b *testing.B, name string, def int) int {
	n, err := strconv.Atoi(benchEnv(name, strconv.Itoa(def)))
	if err != nil || n < 1 {
		b.Fatalf("%s: want a positive integer, got %q", name, os.Getenv(name))
	}
	return n
}

var (
	toolsMu sync.Mutex
	tools   = map[string]string{}
)

// buildTool builds a package main of this module (a ceiling program) once
// per test binary and returns the executable's path.
func buildTool(b *testing.B, pkg string) string {
	b.Helper()
	toolsMu.Lock()
	defer toolsMu.Unlock()
	if path, ok := tools[pkg]; ok {
		return path
	}
	path := filepath.Join(filepath.Dir(binary), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", path, "github.com/aviary-dev/aviary/"+pkg).CombinedOutput()
	if err != nil {
		b.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	tools[pkg] = path
	return path
}

// BenchmarkGetJob is workload 1: GET /2/compliance/jobs/{id} with a bearer
// token under wrk (32 connections by default) against an `aviary api`
// process (rate limits evaluated, scaled so none refuses), then against
// scripts/ceiling/get on the same database and job. It reports both
// throughputs, their ratio and the API's RSS during and after the run.
func BenchmarkGetJob(b *testing.B) {
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Skip("wrk is not installed (scripts/bench installs it)")
	}
	scale := benchEnv("BENCH_RATE_LIMIT_SCALE", "1000000")
	s := newStack(b, stackOptions{driver: "local", env: benchAviaryEnv("AVIARY_RATE_LIMIT_SCALE=" + scale)})
	id := s.createJob("tweets", "bench-get")["id"].(string)
	path := "/2/compliance/jobs/" + id
	// The limiter must run (as in production), just never refuse.
	if resp := s.do(http.MethodGet, path, s.bearer(), nil); resp.Status != http.StatusOK || resp.Header.Get("x-rate-limit-limit") == "" {
		b.Fatalf("GET %s: %d, x-rate-limit-limit %q: %s", path, resp.Status, resp.Header.Get("x-rate-limit-limit"), resp.Raw)
	}
	ceilingAddr := fmt.Sprintf("127.0.0.1:%d", freePort(b))
	ceiling := startTool(b, buildTool(b, "scripts/ceiling/get"), "-db", s.dbURL, "-addr", ceilingAddr)
	waitHTTP(b, "http://"+ceilingAddr+"/healthz")
	if resp, err := http.Get("http://" + ceilingAddr + path); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("ceiling GET %s: %v %v", path, resp, err)
	} else {
		resp.Body.Close()
	}

	w := wrkSettings{
		threads:     benchInt(b, "BENCH_WRK_THREADS", 2),
		connections: benchInt(b, "BENCH_WRK_CONNECTIONS", 32),
		duration:    benchEnv("BENCH_WRK_DURATION", "10s"),
		warmup:      benchEnv("BENCH_WRK_WARMUP", "2s"),
		authz:       s.bearer(),
	}
	apiPid := s.api.Process.Pid
	b.ResetTimer()
	var aviary, bare float64
	var maxRSS, requests, commands int64
	for i := 0; i < b.N; i++ {
		w.run(b, s.baseURL+path, w.warmup)
		stop := sampleRSS(apiPid, &maxRSS)
		before := redisCommands(b)
		perfDone := perfRecord(b, apiPid, w.duration, "")
		rate, n := w.run(b, s.baseURL+path, w.duration)
		commands += redisCommands(b) - before - 1
		perfDone()
		stop()
		aviary, requests = aviary+rate, requests+n
		w.run(b, "http://"+ceilingAddr+path, w.warmup)
		perfDone = perfRecord(b, ceiling.Process.Pid, w.duration, ".ceiling")
		rate, _ = w.run(b, "http://"+ceilingAddr+path, w.duration)
		perfDone()
		bare += rate
	}
	b.StopTimer()
	hwm := procStatusKB(b, apiPid, "VmHWM")
	b.ReportMetric(aviary/float64(b.N), "req/s")
	b.ReportMetric(bare/float64(b.N), "ceiling-req/s")
	b.ReportMetric(aviary/bare, "ratio")
	b.ReportMetric(float64(maxRSS)/1024, "api-RSS-MB")
	b.ReportMetric(float64(max(hwm, maxRSS))/1024, "api-peak-RSS-MB") // VmHWM lags VmRSS a little
	if requests > 0 {
		b.ReportMetric(float64(commands)/float64(requests), "redis-cmds/req")
	}
}

type wrkSettings struct {
	threads, connections int
	duration, warmup     string
	authz                string
}

var (
	wrkRate   = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkTotal  = regexp.MustCompile(`(\d+) requests in`)
	wrkNon2xx = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkErrors = regexp.MustCompile(`Socket errors:.*`)
)

// run drives url with wrk for d and returns requests per second and the
// number of requests; any non-2xx answer (a refusal by the limiter, an
// error) fails the benchmark.
func (w wrkSettings) run(b *testing.B, url, d string) (float64, int64) {
	b.Helper()
	out, err := exec.Command("wrk", "-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.connections),
		"-d", d, "-H", "Authorization: "+w.authz, url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk %s: %v\n%s", url, err, out)
	}
	if m := wrkNon2xx.FindSubmatch(out); m != nil {
		b.Fatalf("wrk %s: %s non-2xx answers (rate limited? raise BENCH_RATE_LIMIT_SCALE)\n%s", url, m[1], out)
	}
	if m := wrkErrors.Find(out); m != nil {
		b.Logf("wrk %s: %s", url, m)
	}
	m := wrkRate.FindSubmatch(out)
	if m == nil {
		b.Fatalf("wrk %s: no Requests/sec in\n%s", url, out)
	}
	rate, _ := strconv.ParseFloat(string(m[1]), 64)
	var total int64
	if m := wrkTotal.FindSubmatch(out); m != nil {
		total, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	return rate, total
}

// perfRecord, when BENCH_PERF_OUT names a file, samples pid's CPU with
// `perf record -g` for d (the measured run) into it plus suffix; the
// returned func waits for perf. Read it with `perf report -i FILE
// --no-children`.
func perfRecord(b *testing.B, pid int, d, suffix string) (wait func()) {
	b.Helper()
	out := os.Getenv("BENCH_PERF_OUT")
	if out == "" {
		return func() {}
	}
	out += suffix
	secs, err := time.ParseDuration(d)
	if err != nil {
		b.Fatalf("BENCH_WRK_DURATION %q: %v", d, err)
	}
	cmd := exec.Command("perf", "record", "-F", "499", "-g", "-p", strconv.Itoa(pid), "-o", out,
		"--", "sleep", strconv.FormatFloat(secs.Seconds(), 'f', -1, 64))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf record: %v", err)
	}
	return func() {
		if err := cmd.Wait(); err != nil {
			b.Logf("perf record: %v\n%s", err, stderr.Bytes())
		}
	}
}

// redisCommands is the Redis server's total_commands_processed (server-wide:
// other clients of the same server count too).
func redisCommands(b *testing.B) int64 {
	b.Helper()
	c := redis.NewClient(&redis.Options{Addr: storagetest.RedisAddr()})
	defer c.Close()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		b.Fatalf("redis INFO: %v", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatalf("redis INFO stats: no total_commands_processed")
	return 0
}

// sampleRSS records the largest VmRSS of pid (kB) into max every 100 ms until
// the returned stop is called.
func sampleRSS(pid int, max *int64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if kb, err := readProcKB(pid, "VmRSS"); err == nil && kb > *max {
				*max = kb
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// startTool runs a ceiling program until the benchmark ends.
func startTool(b *testing.B, path string, args ...string) *exec.Cmd {
	b.Helper()
	cmd := exec.Command(path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", path, err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if b.Failed() {
			b.Logf("---- %s stderr ----\n%s", filepath.Base(path), tail(stderr.Bytes(), 4000))
		}
	})
	return cmd
}

func waitHTTP(b *testing.B, url string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatalf("%s not answering after 30s", url)
}

// BenchmarkCompliance is workloads 2 and 3: one tweets compliance job per
// iteration (one line in ten a seeded post, 100,000 posts, every seventh
// deleted; the other nine unknown ids) through the real stack (API and one
// worker process, PostgreSQL, Redis, MinIO), timed from the start of the
// upload to `complete`, then the same file through scripts/ceiling/job on
// the same database. Aviary's time runs from the start of the PUT to the
// job's completed_at. It reports both ids/s, their ratio, the worker's own
// processing rate (started_at to completed_at) and the worker's peak RSS.
//
//	go test ./internal/e2e -run '^$' -bench 'Compliance/lines=1000000$' -benchtime 1x
func BenchmarkCompliance(b *testing.B) {
	for _, lines := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) { benchCompliance(b, lines) })
	}
}

func benchCompliance(b *testing.B, lines int) {
	// The production reconciler tick (the e2e tests use 200 ms), so a job
	// waits for the tick exactly as long as it would in production.
	reconcile := "AVIARY_RECONCILE_INTERVAL=" + benchEnv("BENCH_RECONCILE_INTERVAL", "2s")
	s := newStack(b, stackOptions{driver: "s3", env: benchAviaryEnv(reconcile)})
	worker := s.start("worker", nil)
	posts := s.seedPosts(100_000)
	upload, want := s.benchUpload(posts, lines)
	s.settle(b)
	file := filepath.Join(b.TempDir(), "upload.txt")
	if err := os.WriteFile(file, []byte(upload), 0o600); err != nil {
		b.Fatal(err)
	}
	ceiling := buildTool(b, "scripts/ceiling/job")
	ceilingArgs := []string{"-db", s.dbURL, "-in", file,
		// The worker's batch size (workers/compliance.Processor.batchSize):
		// keep the two equal.
		"-batch", strconv.Itoa(benchInt(b, "BENCH_CEILING_BATCH", 10000)),
		"-inflight", strconv.Itoa(benchInt(b, "BENCH_CEILING_INFLIGHT", 2))}
	ceilingRuns := benchInt(b, "BENCH_CEILING_RUNS", 3)
	idleRSS := procStatusKB(b, worker.Process.Pid, "VmRSS")
	b.ResetTimer()
	var total, processing, bare, uploading, waiting time.Duration
	for i := 0; i < b.N; i++ {
		job := s.createJob("tweets", fmt.Sprintf("bench-%d", i))
		start := time.Now()
		s.upload(job["upload_url"].(string), upload)
		uploaded := time.Now()
		final := s.waitJob(job["id"].(string), 30*time.Minute)
		b.StopTimer()
		if final["status"] != string(storage.JobComplete) {
			b.Fatalf("job ended %v", final["status"])
		}
		if got := s.download(final["download_url"].(string)); got != want {
			b.Fatalf("result differs: %d bytes, want %d", len(got), len(want))
		}
		// The job's completed_at (same host clock), not the moment the
		// 200 ms poll saw it: the poll interval is not Aviary's time.
		rec := s.jobRecord(job["id"].(string))
		total += rec.CompletedAt.Sub(start)
		processing += rec.CompletedAt.Sub(*rec.StartedAt)
		uploading += uploaded.Sub(start)
		waiting += rec.StartedAt.Sub(uploaded)
		// The ceiling is the best of a few runs: it is meant to be the
		// fastest this machine does the unavoidable work.
		best := time.Duration(0)
		for r := 0; r < ceilingRuns; r++ {
			d := runJobCeiling(b, ceiling, ceilingArgs, lines, want)
			b.Logf("ceiling run %d: %s", r+1, d)
			if best == 0 || d < best {
				best = d
			}
		}
		bare += best
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N * lines)
	b.ReportMetric(n/total.Seconds(), "ids/s")
	b.ReportMetric(n/bare.Seconds(), "ceiling-ids/s")
	b.ReportMetric(bare.Seconds()/total.Seconds(), "ratio")
	b.ReportMetric(n/processing.Seconds(), "processing-ids/s")
	b.ReportMetric(float64(procStatusKB(b, worker.Process.Pid, "VmHWM"))/1024, "worker-peak-RSS-MB")
	b.ReportMetric(float64(idleRSS)/1024, "worker-idle-RSS-MB")
	b.ReportMetric(float64(len(upload))/1e6, "upload-MB")
	// Where Aviary's time went: the PUT, upload end to started_at, started_at
	// to completed_at (seconds per job).
	per := float64(b.N)
	b.ReportMetric(uploading.Seconds()/per, "upload-s")
	b.ReportMetric(waiting.Seconds()/per, "wait-s")
	b.ReportMetric(processing.Seconds()/per, "processing-s")
}

// benchUpload renders the upload: lines ids of which one in ten is a
// seeded post (cycling through posts) and nine in ten are unknown ids of the
// same width, and the exact result the job must produce.
func (s *stack) benchUpload(posts []int64, lines int) (upload, want string) {
	s.t.Helper()
	statuses, err := s.db.PostStatuses(context.Background(), posts)
	if err != nil {
		s.t.Fatalf("load statuses: %v", err)
	}
	deleted := map[int64]storage.PostStatus{}
	last := posts[0]
	for _, st := range statuses {
		if st.DeletedAt != nil {
			deleted[st.ID] = st
		}
		last = max(last, st.ID)
	}
	var up, res strings.Builder
	up.Grow(lines * 20)
	w := bufio.NewWriterSize(&up, 64<<10)
	for i := 0; i < lines; i++ {
		id := last + 1 + int64(i) // unknown: above every seeded post
		if i%10 == 0 {
			id = posts[(i/10)%len(posts)]
		}
		w.WriteString(strconv.FormatInt(id, 10))
		w.WriteByte('\n')
		if st, ok := deleted[id]; ok {
			res.WriteString(resultLine(id, st.CreatedAt, *st.DeletedAt, "deleted") + "\n")
		}
	}
	w.Flush()
	return up.String(), res.String()
}

// runJobCeiling runs scripts/ceiling/job once, checks that it produced
// exactly the job's result, and returns the time it reports.
func runJobCeiling(b *testing.B, path string, args []string, lines int, want string) time.Duration {
	b.Helper()
	out := filepath.Join(b.TempDir(), "ceiling-result.jsonl")
	cmd := exec.Command(path, append(args, "-out", out)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		b.Fatalf("ceiling job: %v\n%s", err, stderr.Bytes())
	}
	var r struct {
		Lines   int     `json:"lines"`
		Seconds float64 `json:"seconds"`
	}
	if err := json.Unmarshal(stdout, &r); err != nil || r.Lines != lines {
		b.Fatalf("ceiling job: %v, output %s", err, stdout)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	if string(got) != want {
		b.Fatalf("ceiling result differs from the job's: %d bytes, want %d", len(got), len(want))
	}
	_ = os.Remove(out)
	return time.Duration(r.Seconds * float64(time.Second))
}

// procStatusKB reads a kB field (VmRSS, VmHWM) of a process from /proc.
func procStatusKB(tb testing.TB, pid int, field string) int64 {
	tb.Helper()
	kb, err := readProcKB(pid, field)
	if err != nil {
		tb.Fatal(err)
	}
	return kb
}

func readProcKB(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read /proc status of %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s %q: %w", field, rest, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// settle waits until the work the seeding set off is done, so the job and
// its ceiling run on a quiet database: the worker has applied the seeded
// posts' keyword insight changes (docs/insights.md; 100,000 posts keep it
// busy for tens of seconds) and the tables are vacuumed and analyzed, as
// autovacuum leaves a table that is not being loaded.
func (s *stack) settle(b *testing.B) {
	b.Helper()
	s.query(b, func(conn *pgx.Conn) error {
		ctx := context.Background()
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
			var pending int64
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM insight_changes`).Scan(&pending); err != nil {
				return fmt.Errorf("count insight changes: %w", err)
			}
			if pending == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the worker left %d insight changes after 5 minutes", pending)
			}
		}
		_, err := conn.Exec(ctx, `VACUUM (ANALYZE) posts, users`)
		return err
	})
}
