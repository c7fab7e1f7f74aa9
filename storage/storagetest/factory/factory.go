// Package factory builds test records in a real database, so a test states
// only what matters to it and leaves the rest to sensible, unique defaults:
//
//	db, _ := storagetest.NewDB(t)
//	app := factory.App(t, db, nil)
//	bob := factory.User(t, db, &factory.UserOpts{SuspendedAt: &t0})
//	post := factory.Post(t, db, &factory.PostOpts{Author: bob, DeletedAt: &t0})
//	job := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Status: storage.JobInProgress})
//
// Every builder takes the test, the store and options (nil means all
// defaults), uses t.Context(), fails the test with t.Fatalf on any error,
// and returns the record as stored. Records are made through the public
// methods of *postgres.DB, the way the application makes them; the few
// states no method reaches (a created_at in the past) are set with SQL on a
// connection to the store's URL, which storagetest.NewDB and
// storagetest.OpenDB record.
//
// Builders must not be called from t.Cleanup functions: t.Context() is
// canceled by then.
package factory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// suffix returns a short random suffix for unique default names.
func suffix() string { return storagetest.RandomSuffix(5) }

// now is the default creation time: the present, at PostgreSQL's
// microsecond precision, in UTC.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// execOne runs one SQL statement that must change exactly one row, on a
// connection of its own to db's database. what names the change for errors.
func execOne(t testing.TB, db *postgres.DB, what, sql string, args ...any) {
	t.Helper()
	if err := execOneErr(t.Context(), db, sql, args...); err != nil {
		t.Fatalf("factory: %s: %v", what, err)
	}
}

func execOneErr(ctx context.Context, db *postgres.DB, sql string, args ...any) error {
	dbURL, ok := storagetest.DatabaseURL(db)
	if !ok {
		return fmt.Errorf("needs SQL, but the store's URL is unknown: open it with storagetest.NewDB or storagetest.OpenDB")
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to test database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if n := tag.RowsAffected(); n != 1 {
		return fmt.Errorf("changed %d rows, want 1", n)
	}
	return nil
}
