package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/validation"
)

// exec runs SQL against the stack's database (test set-up and fault
// injection only; the code under test never sees it).
func (s *stack) exec(sql string, args ...any) {
	s.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		s.t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		s.t.Fatalf("exec %q: %v", sql, err)
	}
}

// seedPosts inserts n posts by one user, every seventh deleted, and returns
// their ids in insertion order.
func (s *stack) seedPosts(n int) []int64 {
	s.t.Helper()
	s.exec(`INSERT INTO users (username) VALUES ('bulk')`)
	s.exec(`INSERT INTO posts (author_id, text, deleted_at)
		SELECT (SELECT id FROM users WHERE username = 'bulk'), 'bulk ' || g,
		       CASE WHEN g % 7 = 0 THEN now() END
		FROM generate_series(1, $1) g`, n)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		s.t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT id FROM posts ORDER BY id`)
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		s.t.Fatalf("load seeded ids: %v", err)
	}
	return out
}

// bulkUpload renders lines ids (cycling through posts) and the exact result
// the platform must produce for them.
func (s *stack) bulkUpload(posts []int64, lines int) (upload, want string) {
	s.t.Helper()
	ctx := context.Background()
	statuses, err := s.db.PostStatuses(ctx, posts)
	if err != nil {
		s.t.Fatalf("load statuses: %v", err)
	}
	deleted := map[int64]storage.PostStatus{}
	for _, st := range statuses {
		if st.DeletedAt != nil {
			deleted[st.ID] = st
		}
	}
	var up, res strings.Builder
	for i := 0; i < lines; i++ {
		id := posts[i%len(posts)]
		fmt.Fprintf(&up, "%d\n", id)
		if st, ok := deleted[id]; ok {
			res.WriteString(resultLine(id, st.CreatedAt, *st.DeletedAt, "deleted") + "\n")
		}
	}
	return up.String(), res.String()
}

// startBulkJob seeds posts, starts one worker (with extraEnv), uploads a
// 2,000,000-line tweets job and returns once the worker has it in progress,
// with the exact result the job must produce.
func (s *stack) startBulkJob(name string, extraEnv []string) (job map[string]any, worker *exec.Cmd, want string) {
	s.t.Helper()
	posts := s.seedPosts(50_000)
	upload, want := s.bulkUpload(posts, 2_000_000)
	job = s.createJob("tweets", name)
	worker = s.start("worker", extraEnv)
	s.upload(job["upload_url"].(string), upload)
	deadline := time.Now().Add(60 * time.Second)
	for s.jobRecord(job["id"].(string)).Status != storage.JobInProgress {
		if time.Now().After(deadline) {
			s.t.Fatalf("job never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return job, worker, want
}

func (s *stack) jobRecord(id string) storage.ComplianceJob {
	s.t.Helper()
	n, _ := validation.ParseID(id)
	j, err := s.db.ComplianceJob(context.Background(), n)
	if err != nil {
		s.t.Fatalf("load job %s: %v", id, err)
	}
	return j
}

func TestWorkerKilledMidJobCompletesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the rescue of the killed run (about 15 s)")
	}
	s := newStack(t, stackOptions{driver: "s3", workers: 0})
	job, worker, want := s.startBulkJob("killed", nil)
	id := job["id"].(string)
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	_ = worker.Wait()
	if rec := s.jobRecord(id); rec.Status != storage.JobInProgress {
		t.Fatalf("job finished before the kill (%s); make the upload larger", rec.Status)
	}
	resp, err := http.Get(job["download_url"].(string))
	if err != nil {
		t.Fatalf("download after kill: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a partial result is visible after the kill: HTTP %d", resp.StatusCode)
	}

	s.start("worker", nil)
	final := s.waitJob(id, 4*time.Minute)
	if final["status"] != string(storage.JobComplete) {
		t.Fatalf("job ended %v", final["status"])
	}
	if got := s.download(final["download_url"].(string)); got != want {
		t.Fatalf("result differs from expected: %d bytes, want %d", len(got), len(want))
	}
	rec := s.jobRecord(id)
	if rec.Attempts != 2 || rec.LinesRead != 2_000_000 || rec.ResultLines != int64(strings.Count(want, "\n")) {
		t.Fatalf("attempts=%d lines=%d results=%d; want 2, 2000000, %d", rec.Attempts, rec.LinesRead, rec.ResultLines, strings.Count(want, "\n"))
	}
}

func TestRedisDownWhenUploadArrives(t *testing.T) {
	_, db := storagetest.RedisDB(t)
	px := storagetest.NewProxy(t, storagetest.RedisAddr())
	// The API keeps its own Redis connection; the workers reach Redis only
	// through the proxy.
	s := newStackWithRedisDB(t, stackOptions{driver: "s3", workers: 1, workerRedisURL: fmt.Sprintf("redis://%s/%d", px.Addr(), db)}, db)
	w := buildWorld(s)
	job := s.createJob("tweets", "redis-down")
	px.SetDown(true)
	s.upload(job["upload_url"].(string), ids.Format(w.posts["alice-deleted"])+"\n")
	time.Sleep(3 * time.Second) // fifteen reconcile intervals without Redis
	if st := s.jobRecord(job["id"].(string)).Status; st != storage.JobCreated {
		t.Fatalf("job moved to %s while the workers had no Redis", st)
	}
	px.SetDown(false)
	final := s.waitJob(job["id"].(string), 60*time.Second)
	if final["status"] != string(storage.JobComplete) {
		t.Fatalf("job ended %v", final["status"])
	}
	p := s.mustPost(w.posts["alice-deleted"])
	if got, want := s.download(final["download_url"].(string)), resultLine(p.ID, p.CreatedAt, *p.DeletedAt, "deleted")+"\n"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
}

func TestComplianceJobFailures(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1})
	t.Run("upload window expired", func(t *testing.T) {
		job := s.createJob("users", "expired")
		s.exec(`UPDATE compliance_jobs SET upload_expires_at = now() - interval '1 hour' WHERE id = $1`, job["id"])
		final := s.waitJob(job["id"].(string), 30*time.Second)
		checkFailed(t, s, final, "No file was uploaded before the upload URL expired")
	})
	t.Run("unreadable upload", func(t *testing.T) {
		job := s.createJob("users", "gzip")
		s.upload(job["upload_url"].(string), "\x1f\x8b\x08\x00binary")
		final := s.waitJob(job["id"].(string), 30*time.Second)
		checkFailed(t, s, final, "gzip-compressed")
	})
}

func checkFailed(t *testing.T, s *stack, job map[string]any, reason string) {
	t.Helper()
	if job["status"] != string(storage.JobFailed) {
		t.Fatalf("job status %v, want failed", job["status"])
	}
	resp := s.do(http.MethodGet, "/2/compliance/jobs/"+job["id"].(string), s.bearer(), nil)
	errs, _ := resp.Body["errors"].([]any)
	if len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["detail"].(string), reason) || errs[0].(map[string]any)["status"] != nil {
		t.Fatalf("failed job errors %v; want a reason containing %q", resp.Body["errors"], reason)
	}
}
