package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestCommitOutlivingItsBound makes a COMMIT last longer than the call
// bound (a deferred trigger sleeps at commit time): the bound ends the
// connection before the server answers, but the server commits anyway, so
// the write must be reported as done, not as unavailable (a client told
// to try again would apply it twice). A commit the bound's cancel request
// did roll back, a commit the server refuses and a transaction that wrote
// nothing keep their usual outcome.
func TestCommitOutlivingItsBound(t *testing.T) {
	ctx := context.Background()
	dbURL := storagetest.NewDatabaseURL(t)
	bare := storagetest.BarePool(t, dbURL)
	const bound = 500 * time.Millisecond // AVIARY_DEPENDENCY_TIMEOUT's default
	for _, stmt := range []string{
		`CREATE TABLE commit_probe (id int PRIMARY KEY, mode text NOT NULL)`,
		`CREATE FUNCTION commit_probe_check() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			-- pgx sends a cancel request when the bound ends the connection:
			-- "slow" commits anyway (as a COMMIT past its point of no return
			-- does), "cancelled" is rolled back by it.
			IF NEW.mode = 'slow' THEN
				FOR i IN 1..5 LOOP
					BEGIN
						PERFORM pg_sleep(0.3);
					EXCEPTION WHEN query_canceled THEN
						NULL;
					END;
				END LOOP;
			END IF;
			IF NEW.mode = 'cancelled' THEN PERFORM pg_sleep(2); END IF;
			IF NEW.mode = 'refuse' THEN RAISE EXCEPTION 'refused at commit'; END IF;
			RETURN NULL;
		END $$`,
		`CREATE CONSTRAINT TRIGGER commit_probe_check AFTER INSERT ON commit_probe
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_probe_check()`,
	} {
		if _, err := bare.Exec(ctx, stmt); err != nil {
			t.Fatalf("set up: %v", err)
		}
	}
	db, err := postgres.OpenWith(ctx, dbURL, postgres.Options{CallTimeout: bound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	for i, tc := range []struct {
		mode      string
		wantErr   bool
		wantSaved bool
	}{
		{mode: "slow", wantErr: false, wantSaved: true},
		{mode: "cancelled", wantErr: true, wantSaved: false},
		{mode: "fast", wantErr: false, wantSaved: true},
		{mode: "refuse", wantErr: true, wantSaved: false},
		{mode: "read-only", wantErr: false, wantSaved: false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			err := db.BeginFunc(ctx, func(tx pgx.Tx) error {
				if tc.mode == "read-only" {
					_, err := tx.Exec(ctx, `SELECT count(*) FROM commit_probe`)
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO commit_probe VALUES ($1, $2)`, i, tc.mode)
				return err
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			var n int
			if err := bare.QueryRow(ctx, `SELECT count(*) FROM commit_probe WHERE id = $1`, i).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if saved := n == 1; saved != tc.wantSaved {
				t.Fatalf("row saved %v, want %v", saved, tc.wantSaved)
			}
		})
	}
}

// BenchmarkWriteTransaction measures what the commit-outcome check costs a
// write transaction of the API tier (a bounded pool): its one extra round
// trip for the transaction id, against pgx.BeginFunc on the same pool.
func BenchmarkWriteTransaction(b *testing.B) {
	ctx := context.Background()
	dbURL := storagetest.NewDatabaseURL(b)
	bare := storagetest.BarePool(b, dbURL)
	if _, err := bare.Exec(ctx, `CREATE TABLE commit_bench (id bigserial PRIMARY KEY, v int)`); err != nil {
		b.Fatal(err)
	}
	db, err := postgres.OpenWith(ctx, dbURL, postgres.Options{CallTimeout: 500 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	insert := func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO commit_bench (v) VALUES (1)`)
		return err
	}
	for _, run := range []struct {
		name  string
		begin func(context.Context, func(pgx.Tx) error) error
	}{{"pgx.BeginFunc", db.PlainBeginFunc}, {"with-commit-check", db.BeginFunc}} {
		b.Run(run.name, func(b *testing.B) {
			for b.Loop() {
				if err := run.begin(ctx, insert); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
