// Command load drives a fixed-rate mix of reads, writes, media uploads,
// compliance jobs and ads batches at an Aviary stack with vegeta (issue 32,
// docs/load.md) and prints, as markdown: per endpoint p50/p90/p99/max and
// errors by status, the API's and workers' RSS every -sample, tasks
// processed per queue, whether every accepted job completed, and the job
// throughput of 1 and then 2 (or more) worker replicas draining the same
// backlog of each job family: compliance and media (CPU-bound) and webhook
// deliveries to a receiver that answers after a fixed delay (bounded by
// the workers' concurrency), with the CPU every process used.
//
//	make load                                   # 10 minutes, own stack
//	go run ./scripts/load -rate 20 -duration 30s -out var/load.md
//	go run ./scripts/load -scale-only -scale-workers 1,2,4 -scale-pin
//	go run ./scripts/load -base-url http://localhost:8080 -creds var/demo-credentials.json \
//	    -redis-url redis://127.0.0.1:6379/0 -database-url postgres://... -api-pid N
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

type options struct {
	bin         string
	rate        float64
	duration    time.Duration
	sample      time.Duration
	workers     int
	apps        int
	idsLines    int
	scaleJobs   int
	scaleLines  int
	scaleConc   int
	scaleOnly   bool
	scaleFams   string
	scaleWork   string
	scalePin    bool
	scaleMedia  int
	scaleImage  int
	scaleHooks  int
	scalePosts  int
	scaleDelay  time.Duration
	out         string
	logDir      string
	env         string
	baseURL     string
	credsFile   string
	redisURL    string
	databaseURL string
	apiPID      int
	workerPIDs  string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/aviary", "the aviary binary (make build)")
	flag.Float64Var(&o.rate, "rate", 40, "requests per second of the whole mix")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "length of the attack")
	flag.DurationVar(&o.sample, "sample", 10*time.Second, "RSS and queue sampling interval")
	flag.IntVar(&o.workers, "workers", 1, "worker replicas during the attack")
	flag.IntVar(&o.apps, "apps", 8, "extra apps the compliance jobs are spread over (one job per app runs at a time)")
	flag.IntVar(&o.idsLines, "ids", 100, "ids per compliance job of the mix")
	flag.IntVar(&o.scaleJobs, "scale-jobs", 60, "compliance jobs in each scaling backlog (0: no scaling phase)")
	flag.IntVar(&o.scaleLines, "scale-ids", 20000, "ids per compliance job of the scaling backlog")
	flag.IntVar(&o.scaleConc, "scale-concurrency", 0, "AVIARY_WORKER_CONCURRENCY of the scaling workers (0: the default, 8)")
	flag.BoolVar(&o.scaleOnly, "scale-only", false, "run the scaling phase alone (no mix)")
	flag.StringVar(&o.scaleFams, "scale-families", "all", "job families of the scaling phase: compliance,media,webhooks or all")
	flag.StringVar(&o.scaleWork, "scale-workers", "1,2", "worker replicas of each scaling run, comma-separated")
	flag.BoolVar(&o.scalePin, "scale-pin", false, "pin scaling worker i to CPU i mod NumCPU with taskset (the rest stays unpinned)")
	flag.IntVar(&o.scaleMedia, "scale-media", 60, "images in each media scaling backlog")
	flag.IntVar(&o.scaleImage, "scale-image", 64, "side of the media backlog's PNG (64: the mix's gradient; larger: pseudo-random pixels, CPU in proportion)")
	flag.IntVar(&o.scaleHooks, "scale-webhooks", 64, "webhooks of the webhooks scaling family (one app; AVIARY_WEBHOOKS_MAX is raised to it)")
	flag.IntVar(&o.scalePosts, "scale-posts", 25, "matching posts in each webhooks backlog (each delivered to every webhook)")
	flag.DurationVar(&o.scaleDelay, "scale-hook-delay", 200*time.Millisecond, "the webhook receiver's answer delay (a slow endpoint)")
	flag.StringVar(&o.out, "out", "", "also write the markdown report to this file")
	flag.StringVar(&o.logDir, "logs", "", "directory of the processes' logs (default: a temporary one, kept)")
	flag.StringVar(&o.env, "env", "", "extra KEY=VALUE settings for the aviary processes, comma-separated")
	flag.StringVar(&o.baseURL, "base-url", "", "attach to this running API instead of starting a stack")
	flag.StringVar(&o.credsFile, "creds", "var/demo-credentials.json", "attach: `aviary admin bootstrap --json` output")
	flag.StringVar(&o.redisURL, "redis-url", "", "attach: the stack's Redis URL (queue figures)")
	flag.StringVar(&o.databaseURL, "database-url", "", "attach: the stack's database URL (completion check)")
	flag.IntVar(&o.apiPID, "api-pid", 0, "attach: the API's pid (RSS)")
	flag.StringVar(&o.workerPIDs, "worker-pids", "", "attach: the workers' pids, comma-separated (RSS)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		slog.Error("load", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, stdout io.Writer) error {
	s, cleanup, err := openStack(ctx, o)
	if err != nil {
		return err
	}
	defer cleanup()
	rep, err := load(ctx, s, o)
	if err != nil {
		return err
	}
	rep.write(stdout)
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return fmt.Errorf("create %s: %w", o.out, err)
		}
		defer f.Close()
		rep.write(f)
	}
	return nil
}

// openStack attaches to a running stack (-base-url) or starts one on an
// isolated database, Redis database and blob directory.
func openStack(ctx context.Context, o options) (*stack, func(), error) {
	if o.baseURL != "" {
		return attachStack(o)
	}
	dbURL, drop, err := storagetest.CreateDatabase(ctx)
	if err != nil {
		return nil, nil, err
	}
	addr, db, release, err := storagetest.ClaimRedisDB(ctx, 3*time.Minute)
	if err != nil {
		drop()
		return nil, nil, err
	}
	blobs, err := os.MkdirTemp("", "aviary-load-blobs-")
	if err != nil {
		release()
		drop()
		return nil, nil, fmt.Errorf("blob dir: %w", err)
	}
	logDir := o.logDir
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "aviary-load-logs-"); err != nil {
			return nil, nil, fmt.Errorf("log dir: %w", err)
		}
	}
	var env []string
	if o.env != "" {
		env = strings.Split(o.env, ",")
	}
	b := backends{DatabaseURL: dbURL, RedisURL: fmt.Sprintf("redis://%s/%d", addr, db), BlobDir: blobs}
	s, err := startStack(ctx, o.bin, b, o.workers, o.apps, env, logDir)
	cleanup := func() {
		if s != nil {
			s.stop()
		}
		os.RemoveAll(blobs)
		release()
		drop()
		slog.Info("load: process logs kept", "dir", logDir)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return s, cleanup, nil
}

func attachStack(o options) (*stack, func(), error) {
	b, err := os.ReadFile(o.credsFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read credentials: %w", err)
	}
	s := &stack{baseURL: strings.TrimSuffix(o.baseURL, "/"), redisURL: o.redisURL, dbURL: o.databaseURL, apiPID: o.apiPID}
	if err := json.Unmarshal(b, &s.creds); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", o.credsFile, err)
	}
	for _, p := range strings.Split(o.workerPIDs, ",") {
		if pid, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
			s.extPIDs = append(s.extPIDs, pid)
		}
	}
	return s, func() {}, nil
}

// load seeds posts and the do-not-reach list, runs the attack, waits for
// the work it handed over and, on a stack of its own, the scaling phase.
func load(ctx context.Context, s *stack, o options) (*report, error) {
	c := newClient(s)
	posts := newRing(2000)
	for i := range 50 {
		id, err := c.createPost(ctx, fmt.Sprintf("seed %d %d: hello aviary #load", time.Now().UnixNano(), i))
		if err != nil {
			return nil, fmt.Errorf("seed posts: %w", err)
		}
		posts.add(id)
	}
	var list string // the scaling phase alone sends no batch
	if !o.scaleOnly {
		var err error
		if list, err = c.doNotReachList(ctx); err != nil {
			return nil, fmt.Errorf("do-not-reach list: %w", err)
		}
	}
	m, err := newMix(c, posts, list, o.idsLines)
	if err != nil {
		return nil, err
	}
	rep := &report{rate: o.rate, duration: o.duration, workers: len(s.workerPIDs()), startedAt: time.Now(), scaleOnly: o.scaleOnly}
	if !o.scaleOnly {
		rep.res, rep.samples, rep.queues = attack(ctx, s, m, o.rate, o.duration, o.sample)
		rep.dropped = m.dropped.Load()
		if s.dbURL != "" && s.redisURL != "" {
			if rep.done, err = waitCompletion(ctx, s, m, 5*time.Minute); err != nil {
				return nil, err
			}
		}
	}
	if s.bin != "" && o.scaleJobs > 0 {
		so, err := o.scaleOptions()
		if err != nil {
			return nil, err
		}
		rep.scalePin = so.pin
		if rep.scale, err = scale(ctx, s, c, m, so); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// scaleOptions are the scaling phase's flags.
func (o options) scaleOptions() (scaleOptions, error) {
	so := scaleOptions{pin: o.scalePin, concurrency: o.scaleConc, jobs: o.scaleJobs, lines: o.scaleLines,
		media: o.scaleMedia, imageSide: o.scaleImage, hooks: o.scaleHooks, hookPosts: o.scalePosts, hookDelay: o.scaleDelay, timeout: 10 * time.Minute}
	var err error
	if so.families, err = parseFamilies(o.scaleFams); err != nil {
		return so, err
	}
	if so.workers, err = parseInts(o.scaleWork); err != nil {
		return so, fmt.Errorf("-scale-workers %w", err)
	}
	return so, nil
}
