package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestInsightsWorkerKilledMidDrain kills (SIGKILL) an `aviary worker`
// while it applies a large change log, starts another, and checks that
// the aggregates end exactly equal to a direct count over the posts:
// the batch the dead worker was writing is applied once, by the next.
func TestInsightsWorkerKilledMidDrain(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 0})
	const posts = 60_000
	s.exec(`INSERT INTO users (username, country_code) VALUES ('insightful', 'BR')`)
	// Words from a small vocabulary, over 48 hours; every eleventh
	// post deleted afterwards.
	s.exec(`INSERT INTO posts (author_id, text, created_at)
		SELECT (SELECT id FROM users WHERE username = 'insightful'),
		       'w' || (g % 97) || ' v' || (g % 13) || ' #t' || (g % 7) || ' common',
		       now() - (g % 48) * interval '1 hour'
		FROM generate_series(1, $1) g`, posts)
	s.exec(`UPDATE posts SET deleted_at = now() WHERE id % 11 = 0`)

	env := []string{"AVIARY_INSIGHTS_PAIR_SAMPLE=1", "AVIARY_WORKER_QUEUES=insights=1"}
	worker := s.start("worker", env)
	total := s.backlog(t)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if n := s.backlog(t); n < total-2000 { // at least one batch committed
			if n == 0 {
				t.Fatalf("the worker applied the whole log before the kill; make it larger")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker applied nothing in 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	_ = worker.Wait()
	left := s.backlog(t)
	if left == 0 {
		t.Fatalf("the log was empty at the kill; make it larger")
	}

	s.start("worker", env)
	deadline = time.Now().Add(3 * time.Minute)
	for s.backlog(t) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the second worker left %d changes after 3 minutes", s.backlog(t))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The aggregates against a direct count: every term of the live posts
	// per hour, in BR and worldwide.
	got := s.countsBy(t, `SELECT term || '|' || country_code || '|' || to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), posts
		FROM insight_term_hours`)
	// A text "w<i> v<j> #t<k> common" counts under '', w<i>, v<j>, #t<k>,
	// t<k> and common.
	want := s.countsBy(t, `SELECT t || '|' || c || '|' || to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), count(*)
		FROM posts p,
		     unnest(ARRAY['', split_part(p.text, ' ', 1), split_part(p.text, ' ', 2), split_part(p.text, ' ', 3),
		                  substr(split_part(p.text, ' ', 3), 2), 'common']) AS t,
		     unnest(ARRAY['BR', '*']) AS c
		WHERE p.deleted_at IS NULL GROUP BY 1`)
	if len(got) != len(want) {
		t.Errorf("%d term hours, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d posts, want %d", k, got[k], n)
		}
	}
	t.Logf("killed with %d of %d changes left", left, total)
}

// backlog is the insights change log's length.
func (s *stack) backlog(t *testing.T) int64 {
	t.Helper()
	var n int64
	s.query(t, func(conn *pgx.Conn) error {
		return conn.QueryRow(context.Background(), `SELECT count(*) FROM insight_changes`).Scan(&n)
	})
	return n
}

// countsBy reads (key, count) rows.
func (s *stack) countsBy(t *testing.T, sql string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	s.query(t, func(conn *pgx.Conn) error {
		rows, err := conn.Query(context.Background(), sql)
		if err != nil {
			return err
		}
		var k string
		var n int64
		_, err = pgx.ForEachRow(rows, []any{&k, &n}, func() error { out[k] = n; return nil })
		return err
	})
	return out
}

// query runs f on a fresh connection to the stack's database.
func (s *stack) query(t testing.TB, f func(conn *pgx.Conn) error) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if err := f(conn); err != nil {
		t.Fatal(fmt.Errorf("query: %w", err))
	}
}
