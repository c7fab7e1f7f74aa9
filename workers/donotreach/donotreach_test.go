package donotreach_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/donotreach"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/sweep/sweeptest"
)

// env is a database with one account's list and a connection of the
// test's own.
type env struct {
	db   *postgres.DB
	conn *pgx.Conn
	acct string
	list string
}

func newEnv(t *testing.T) env {
	t.Helper()
	db, dbURL := storagetest.NewDB(t)
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	acct := factory.AdAccount(t, db, nil)
	l, err := db.CreateDoNotReachList(t.Context(), acct.ID, nil)
	if err != nil {
		t.Fatalf("create list: %v", err)
	}
	return env{db: db, conn: conn, acct: acct.ID, list: l.ID}
}

// record records a batch updating n made-up emails; it returns its task.
func (e env) record(t *testing.T, key string, n int) *asynq.Task {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "e:" + strings.Repeat("0", 60) + key + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	b, err := e.db.RecordDoNotReachBatch(t.Context(), storage.NewDoNotReachBatch{AccountID: e.acct, ListID: e.list,
		RequestKey: key, BodySHA256: key, RetryWindow: time.Hour, Operations: []storage.DoNotReachOperation{
			{Type: storage.DoNotReachUpdate, ExpiresAt: time.Now().Add(time.Hour), Keys: keys, Count: n}}})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	task, err := tasks.DoNotReachBatch.New(b.ID)
	if err != nil {
		t.Fatalf("task: %v", err)
	}
	return task
}

// size is the list's list_size as stored.
func (e env) size(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := e.conn.QueryRow(t.Context(), `SELECT list_size FROM do_not_reach_lists WHERE id = $1`, e.list).Scan(&n); err != nil {
		t.Fatalf("size: %v", err)
	}
	return n
}

// The Processor applies a batch once however often its task runs, and a
// run killed mid-transaction leaves nothing behind: the retry counts
// exactly.
func TestProcessorAppliesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := donotreach.NewProcessor(e.db, nil)
	task := e.record(t, "ab", 30)
	// Kill the first run mid-batch: it waits on the list's lock until its
	// deadline ends the transaction.
	tx, err := e.conn.Begin(t.Context())
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM do_not_reach_lists WHERE id = $1 FOR UPDATE`, e.list); err != nil {
		t.Fatalf("lock: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	err = p.ProcessTask(ctx, task)
	cancel()
	if err == nil {
		t.Fatal("killed run succeeded")
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if n := e.size(t); n != 0 {
		t.Fatalf("size after killed run = %d, want 0", n)
	}
	for range 3 {
		if err := p.ProcessTask(t.Context(), task); err != nil {
			t.Fatalf("process: %v", err)
		}
	}
	var entries int64
	if err := e.conn.QueryRow(t.Context(), `SELECT count(*) FROM do_not_reach_entries WHERE list_id = $1`, e.list).Scan(&entries); err != nil {
		t.Fatalf("entries: %v", err)
	}
	if n := e.size(t); n != 30 || entries != 30 {
		t.Fatalf("size %d, entries %d after 3 runs; want 30, 30", n, entries)
	}
}

// A bad payload is not retried; a batch that no longer exists is done.
func TestProcessorPayloads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := donotreach.NewProcessor(e.db, nil)
	cases := []struct {
		name     string
		payload  string
		wantSkip bool
	}{
		{"not JSON", `{`, true},
		{"no batch id", `{}`, true},
		{"unknown batch", `{"batch_id":"gone"}`, false},
	}
	for _, tc := range cases {
		err := p.ProcessTask(t.Context(), asynq.NewTask(tasks.TypeDoNotReachApply, []byte(tc.payload)))
		if got := errors.Is(err, asynq.SkipRetry); got != tc.wantSkip || (!tc.wantSkip && err != nil) {
			t.Errorf("%s: err %v, want skip retry %v", tc.name, err, tc.wantSkip)
		}
	}
}

// The Batches source enqueues the task of a batch whose task was lost;
// the Processor run on that task applies it, and the batch is no longer
// due.
func TestBatchesSweepReenqueues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.record(t, "lost", 5) // recorded, never enqueued
	addr, n := storagetest.RedisDB(t)
	opt := asynq.RedisClientOpt{Addr: addr, DB: n}
	queue, insp := asynq.NewClient(opt), asynq.NewInspector(opt)
	t.Cleanup(func() { queue.Close(); insp.Close() })
	s := &sweep.Sweeper[storage.Batch]{Source: &sweep.Batches{Kind: storage.DoNotReachBatches, Task: tasks.DoNotReachBatch, Store: e.db}, Queue: queue, Inspector: insp}
	if err := s.Tick(t.Context()); err != nil {
		t.Fatalf("tick: %v", err)
	}
	infos, err := insp.ListPendingTasks(tasks.QueueAudiences)
	if err != nil || len(infos) != 1 || infos[0].Type != tasks.TypeDoNotReachApply {
		t.Fatalf("pending = %v, %v; want one apply task", infos, err)
	}
	if err := donotreach.NewProcessor(e.db, nil).ProcessTask(t.Context(), asynq.NewTask(infos[0].Type, infos[0].Payload)); err != nil {
		t.Fatalf("process: %v", err)
	}
	if got := e.size(t); got != 5 {
		t.Fatalf("size %d, want 5", got)
	}
	due, err := e.db.BatchesDue(t.Context(), storage.DoNotReachBatches, time.Now(), 10)
	if err != nil || len(due) != 0 {
		t.Fatalf("due after apply = %v, %v; want none", due, err)
	}
}

// The Expiry source removes expired entries and lowers the stored
// list_size in the same transaction.
func TestExpirySweepRemovesExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := donotreach.NewProcessor(e.db, nil).ProcessTask(t.Context(), e.record(t, "ex", 10)); err != nil {
		t.Fatalf("process: %v", err)
	}
	if _, err := e.conn.Exec(t.Context(), `UPDATE do_not_reach_entries SET expires_at = now() - interval '1 second'
		WHERE list_id = $1 AND member_key IN (SELECT member_key FROM do_not_reach_entries WHERE list_id = $1 LIMIT 4)`, e.list); err != nil {
		t.Fatalf("expire: %v", err)
	}
	s := &sweep.Sweeper[string]{Source: sweep.Expiry(storage.DoNotReachBatches, e.db, nil)}
	if err := s.Tick(t.Context()); err != nil {
		t.Fatalf("tick: %v", err)
	}
	l, err := e.db.DoNotReachList(t.Context(), e.acct, e.list, false)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if got := e.size(t); got != 6 || l.ListSize != 6 {
		t.Fatalf("stored size %d, shown %d; want 6, 6", got, l.ListSize)
	}
}

// TestBatchesSweepLeavesBatchItsRunHolds: do-not-reach batches follow
// the task lease rule as audience batches do: a pending batch whose run
// holds its lease is not enqueued a second time; a killed run's batch is,
// once its lease lapses.
func TestBatchesSweepLeavesBatchItsRunHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := e.record(t, "held", 3)
	payload, err := tasks.DoNotReachBatch.Parse(task)
	if err != nil {
		t.Fatal(err)
	}
	q := &recorded{}
	s := &sweep.Sweeper[storage.Batch]{Source: &sweep.Batches{Kind: storage.DoNotReachBatches, Task: tasks.DoNotReachBatch, Store: e.db}, Queue: q, Leases: e.db}
	sweeptest.HeldWork(t, e.db, tasks.DoNotReachBatch.TaskID(payload.BatchID), func() {
		if err := s.Tick(t.Context()); err != nil {
			t.Fatalf("tick: %v", err)
		}
	}, func() bool { return len(q.tasks) > 0 })
}

// TestFinalFailureFailsBatch: a batch whose task will not run again is
// FAILED: no longer due, its list PROCESSING until the list's next batch
// applies both.
func TestFinalFailureFailsBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := donotreach.NewProcessor(e.db, nil)
	failed := e.record(t, "failed", 2)
	p.FinalFailure(t.Context(), failed, tasks.DoNotReachMaxRetry+1, errors.New("database down"))
	if due, err := e.db.BatchesDue(t.Context(), storage.DoNotReachBatches, time.Now(), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after the final failure = %v, %v; want none", due, err)
	}
	if l, err := e.db.DoNotReachList(t.Context(), e.acct, e.list, false); err != nil || !l.InFlight {
		t.Fatalf("list after the final failure: %+v, %v; want in flight", l, err)
	}
	if err := p.ProcessTask(t.Context(), e.record(t, "next", 3)); err != nil {
		t.Fatalf("process the next batch: %v", err)
	}
	if l, err := e.db.DoNotReachList(t.Context(), e.acct, e.list, false); err != nil || l.InFlight || e.size(t) != 5 {
		t.Fatalf("list after the next batch: %+v, %v, size %d; want both applied (5)", l, err, e.size(t))
	}
}

// recorded keeps the tasks a sweeper enqueues.
type recorded struct{ tasks []*asynq.Task }

func (q *recorded) EnqueueContext(_ context.Context, t *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.tasks = append(q.tasks, t)
	return &asynq.TaskInfo{}, nil
}
