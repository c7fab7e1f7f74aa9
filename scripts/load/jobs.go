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
