package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestLoadSmoke is the short version of the load test on real processes
// (an `aviary api` and one `aviary worker` on an isolated database, Redis
// database and blob directory): 10 s of the whole mix at a low rate, then
// the scaling phase on small backlogs of every family (compliance, media,
// webhook deliveries to a receiver answering after 50 ms) drained by 1 and
// 2 workers, pinned with taskset when it is there. It asserts what must hold at any
// rate, never a timing: no 5xx and no transport error on any endpoint,
// every endpoint of the mix exercised, and every accepted compliance job,
// finalized media and do-not-reach batch completed with no task archived,
// and every scaling backlog drained, each webhook delivery received once.
func TestLoadSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin := filepath.Join(t.TempDir(), "aviary")
	build := exec.Command("go", "build", "-o", bin, "github.com/aviary-dev/aviary/cmd/aviary")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build aviary: %v\n%s", err, out)
	}
	_, redisDB := storagetest.RedisDB(t)
	b := backends{DatabaseURL: storagetest.NewDatabaseURL(t), BlobDir: t.TempDir(),
		RedisURL: "redis://" + storagetest.RedisAddr() + "/" + strconv.Itoa(redisDB)}
	logDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := startStack(ctx, bin, b, 1, 2, []string{"AVIARY_RECONCILE_INTERVAL=200ms"}, logDir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	defer dumpLogs(t, logDir)

	_, noTaskset := exec.LookPath("taskset")
	o := options{rate: 20, duration: 10 * time.Second, sample: 2 * time.Second, idsLines: 50,
		scaleJobs: 6, scaleLines: 200, scaleFams: "all", scaleWork: "1,2", scalePin: noTaskset == nil,
		scaleMedia: 4, scaleHooks: 4, scalePosts: 3, scaleDelay: 50 * time.Millisecond}
	rep, err := load(ctx, s, o)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.write(&out)
	t.Log("\n" + out.String())

	if n := rep.res.fiveXX(); n != 0 {
		t.Errorf("%d answers were 5xx or transport errors", n)
	}
	wantEndpoints := []string{"GET /2/tweets/{id}", "GET /2/tweets/search/recent", "GET /2/users/me", "POST /2/tweets",
		"POST /2/media/upload/initialize", "POST /2/media/upload/{id}/append", "POST /2/media/upload/{id}/finalize",
		"POST /2/compliance/jobs", "PUT /2/compliance/jobs/{id}/upload",
		"POST /12/batch/accounts/{id}/do_not_reach_lists/{id}/users"}
	for _, e := range wantEndpoints {
		if m := rep.res.endpoints[e]; m == nil || m.Requests == 0 {
			t.Errorf("endpoint %s never called; called: %v", e, sortedKeys(rep.res.endpoints))
		}
	}
	c := rep.done
	if !c.done() || c.jobsFailed != 0 || c.mediaFailed != 0 || c.batchesFailed != 0 || c.tasksArchived != 0 {
		t.Errorf("accepted work did not all complete: %+v", c)
	}
	if c.jobsAccepted == 0 || c.mediaFinalized == 0 || c.batchesAccepted == 0 {
		t.Errorf("no job of some family was accepted: %+v", c)
	}
	checkScale(t, rep.scale, 2)
}

// checkScale asserts every scaling run drained its whole backlog exactly
// once (webhooks: each delivery received once, correctly signed), for
// every family and number of workers.
func checkScale(t *testing.T, runs []scaleRun, perFamily int) {
	t.Helper()
	for _, r := range runs {
		if r.items == 0 || r.complete != r.items || r.duplicates != 0 {
			t.Errorf("%s, %d workers: %d of %d %s complete, %d duplicate", r.family, r.workers, r.complete, r.items, r.unit, r.duplicates)
		}
		if len(r.use.workers) != r.workers {
			t.Errorf("%s: CPU of %d workers read, want %d", r.family, len(r.use.workers), r.workers)
		}
	}
	if len(runs) != len(allFamilies)*perFamily {
		t.Errorf("scaling phase ran %d times, want %d (%v x %d)", len(runs), len(allFamilies)*perFamily, allFamilies, perFamily)
	}
}

func TestEndpointOf(t *testing.T) {
	cases := []struct{ method, url, want string }{
		{"GET", "http://127.0.0.1:1/2/tweets/12345?expansions=author_id", "GET /2/tweets/{id}"},
		{"GET", "http://127.0.0.1:1/2/tweets/search/recent?query=a", "GET /2/tweets/search/recent"},
		{"POST", "http://h/2/media/upload/77/append", "POST /2/media/upload/{id}/append"},
		{"PUT", "http://h/2/compliance/jobs/9/upload?sig=x#9", "PUT /2/compliance/jobs/{id}/upload"},
		{"POST", "http://h/12/batch/accounts/abc1/do_not_reach_lists/x9z/users", "POST /12/batch/accounts/{id}/do_not_reach_lists/{id}/users"},
	}
	for _, c := range cases {
		if got := endpointOf(c.method, c.url); got != c.want {
			t.Errorf("endpointOf(%s %s) = %q, want %q", c.method, c.url, got, c.want)
		}
	}
}

func TestWindow(t *testing.T) {
	var samples []sample
	for i := range 13 { // 0 s .. 120 s every 10 s: 10 MB, then 20 MB from 60 s
		v := 10.0
		if i >= 6 {
			v = 20
		}
		samples = append(samples, sample{at: time.Duration(i) * 10 * time.Second, api: v})
	}
	first, last := window(samples, func(s sample) float64 { return s.api })
	if first != 10 || last != 20 {
		t.Fatalf("window = %v, %v; want 10, 20", first, last)
	}
}

// dumpLogs prints the processes' logs when the test failed.
func dumpLogs(t *testing.T, dir string) {
	if !t.Failed() {
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		t.Logf("== %s\n%s", e.Name(), b)
	}
}
