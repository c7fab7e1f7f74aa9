package audiences

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
	"github.com/aviary-dev/aviary/workers/sweep"
	"github.com/aviary-dev/aviary/workers/sweep/sweeptest"
)

func TestCheckContent(t *testing.T) {
	tests := []struct {
		name string
		keys []storage.MemberKey
		want string // "" for accepted, else a part of the error
	}{
		{"normalized digests", []storage.MemberKey{factory.MemberKey(storage.IdentEmail, "jane@example.com"), factory.MemberKey(storage.IdentHandle, "adsapi")}, ""},
		{"empty email", []storage.MemberKey{factory.MemberKey(storage.IdentEmail, "a@b.c"), factory.MemberKey(storage.IdentEmail, "")}, `identifier 1 (email) is the SHA-256 of ""`},
		{"blank phone", []storage.MemberKey{factory.MemberKey(storage.IdentPhoneNumber, " ")}, "phone_number"},
		{"placeholder handle", []storage.MemberKey{factory.MemberKey(storage.IdentHandle, "null")}, `"null"`},
		{"partner ids are exempt", []storage.MemberKey{factory.MemberKey(storage.IdentPartnerUserID, "")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckContent([]storage.AudienceOperation{{Type: storage.AudienceUpdate, Keys: tc.keys}})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

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

// recordFor records a one-operation batch of keys on a new audience's
// account; it returns the store, the audience and the batch.
func recordFor(t *testing.T, ops ...storage.AudienceOperation) (*postgres.DB, storage.CustomAudienceView, storage.AudienceBatch) {
	t.Helper()
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID, IdempotencyKey: "k", Operations: ops})
	if err != nil {
		t.Fatal(err)
	}
	return db, aud, b
}

func operation(kind string, values ...string) storage.AudienceOperation {
	op := storage.AudienceOperation{Type: kind, Users: len(values), EffectiveAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	for _, v := range values {
		op.Keys = append(op.Keys, factory.MemberKey(storage.IdentEmail, v))
	}
	return op
}

// TestWorkerFailsMidTransaction: the batch's Delete fails after its Update
// ran (a trigger raising, as a killed worker's transaction would end):
// nothing is applied and the batch stays pending; the retry applies it
// exactly once.
func TestWorkerFailsMidTransaction(t *testing.T) {
	db, aud, b := recordFor(t, operation(storage.AudienceUpdate, "m0", "m1", "m2", "m3", "m4"), operation(storage.AudienceDelete, "m0", "m1"))
	ctx := context.Background()
	dbURL, _ := storagetest.DatabaseURL(db)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE FUNCTION fail_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'worker killed'; END $$`)
	exec(`CREATE TRIGGER fail_delete BEFORE DELETE ON custom_audience_members FOR EACH ROW EXECUTE FUNCTION fail_delete()`)
	p := NewProcessor(db, nil)
	task, _ := tasks.AudienceBatch.New(b.ID)
	if err := p.ProcessTask(ctx, task); err == nil || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("apply with a failing delete: %v, want a retryable error", err)
	}
	got, err := db.CustomAudience(ctx, aud.OwnerAccountID, aud.ID, false)
	if err != nil || got.AudienceSize != 0 || got.InFlight != 1 {
		t.Fatalf("after the failure: %+v, %v; want size 0, the batch in flight", got, err)
	}
	exec(`DROP TRIGGER fail_delete ON custom_audience_members`)
	if err := p.ProcessTask(ctx, task); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if err := p.ProcessTask(ctx, task); err != nil {
		t.Fatalf("the task delivered again: %v", err)
	}
	got, err = db.CustomAudience(ctx, aud.OwnerAccountID, aud.ID, false)
	if err != nil || got.AudienceSize != 3 || got.InFlight != 0 {
		t.Errorf("after the retry: %+v, %v; want size 3, nothing in flight", got, err)
	}
}

// TestWorkerContentCheck: a digest of the empty string passes the API's
// shape check; the worker refuses the batch (failed, no retry) and the
// audience stops showing it in flight.
func TestWorkerContentCheck(t *testing.T) {
	bad := operation(storage.AudienceUpdate, "a@example.com")
	bad.Keys = append(bad.Keys, factory.MemberKey(storage.IdentPhoneNumber, ""))
	db, aud, b := recordFor(t, bad)
	ctx := context.Background()
	p := NewProcessor(db, nil)
	task, _ := tasks.AudienceBatch.New(b.ID)
	err := p.ProcessTask(ctx, task)
	if err == nil || !errors.Is(err, asynq.SkipRetry) || !strings.Contains(err.Error(), "phone_number") {
		t.Fatalf("apply: %v, want an error naming phone_number without retry", err)
	}
	got, err := db.CustomAudience(ctx, aud.OwnerAccountID, aud.ID, false)
	if err != nil || got.AudienceSize != 0 || got.InFlight != 0 {
		t.Errorf("after the refused batch: %+v, %v; want size 0, nothing in flight", got, err)
	}
}

// TestAudienceExpiredMembers: a member whose expires_at passed stops
// counting in audience_size at once; the Expiry sweep deletes it and lowers
// the stored audience_size in the same transaction, so the size stays
// exact (stored = member rows = shown), and a second tick finds nothing.
func TestAudienceExpiredMembers(t *testing.T) {
	db, aud, b := recordFor(t, operation(storage.AudienceUpdate, "m0", "m1", "m2", "m3", "m4"))
	ctx := context.Background()
	task, _ := tasks.AudienceBatch.New(b.ID)
	if err := NewProcessor(db, nil).ProcessTask(ctx, task); err != nil {
		t.Fatalf("apply: %v", err)
	}
	dbURL, _ := storagetest.DatabaseURL(db)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	expired := [][]byte{}
	for _, v := range []string{"m0", "m3"} {
		k := factory.MemberKey(storage.IdentEmail, v)
		expired = append(expired, k[:])
	}
	if _, err := conn.Exec(ctx, `UPDATE custom_audience_members SET expires_at = now() - interval '1 second'
		WHERE audience_id = $1 AND member_key = ANY($2)`, aud.ID, expired); err != nil {
		t.Fatal(err)
	}
	// ... and the audience's earliest expiry with them, as the batch that
	// set those expiries would have.
	if _, err := conn.Exec(ctx, `UPDATE custom_audiences SET members_expire_at = now() - interval '1 second' WHERE id = $1`, aud.ID); err != nil {
		t.Fatal(err)
	}
	sizes := func() (stored, rows, shown int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT audience_size, (SELECT count(*) FROM custom_audience_members WHERE audience_id = $1)
			FROM custom_audiences WHERE id = $1`, aud.ID).Scan(&stored, &rows); err != nil {
			t.Fatal(err)
		}
		v, err := db.CustomAudience(ctx, aud.OwnerAccountID, aud.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		list, err := db.ListCustomAudiences(ctx, storage.CustomAudienceFilter{AccountID: aud.OwnerAccountID}, storage.ListOptions{Count: 10,
			Sort: storage.Sort{Field: "created_at"}})
		if err != nil || len(list.Items) != 1 || list.Items[0].AudienceSize != v.AudienceSize {
			t.Fatalf("list = %+v, %v; want the audience of size %d", list.Items, err, v.AudienceSize)
		}
		return stored, rows, v.AudienceSize
	}
	if stored, rows, shown := sizes(); stored != 5 || rows != 5 || shown != 3 {
		t.Fatalf("before the sweep: stored %d, rows %d, shown %d; want 5, 5, 3", stored, rows, shown)
	}
	s := &sweep.Sweeper[string]{Source: sweep.Expiry(storage.AudienceBatches, db, nil), Clock: time.Now}
	if err := s.Tick(ctx); err != nil {
		t.Fatalf("tick: %v", err)
	}
	if stored, rows, shown := sizes(); stored != 3 || rows != 3 || shown != 3 {
		t.Fatalf("after the sweep: stored %d, rows %d, shown %d; want 3, 3, 3", stored, rows, shown)
	}
	if due, err := db.AudiencesWithExpiredMembers(ctx, time.Now(), 10); err != nil || len(due) != 0 {
		t.Errorf("audiences with expired members after the sweep: %v, %v", due, err)
	}
	// An expired member named again by an Update is live again; by a
	// Delete, removed: either way the count stays exact.
	if _, err := conn.Exec(ctx, `UPDATE custom_audience_members SET expires_at = now() - interval '1 second'
		WHERE audience_id = $1`, aud.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE custom_audiences SET members_expire_at = now() - interval '1 second' WHERE id = $1`, aud.ID); err != nil {
		t.Fatal(err)
	}
	b2, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: aud.OwnerAccountID, AudienceID: aud.ID, IdempotencyKey: "k2",
		BodySHA256: "k2", RetryWindow: time.Hour, Operations: []storage.AudienceOperation{
			operation(storage.AudienceUpdate, "m1"), operation(storage.AudienceDelete, "m2")}})
	if err != nil {
		t.Fatal(err)
	}
	task, _ = tasks.AudienceBatch.New(b2.ID)
	if err := NewProcessor(db, nil).ProcessTask(ctx, task); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if stored, rows, shown := sizes(); stored != 2 || rows != 2 || shown != 1 {
		t.Fatalf("after refreshing m1 and deleting m2: stored %d, rows %d, shown %d; want 2, 2, 1", stored, rows, shown)
	}
	if err := s.Tick(ctx); err != nil {
		t.Fatalf("tick: %v", err)
	}
	if stored, rows, shown := sizes(); stored != 1 || rows != 1 || shown != 1 {
		t.Errorf("after the second sweep: stored %d, rows %d, shown %d; want 1, 1, 1", stored, rows, shown)
	}
}

// TestEarliestExpiryFollowsBatches: a batch lowers its audience's earliest
// expiry to its members' (so the expiry sweep and readers find expired
// members without an index on every member's expiry); the sweep removes
// them and recomputes it from the members left.
func TestEarliestExpiryFollowsBatches(t *testing.T) {
	soon, later := operation(storage.AudienceUpdate, "s0", "s1"), operation(storage.AudienceUpdate, "l0")
	soon.ExpiresAt = time.Now().Add(-time.Second) // already past: what a clock moving on does
	later.ExpiresAt = time.Now().Add(time.Hour)
	db, aud, b := recordFor(t, soon, later)
	ctx := context.Background()
	task, _ := tasks.AudienceBatch.New(b.ID)
	if err := NewProcessor(db, nil).ProcessTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	due, err := db.AudiencesWithExpiredMembers(ctx, time.Now(), 10)
	if err != nil || len(due) != 1 || due[0] != aud.ID {
		t.Fatalf("due audiences %v, %v; want %s", due, err, aud.ID)
	}
	if v, err := db.CustomAudience(ctx, aud.OwnerAccountID, aud.ID, false); err != nil || v.AudienceSize != 1 {
		t.Fatalf("shown size %d, %v; want 1 (two members expired)", v.AudienceSize, err)
	}
	s := &sweep.Sweeper[string]{Source: sweep.Expiry(storage.AudienceBatches, db, nil), Clock: time.Now}
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if due, err := db.AudiencesWithExpiredMembers(ctx, time.Now(), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after the sweep %v, %v; want none", due, err)
	}
	if due, err := db.AudiencesWithExpiredMembers(ctx, later.ExpiresAt.Add(time.Second), 10); err != nil || len(due) != 1 {
		t.Fatalf("due once the later member expires %v, %v; want the audience", due, err)
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
