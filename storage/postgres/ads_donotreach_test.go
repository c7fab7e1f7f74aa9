package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// dnrKey is the member key of a made-up email digest ending in c.
func dnrKey(c string) string { return "e:" + strings.Repeat("0", 63) + c }

// dnrBatch records a batch of one operation per (type, key) pair.
func dnrBatch(t *testing.T, db *postgres.DB, acct, list, requestKey string, ops ...storage.DoNotReachOperation) storage.DoNotReachBatch {
	t.Helper()
	b, err := db.RecordDoNotReachBatch(t.Context(), storage.NewDoNotReachBatch{AccountID: acct, ListID: list,
		RequestKey: requestKey, BodySHA256: requestKey, Operations: ops, RetryWindow: time.Hour})
	if err != nil {
		t.Fatalf("record batch: %v", err)
	}
	return b
}

func dnrOp(typ string, expires time.Time, keys ...string) storage.DoNotReachOperation {
	return storage.DoNotReachOperation{Type: typ, ExpiresAt: expires, Keys: keys, Count: len(keys)}
}

func newDNRList(t *testing.T, db *postgres.DB) (storage.AdAccount, storage.DoNotReachList) {
	t.Helper()
	acct := factory.AdAccount(t, db, nil)
	l, err := db.CreateDoNotReachList(t.Context(), acct.ID, nil)
	if err != nil {
		t.Fatalf("create list: %v", err)
	}
	return acct, l
}

func loadDNR(t *testing.T, db *postgres.DB, acct, id string) storage.DoNotReachList {
	t.Helper()
	l, err := db.DoNotReachList(t.Context(), acct, id, true)
	if err != nil {
		t.Fatalf("load list: %v", err)
	}
	return l
}

// Batches apply in the order they were recorded, whichever task runs
// first, each once, with an exact list_size.
func TestDoNotReachApplyInOrder(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	acct, l := newDNRList(t, db)
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	b1 := dnrBatch(t, db, acct.ID, l.ID, "1",
		dnrOp(storage.DoNotReachUpdate, later, dnrKey("a"), dnrKey("b")),
		dnrOp(storage.DoNotReachUpdate, later.Add(time.Hour), dnrKey("b"), dnrKey("c")))
	b2 := dnrBatch(t, db, acct.ID, l.ID, "2", dnrOp(storage.DoNotReachDelete, later, dnrKey("b"), dnrKey("z")))
	b3 := dnrBatch(t, db, acct.ID, l.ID, "3", dnrOp(storage.DoNotReachUpdate, later, dnrKey("d")))
	if got := loadDNR(t, db, acct.ID, l.ID); !got.InFlight || got.ListSize != 0 {
		t.Fatalf("before apply: in flight %v size %d, want true 0", got.InFlight, got.ListSize)
	}
	steps := []struct {
		batch          string
		wantBatches    int
		added, removed int64
	}{
		{b2.ID, 2, 3, 1}, // applies b1 then b2
		{b1.ID, 0, 0, 0}, // already applied
		{b3.ID, 1, 1, 0},
		{b3.ID, 0, 0, 0}, // a retried task
	}
	for _, st := range steps {
		res, err := db.ApplyDoNotReachBatch(t.Context(), st.batch)
		if err != nil {
			t.Fatalf("apply %s: %v", st.batch, err)
		}
		if res.Batches != st.wantBatches || res.Added != st.added || res.Removed != st.removed {
			t.Fatalf("apply %s = %+v, want %d batches +%d -%d", st.batch, res, st.wantBatches, st.added, st.removed)
		}
	}
	got := loadDNR(t, db, acct.ID, l.ID)
	if got.InFlight || got.ListSize != 3 {
		t.Fatalf("after apply: in flight %v size %d, want false 3 (a, c, d)", got.InFlight, got.ListSize)
	}
	if _, err := db.ApplyDoNotReachBatch(t.Context(), "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("apply unknown batch: %v, want ErrNotFound", err)
	}
}

// A request key seen within the retry window returns the recorded batch;
// with another body it is refused; a deleted or another account's list
// records nothing.
func TestDoNotReachRecordRetry(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	acct, l := newDNRList(t, db)
	other, _ := newDNRList(t, db)
	later := time.Now().Add(time.Hour)
	n := storage.NewDoNotReachBatch{AccountID: acct.ID, ListID: l.ID, RequestKey: "key:k", BodySHA256: "x",
		Operations: []storage.DoNotReachOperation{dnrOp(storage.DoNotReachUpdate, later, dnrKey("a"))}, RetryWindow: time.Hour}
	first, err := db.RecordDoNotReachBatch(t.Context(), n)
	if err != nil || first.Replayed {
		t.Fatalf("record: %+v, %v", first, err)
	}
	again, err := db.RecordDoNotReachBatch(t.Context(), n)
	if err != nil || !again.Replayed || again.ID != first.ID || len(again.Operations) != 1 {
		t.Fatalf("retry: %+v, %v; want the first batch replayed", again, err)
	}
	changed := n
	changed.BodySHA256 = "y"
	if _, err := db.RecordDoNotReachBatch(t.Context(), changed); !errors.Is(err, storage.ErrRequestKeyReused) {
		t.Fatalf("key with another body: %v, want ErrRequestKeyReused", err)
	}
	foreign := n
	foreign.AccountID = other.ID
	if _, err := db.RecordDoNotReachBatch(t.Context(), foreign); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another account's list: %v, want ErrNotFound", err)
	}
	if _, err := db.DeleteDoNotReachList(t.Context(), acct.ID, l.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	n.RequestKey = "key:other"
	if _, err := db.RecordDoNotReachBatch(t.Context(), n); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted list: %v, want ErrNotFound", err)
	}
}

// An account has one live list; deleting it makes room for another, and
// a second delete is ErrNotFound.
func TestDoNotReachOneLiveList(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	acct, l := newDNRList(t, db)
	if _, err := db.CreateDoNotReachList(t.Context(), acct.ID, nil); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("second list: %v, want ErrConflict", err)
	}
	del, err := db.DeleteDoNotReachList(t.Context(), acct.ID, l.ID)
	if err != nil || !del.Deleted {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	if _, err := db.DeleteDoNotReachList(t.Context(), acct.ID, l.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := db.CreateDoNotReachList(t.Context(), acct.ID, nil); err != nil {
		t.Fatalf("list after delete: %v", err)
	}
}

// Expired entries stop counting at once; the cleanup removes them and
// lowers list_size by as many, so the size shown never changes.
func TestDoNotReachExpiry(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	acct, l := newDNRList(t, db)
	later := time.Now().Add(time.Hour)
	b := dnrBatch(t, db, acct.ID, l.ID, "1", dnrOp(storage.DoNotReachUpdate, later, dnrKey("a"), dnrKey("b"), dnrKey("c")))
	if _, err := db.ApplyDoNotReachBatch(t.Context(), b.ID); err != nil {
		t.Fatalf("apply: %v", err)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `UPDATE do_not_reach_entries SET expires_at = now() - interval '1 minute'
		WHERE list_id = $1 AND member_key <> $2`, l.ID, dnrKey("a")); err != nil {
		t.Fatalf("expire entries: %v", err)
	}
	if got := loadDNR(t, db, acct.ID, l.ID).ListSize; got != 1 {
		t.Fatalf("size with 2 expired entries = %d, want 1", got)
	}
	lists, err := db.DoNotReachListsWithExpired(t.Context(), time.Now(), 10)
	if err != nil || len(lists) != 1 || lists[0] != l.ID {
		t.Fatalf("lists with expired entries = %v, %v; want [%s]", lists, err, l.ID)
	}
	for _, want := range []int64{1, 1, 0} { // in chunks of 1
		n, err := db.RemoveExpiredDoNotReachEntries(t.Context(), l.ID, time.Now(), 1)
		if err != nil || n != want {
			t.Fatalf("remove expired = %d, %v; want %d", n, err, want)
		}
	}
	var stored int64
	if err := conn.QueryRow(t.Context(), `SELECT list_size FROM do_not_reach_lists WHERE id = $1`, l.ID).Scan(&stored); err != nil {
		t.Fatalf("stored size: %v", err)
	}
	if got := loadDNR(t, db, acct.ID, l.ID).ListSize; got != 1 || stored != 1 {
		t.Fatalf("after cleanup: size %d, stored %d; want 1, 1", got, stored)
	}
}

// TestDoNotReachBatchStates: a batch failed by the sweep (its task
// archived) is no longer due and keeps its list PROCESSING; the list's
// next batch applies it first, settling both APPLIED (FAILED -> APPLIED,
// storage.BatchKind.CanBecome); failing an applied batch changes nothing.
func TestDoNotReachBatchStates(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	acct, l := newDNRList(t, db)
	expires := time.Now().Add(time.Hour)
	first := dnrBatch(t, db, acct.ID, l.ID, "one", dnrOp(storage.DoNotReachUpdate, expires, dnrKey("a")))
	second := dnrBatch(t, db, acct.ID, l.ID, "two", dnrOp(storage.DoNotReachUpdate, expires, dnrKey("b")))
	if first.State != storage.BatchPending {
		t.Fatalf("recorded state %q, want PENDING", first.State)
	}
	if err := db.FailBatch(t.Context(), storage.DoNotReachBatches, first.ID, "task archived"); err != nil {
		t.Fatal(err)
	}
	due, err := db.BatchesDue(t.Context(), storage.DoNotReachBatches, time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 1 || due[0].ID != second.ID || due[0].Owner != l.ID || due[0].Kind != storage.DoNotReachBatches {
		t.Fatalf("due = %+v, %v; want only %s", due, err, second.ID)
	}
	if !loadDNR(t, db, acct.ID, l.ID).InFlight {
		t.Fatal("list with a failed batch not in flight")
	}
	res, err := db.ApplyDoNotReachBatch(t.Context(), second.ID)
	if err != nil || res.Batches != 2 || res.Added != 2 {
		t.Fatalf("apply = %+v, %v; want both batches, 2 added", res, err)
	}
	if err := db.FailBatch(t.Context(), storage.DoNotReachBatches, second.ID, "late"); err != nil {
		t.Fatal(err)
	}
	if got := loadDNR(t, db, acct.ID, l.ID); got.InFlight || got.ListSize != 2 {
		t.Fatalf("list after apply: %+v; want size 2, nothing in flight", got)
	}
	again := dnrBatch(t, db, acct.ID, l.ID, "one", dnrOp(storage.DoNotReachUpdate, expires, dnrKey("a")))
	if !again.Replayed || again.ID != first.ID || again.State != storage.BatchApplied {
		t.Fatalf("retry of the first = %+v; want it replayed, APPLIED", again)
	}
}
