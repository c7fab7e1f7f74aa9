package postgres_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// user is one user object of an operation: its keys.
type user []storage.MemberKey

// peopleOp is an operation of user objects (People set for those of
// several keys, as the parser does).
func peopleOp(kind string, at time.Time, users ...user) storage.AudienceOperation {
	op := storage.AudienceOperation{Type: kind, EffectiveAt: at, ExpiresAt: at.AddDate(1, 0, 0), Users: len(users)}
	for _, u := range users {
		start := int32(len(op.Keys))
		op.Keys = append(op.Keys, u...)
		if len(u) > 1 {
			op.People = append(op.People, storage.KeyRange{Start: start, End: int32(len(op.Keys))})
		}
	}
	return op
}

// TestAudienceMembersArePeople: a user object is one member whatever its
// identifiers; a later one sharing a key is that member (its new keys
// join it, the same batch again changes nothing), one sharing keys with
// several members merges them, a Delete naming any key of a member
// removes the member with all its keys, and every row of a member keeps
// the member's times.
func TestAudienceMembersArePeople(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	ctx := context.Background()
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "people"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	k := func(kind byte, v string) storage.MemberKey { return factory.MemberKey(kind, v) }
	a, p, h := k(storage.IdentEmail, "a"), k(storage.IdentPhoneNumber, "p"), k(storage.IdentHandle, "h")
	x, y, z := k(storage.IdentEmail, "x"), k(storage.IdentEmail, "y"), k(storage.IdentDeviceID, "z")
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	up, del := storage.AudienceUpdate, storage.AudienceDelete
	steps := []struct {
		name                   string
		ops                    []storage.AudienceOperation
		size, rows             int64
		added, removed, merged int64
	}{
		{"one user, two identifiers", []storage.AudienceOperation{peopleOp(up, t0, user{a, p})}, 1, 2, 1, 0, 0},
		{"the same batch again", []storage.AudienceOperation{peopleOp(up, t0, user{a, p})}, 1, 2, 0, 0, 0},
		{"a user sharing a key adds its other key", []storage.AudienceOperation{peopleOp(up, t0.Add(time.Minute), user{p, h})}, 1, 3, 0, 0, 0},
		{"two one-key users, one repeated", []storage.AudienceOperation{peopleOp(up, t0, user{x}, user{y}, user{x})}, 3, 5, 2, 0, 0},
		{"a user joining two members merges them", []storage.AudienceOperation{peopleOp(up, t0, user{x, y, z})}, 2, 6, 0, 0, 1},
		{"users of one batch sharing keys are one person",
			[]storage.AudienceOperation{peopleOp(up, t0, user{k(1, "m")}, user{k(2, "n"), k(1, "m")}, user{k(2, "n"), k(3, "o")})}, 3, 9, 1, 0, 0},
		{"merging three members", []storage.AudienceOperation{peopleOp(up, t0.Add(2*time.Minute), user{h, z}, user{k(3, "o"), a})}, 1, 9, 0, 0, 2},
		{"a Delete naming one key removes the member", []storage.AudienceOperation{peopleOp(del, t0, user{y})}, 0, 0, 0, 1, 0},
		{"update, delete by another key, update again", []storage.AudienceOperation{
			peopleOp(up, t0, user{a, p}, user{x}), peopleOp(del, t0, user{p}), peopleOp(up, t0, user{h, a})}, 2, 3, 3, 1, 0},
	}
	for i, st := range steps {
		batch, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID,
			IdempotencyKey: fmt.Sprint(i), Operations: st.ops})
		if err != nil {
			t.Fatalf("%s: record: %v", st.name, err)
		}
		res, err := db.ApplyAudienceBatch(ctx, batch.ID, func(ops []storage.AudienceOperation) error {
			if !reflect.DeepEqual(ops, st.ops) {
				t.Errorf("%s: decoded %+v, want %+v", st.name, ops, st.ops)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: apply: %v", st.name, err)
		}
		var rows, times, people int64
		if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT (COALESCE(person_key, member_key), effective_at, expires_at)),
			count(DISTINCT COALESCE(person_key, member_key)) FROM custom_audience_members WHERE audience_id = $1`, aud.ID).Scan(&rows, &times, &people); err != nil {
			t.Fatal(err)
		}
		if res.SizeNow != st.size || rows != st.rows || res.Added != st.added || res.Removed != st.removed || res.Merged != st.merged {
			t.Errorf("%s: size %d rows %d added %d removed %d merged %d; want %d, %d, %d, %d, %d", st.name,
				res.SizeNow, rows, res.Added, res.Removed, res.Merged, st.size, st.rows, st.added, st.removed, st.merged)
		}
		if people != res.SizeNow || times != people {
			t.Errorf("%s: %d people with %d distinct times among the rows, size %d: a member's rows must share one person and its times",
				st.name, people, times, res.SizeNow)
		}
	}
	got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false)
	if err != nil || got.AudienceSize != 2 {
		t.Errorf("audience = %+v, %v; want audience_size 2", got, err)
	}

	// expire makes the audience's members matching cond expired, as the
	// sweep will find them.
	expire := func(cond string) {
		t.Helper()
		if _, err := conn.Exec(ctx, `UPDATE custom_audience_members SET expires_at = now() - interval '1 second'
			WHERE audience_id = $1 AND `+cond, aud.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `UPDATE custom_audiences SET members_expire_at = now() - interval '1 second' WHERE id = $1`, aud.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Expiry counts and removes members: the two-key member expired counts
	// once, and the sweep removes it with both keys.
	expire(`person_key IS NOT NULL`)
	if got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false); err != nil || got.AudienceSize != 1 {
		t.Errorf("with a two-key member expired: audience_size %d (%v), want 1", got.AudienceSize, err)
	}
	n, err := db.RemoveExpiredAudienceMembers(ctx, aud.ID, time.Now(), 100)
	if err != nil || n != 1 {
		t.Errorf("expiry removed %d (%v), want 1 member", n, err)
	}
	var rows int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM custom_audience_members WHERE audience_id = $1`, aud.ID).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("%d rows left (%v), want the one-key member's", rows, err)
	}
	if got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false); err != nil || got.AudienceSize != 1 {
		t.Errorf("after the sweep: audience_size %d (%v), want 1", got.AudienceSize, err)
	}

	// A user object naming an expired member not yet swept makes it live
	// again with its new key: one member, counted once.
	expire(`true`)
	if got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false); err != nil || got.AudienceSize != 0 {
		t.Errorf("with every member expired: audience_size %d (%v), want 0", got.AudienceSize, err)
	}
	batch, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID, IdempotencyKey: "revive",
		Operations: []storage.AudienceOperation{peopleOp(up, time.Now().UTC(), user{x, k(storage.IdentEmail, "q")})}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := db.ApplyAudienceBatch(ctx, batch.ID, acceptAll); err != nil || res.SizeNow != 1 || res.Added != 0 {
		t.Errorf("reviving the expired member: %+v, %v; want size 1, nothing added", res, err)
	}
	if got, err := db.CustomAudience(ctx, acct.ID, aud.ID, false); err != nil || got.AudienceSize != 1 {
		t.Errorf("after reviving: audience_size %d (%v), want 1", got.AudienceSize, err)
	}
}
