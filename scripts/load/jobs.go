package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// completion is the records' account of the work the load handed over.
type completion struct {
	jobsAccepted, jobsComplete, jobsFailed      int
	mediaFinalized, mediaOpen, mediaFailed      int
	batchesAccepted, batchesOpen, batchesFailed int
	tasksOpen, tasksArchived                    int
	waited                                      time.Duration
}

func (c completion) done() bool {
	return c.jobsComplete+c.jobsFailed == c.jobsAccepted && c.mediaOpen == 0 && c.batchesOpen == 0 && c.tasksOpen == 0
}

// waitCompletion polls the records until every accepted compliance job,
// finalized media and do-not-reach batch is final (or timeout).
func waitCompletion(ctx context.Context, s *stack, m *mix, timeout time.Duration) (completion, error) {
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		return completion{}, fmt.Errorf("open database: %w", err)
	}
	defer pool.Close()
	insp := inspector(s)
	defer insp.Close()
	m.mu.Lock()
	jobs := append([]string(nil), m.jobs...)
	c := completion{jobsAccepted: len(jobs), mediaFinalized: m.finals, batchesAccepted: m.batches}
	m.mu.Unlock()
	start := time.Now()
	for {
		if err := readCompletion(ctx, pool, jobs, &c); err != nil {
			return c, err
		}
		if c.tasksOpen, c.tasksArchived, err = pendingTasks(insp); err != nil {
			return c, err
		}
		c.waited = time.Since(start)
		if c.done() || c.waited > timeout {
			return c, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func readCompletion(ctx context.Context, pool *pgxpool.Pool, jobs []string, c *completion) error {
	err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'complete'), count(*) FILTER (WHERE status = 'failed')
		FROM compliance_jobs WHERE id::text = ANY($1)`, jobs).Scan(&c.jobsComplete, &c.jobsFailed)
	if err != nil {
		return fmt.Errorf("read compliance jobs: %w", err)
	}
	err = pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state IN ('pending', 'in_progress')), count(*) FILTER (WHERE state = 'failed')
		FROM media`).Scan(&c.mediaOpen, &c.mediaFailed)
	if err != nil {
		return fmt.Errorf("read media: %w", err)
	}
	err = pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'PENDING'), count(*) FILTER (WHERE state = 'FAILED')
		FROM do_not_reach_batches`).Scan(&c.batchesOpen, &c.batchesFailed)
	if err != nil {
		return fmt.Errorf("read do-not-reach batches: %w", err)
	}
	return nil
}

// scaleRun is one backlog drained by a number of workers.
type scaleRun struct {
	workers     int
	concurrency int
	jobs        int
	lines       int
	drain       time.Duration // workers started to every job complete
	span        time.Duration // first started_at to last completed_at
	complete    int
	perMinute   float64 // over span
	cores       float64 // CPU the workers used over the drain
}

// scale measures job throughput with 1 and then 2 workers: with the
// workers stopped it creates a backlog of jobs compliance jobs of lines ids
// each, spread over the stack's apps (one job per app runs at a time, so
// the apps bound the parallelism), uploaded so only the workers' part is
// left; it starts n workers and times until the records show every job
// complete.
func scale(ctx context.Context, s *stack, c *client, m *mix, jobs, lines, concurrency int, timeout time.Duration) ([]scaleRun, error) {
	var env []string
	if concurrency > 0 {
		env = append(env, fmt.Sprintf("AVIARY_WORKER_CONCURRENCY=%d", concurrency))
	}
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	defer pool.Close()
	var runs []scaleRun
	for _, n := range []int{1, 2} {
		s.stopWorkers()
		ids := make([]string, 0, jobs)
		for i := range jobs {
			id, err := c.complianceJob(ctx, c.bearers[i%len(c.bearers)], m.idsFile(lines))
			if err != nil {
				return runs, fmt.Errorf("backlog: %w", err)
			}
			ids = append(ids, id)
		}
		start := time.Now()
		for range n {
			if err := s.addWorker(env...); err != nil {
				return runs, err
			}
		}
		r := scaleRun{workers: n, concurrency: concurrency, jobs: jobs, lines: lines}
		for {
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM compliance_jobs WHERE status = 'complete' AND id::text = ANY($1)`, ids).Scan(&r.complete); err != nil {
				return runs, fmt.Errorf("read backlog: %w", err)
			}
			r.drain = time.Since(start)
			if r.complete == jobs || r.drain > timeout {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, pid := range s.workerPIDs() { // the workers started with the drain
			r.cores += procTicks(pid) / clockTicks / r.drain.Seconds()
		}
		var secs float64
		if err := pool.QueryRow(ctx, `SELECT COALESCE(EXTRACT(EPOCH FROM max(completed_at) - min(started_at)), 0)::float8
			FROM compliance_jobs WHERE status = 'complete' AND id::text = ANY($1)`, ids).Scan(&secs); err != nil {
			return runs, fmt.Errorf("read backlog span: %w", err)
		}
		r.span = time.Duration(secs * float64(time.Second))
		if r.span <= 0 {
			r.span = r.drain
		}
		r.perMinute = float64(r.complete) / r.span.Minutes()
		runs = append(runs, r)
	}
	return runs, nil
}
