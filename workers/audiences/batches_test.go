package audiences

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/sweep/sweeptest"
)

// queue records the tasks a sweeper enqueues.
type queue struct{ tasks []*asynq.Task }

func (q *queue) EnqueueContext(_ context.Context, t *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.tasks = append(q.tasks, t)
	return &asynq.TaskInfo{}, nil
}

// batches makes an account and an audience of db, and records batches of
// one update under an idempotency key.
func batches(t *testing.T, db *postgres.DB) (storage.AdAccount, storage.CustomAudienceView, func(key string) storage.AudienceBatch) {
	t.Helper()
	ctx := context.Background()
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	return acct, aud, func(k string) storage.AudienceBatch {
		b, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID, IdempotencyKey: k,
			Operations: []storage.AudienceOperation{{Type: storage.AudienceUpdate, Users: 1, Keys: []storage.MemberKey{factory.MemberKey(1, k)},
				EffectiveAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// TestSweepReenqueuesLostBatch: a batch recorded while Redis was away is
// enqueued by the sweep once the grace passed, and the task applies it;
// FinalFailure of an exhausted task fails a pending batch.
func TestSweepReenqueuesLostBatch(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	acct, aud, record := batches(t, db)
	lost := record("lost")
	q := &queue{}
	s := &sweep.Sweeper[storage.Batch]{Source: &sweep.Batches{Kind: storage.AudienceBatches, Task: tasks.AudienceBatch, Store: db}, Queue: q, Clock: time.Now}
	if err := s.Tick(ctx); err != nil || len(q.tasks) != 0 {
		t.Fatalf("tick within the grace: %v, %d tasks", err, len(q.tasks))
	}
	s.Clock = func() time.Time { return time.Now().Add(time.Minute) }
	if err := s.Tick(ctx); err != nil || len(q.tasks) != 1 {
		t.Fatalf("tick: %v, %d tasks; want 1", err, len(q.tasks))
	}
	task := q.tasks[0]
	payload, err := tasks.AudienceBatch.Parse(task)
	if err != nil || task.Type() != tasks.TypeAudienceApplyBatch || payload.BatchID != lost.ID {
		t.Fatalf("task %s %+v, %v; want the batch %s", task.Type(), payload, err, lost.ID)
	}
	p := NewProcessor(db, nil)
	if err := p.ProcessTask(ctx, task); err != nil {
		t.Fatalf("process: %v", err)
	}
	got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false)
	if err != nil || got.AudienceSize != 1 || got.InFlight != 0 {
		t.Fatalf("audience after the swept batch: %+v, %v", got, err)
	}

	exhausted := record("exhausted")
	task, _ = tasks.AudienceBatch.New(exhausted.ID)
	p.FinalFailure(ctx, task, tasks.AudienceBatchMaxRetry+1, errors.New("database down"))
	if err := p.ProcessTask(ctx, task); err != nil {
		t.Fatalf("process after the final failure: %v", err)
	}
	got, err = db.CustomAudience(ctx, acct.ID, aud.ID, false)
	if err != nil || got.AudienceSize != 1 || got.InFlight != 0 {
		t.Errorf("audience after the failed batch: %+v, %v; want size 1, nothing in flight", got, err)
	}
}

// TestSweepLeavesBatchItsRunHolds: a pending batch whose run holds its
// lease is not enqueued a second time; a killed run's batch is, once its
// lease lapses.
func TestSweepLeavesBatchItsRunHolds(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	_, _, record := batches(t, db)
	b := record("held")
	q := &queue{}
	s := &sweep.Sweeper[storage.Batch]{Source: &sweep.Batches{Kind: storage.AudienceBatches, Task: tasks.AudienceBatch, Store: db}, Queue: q, Leases: db,
		Clock: func() time.Time { return time.Now().Add(time.Minute) }}
	sweeptest.HeldWork(t, db, tasks.AudienceBatch.TaskID(b.ID), func() {
		if err := s.Tick(ctx); err != nil {
			t.Fatalf("tick: %v", err)
		}
	}, func() bool { return len(q.tasks) > 0 })
}
