package postgres_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func acceptAll([]storage.AudienceOperation) error { return nil }

// TestAudienceBatchApply: the recorded operations come back to the check
// exactly as recorded, and applying them in order moves audience_size by
// the rows changed: duplicates within a run count once, a key updated then
// deleted in one batch is gone, a refreshed key is not counted twice, and
// a second application is skipped.
func TestAudienceBatchApply(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	ctx := context.Background()
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	a, b, c := factory.MemberKey(storage.IdentEmail, "a"), factory.MemberKey(storage.IdentHandle, "b"), factory.MemberKey(storage.IdentPartnerUserID, "c")
	steps := []struct {
		name      string
		ops       []storage.AudienceOperation
		wantSize  int64
		wantAdded int64
	}{
		{"insert with a duplicate", []storage.AudienceOperation{
			{Type: storage.AudienceUpdate, Users: 2, Keys: []storage.MemberKey{a, b}},
			{Type: storage.AudienceUpdate, Users: 1, Keys: []storage.MemberKey{a}},
		}, 2, 2},
		{"refresh, add, delete", []storage.AudienceOperation{
			{Type: storage.AudienceUpdate, Users: 2, Keys: []storage.MemberKey{a, c}},
			{Type: storage.AudienceDelete, Users: 1, Keys: []storage.MemberKey{b, factory.MemberKey(storage.IdentEmail, "never")}},
		}, 2, 1},
		{"update then delete the same key", []storage.AudienceOperation{
			{Type: storage.AudienceUpdate, Users: 1, Keys: []storage.MemberKey{b}},
			{Type: storage.AudienceDelete, Users: 2, Keys: []storage.MemberKey{b, a}},
			{Type: storage.AudienceUpdate, Users: 1, Keys: []storage.MemberKey{a}},
		}, 2, 2},
	}
	for i, st := range steps {
		for j := range st.ops {
			st.ops[j].EffectiveAt, st.ops[j].ExpiresAt = now, now.AddDate(1, 0, j)
		}
		batch, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID,
			IdempotencyKey: st.name, Operations: st.ops})
		if err != nil || batch.Replayed || batch.State != storage.BatchPending || len(batch.Counts) != len(st.ops) {
			t.Fatalf("%s: record = %+v, %v", st.name, batch, err)
		}
		var seen []storage.AudienceOperation
		res, err := db.ApplyAudienceBatch(ctx, batch.ID, func(ops []storage.AudienceOperation) error { seen = ops; return nil })
		if err != nil {
			t.Fatalf("%s: apply: %v", st.name, err)
		}
		if !reflect.DeepEqual(seen, st.ops) {
			t.Errorf("%s: decoded operations %+v, want %+v", st.name, seen, st.ops)
		}
		if res.SizeNow != st.wantSize || res.Added != st.wantAdded {
			t.Errorf("step %d %s: size %d added %d, want %d, %d", i, st.name, res.SizeNow, res.Added, st.wantSize, st.wantAdded)
		}
		again, err := db.ApplyAudienceBatch(ctx, batch.ID, acceptAll)
		if err != nil || !again.Skipped || again.SizeNow != st.wantSize {
			t.Errorf("%s: second apply = %+v, %v; want skipped", st.name, again, err)
		}
	}
	got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false)
	if err != nil || got.AudienceSize != 2 || got.InFlight != 0 {
		t.Errorf("audience = %+v, %v", got, err)
	}
	// Members have no foreign key; the trigger removes them with the row.
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var left int
	if err := conn.QueryRow(ctx, `WITH gone AS (DELETE FROM ad_accounts WHERE id = $1)
		SELECT 0`, acct.ID).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM custom_audience_members WHERE audience_id = $1`, aud.ID).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d members left after the account was deleted (%v)", left, err)
	}
}

// TestAudienceBatchRecordRules: a key retried within the window records
// nothing, a READ_ONLY grantee cannot record, an unseen audience is not
// found, and a refused check fails the batch without applying it.
func TestAudienceBatchRecordRules(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	ctx := context.Background()
	owner, reader, stranger := factory.AdAccount(t, db, nil), factory.AdAccount(t, db, nil), factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: owner.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: owner.ID, Name: "a"}); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("a second audience named a: %v, want ErrConflict", err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO custom_audience_permissions (custom_audience_id, granted_account_id, permission_level)
		VALUES ($1, $2, 'READ_ONLY')`, aud.ID, reader.ID); err != nil {
		t.Fatal(err)
	}
	ops := []storage.AudienceOperation{{Type: storage.AudienceUpdate, Users: 1, Keys: []storage.MemberKey{factory.MemberKey(storage.IdentEmail, "x")},
		EffectiveAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}}
	n := storage.NewAudienceBatch{AccountID: owner.ID, AudienceID: aud.ID, IdempotencyKey: "k", BodySHA256: "body",
		RetryWindow: time.Hour, Operations: ops}
	first, err := db.RecordAudienceBatch(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	replay, err := db.RecordAudienceBatch(ctx, n)
	if err != nil || !replay.Replayed || replay.ID != first.ID {
		t.Errorf("replay = %+v, %v; want batch %s replayed", replay, err, first.ID)
	}
	for name, acct := range map[string]string{"reader": reader.ID, "stranger": stranger.ID} {
		n.AccountID, n.IdempotencyKey = acct, name
		_, err := db.RecordAudienceBatch(ctx, n)
		want := map[string]error{"reader": storage.ErrAudienceReadOnly, "stranger": storage.ErrNotFound}[name]
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	res, err := db.ApplyAudienceBatch(ctx, first.ID, func([]storage.AudienceOperation) error { return errors.New("bad digest") })
	if err != nil || !res.Failed || res.SizeNow != 0 {
		t.Fatalf("refused apply = %+v, %v", res, err)
	}
	if again, err := db.ApplyAudienceBatch(ctx, first.ID, acceptAll); err != nil || !again.Skipped {
		t.Errorf("apply after failure = %+v, %v; want skipped", again, err)
	}
}

// TestAudienceBatchesDue: a pending batch is due once the grace passed,
// least recently swept first; settled batches are not due.
func TestAudienceBatchesDue(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, key := range []string{"one", "two", "three"} {
		b, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID, IdempotencyKey: key,
			Operations: []storage.AudienceOperation{{Type: storage.AudienceDelete, Users: 1, Keys: []storage.MemberKey{factory.MemberKey(1, key)}}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.ID)
	}
	now := time.Now()
	if due, err := db.BatchesDue(ctx, storage.AudienceBatches, now, 10); err != nil || len(due) != 0 {
		t.Errorf("due within the grace: %v, %v", due, err)
	}
	later := now.Add(time.Minute)
	if err := db.MarkBatchesSwept(ctx, storage.AudienceBatches, ids[:1], later); err != nil {
		t.Fatal(err)
	}
	if err := db.FailBatch(ctx, storage.AudienceBatches, ids[2], "archived"); err != nil {
		t.Fatal(err)
	}
	due, err := db.BatchesDue(ctx, storage.AudienceBatches, later, 10)
	if err != nil || len(due) != 2 || due[0].ID != ids[1] || due[1].ID != ids[0] {
		t.Errorf("due = %+v, %v; want %s then %s", due, err, ids[1], ids[0])
	}
}

// TestAudienceBatchKeyPerAccount: a key names a request of one account:
// the owner and a READ_WRITE grantee using one key record two batches; the
// key with another body is storage.ErrRequestKeyReused. Without a key the
// same body is a retry only of the audience's latest batch of the account.
func TestAudienceBatchKeyPerAccount(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	ctx := context.Background()
	owner, writer := factory.AdAccount(t, db, nil), factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: owner.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO custom_audience_permissions (custom_audience_id, granted_account_id, permission_level)
		VALUES ($1, $2, 'READ_WRITE')`, aud.ID, writer.ID); err != nil {
		t.Fatal(err)
	}
	record := func(acct, key, body string) (storage.AudienceBatch, error) {
		return db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct, AudienceID: aud.ID, IdempotencyKey: key,
			BodySHA256: body, RetryWindow: time.Hour, Operations: []storage.AudienceOperation{{Type: storage.AudienceUpdate, Users: 1,
				Keys: []storage.MemberKey{factory.MemberKey(storage.IdentEmail, acct+body)}, EffectiveAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}}})
	}
	first, err := record(owner.ID, "k", "one")
	if err != nil {
		t.Fatal(err)
	}
	second, err := record(writer.ID, "k", "one")
	if err != nil || second.Replayed || second.ID == first.ID || second.AccountID != writer.ID {
		t.Fatalf("the grantee's batch under the owner's key = %+v, %v; want a new batch", second, err)
	}
	if again, err := record(owner.ID, "k", "one"); err != nil || !again.Replayed || again.ID != first.ID {
		t.Errorf("owner's retry = %+v, %v; want batch %s replayed", again, err, first.ID)
	}
	if _, err := record(owner.ID, "k", "two"); !errors.Is(err, storage.ErrRequestKeyReused) {
		t.Errorf("the key with another body: %v, want ErrRequestKeyReused", err)
	}
	plain, err := record(owner.ID, "", "three")
	if err != nil || plain.Replayed {
		t.Fatalf("keyless = %+v, %v", plain, err)
	}
	if again, err := record(owner.ID, "", "three"); err != nil || again.ID != plain.ID {
		t.Errorf("keyless retry = %+v, %v; want batch %s", again, err, plain.ID)
	}
	if other, err := record(writer.ID, "", "three"); err != nil || other.Replayed {
		t.Errorf("another account's same body = %+v, %v; want a new batch", other, err)
	}
	if after, err := record(owner.ID, "", "three"); err != nil || after.Replayed {
		t.Errorf("the body again after another batch = %+v, %v; want a new batch", after, err)
	}
}

// TestAudienceRecordDuringApply: the worker's lock on the audience row
// (FOR NO KEY UPDATE, held for the whole apply) does not hold up recording
// another batch (FOR KEY SHARE), while the owner's change of the audience
// (FOR UPDATE) still waits for it.
func TestAudienceRecordDuringApply(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := context.Background()
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(key string) storage.NewAudienceBatch {
		return storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID, IdempotencyKey: key, BodySHA256: key, RetryWindow: time.Hour,
			Operations: []storage.AudienceOperation{{Type: storage.AudienceUpdate, Users: 1, Keys: []storage.MemberKey{factory.MemberKey(storage.IdentEmail, key)},
				EffectiveAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}}}
	}
	first, err := db.RecordAudienceBatch(ctx, batch("first"))
	if err != nil {
		t.Fatal(err)
	}
	var recorded storage.AudienceBatch
	var recordErr, renameErr error
	res, err := db.ApplyAudienceBatch(ctx, first.ID, func([]storage.AudienceOperation) error {
		// The worker holds the audience row here.
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		recorded, recordErr = db.RecordAudienceBatch(short, batch("second"))
		blocked, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel2()
		name := "renamed"
		_, renameErr = db.UpdateCustomAudience(blocked, acct.ID, aud.ID, storage.CustomAudienceChange{Name: &name})
		return nil
	})
	if err != nil || res.Added != 1 {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	if recordErr != nil || recorded.Replayed || recorded.State != storage.BatchPending {
		t.Errorf("recording during the apply = %+v, %v; want a new pending batch at once", recorded, recordErr)
	}
	if renameErr == nil {
		t.Errorf("the owner's PUT during the apply did not wait for the worker")
	}
}
