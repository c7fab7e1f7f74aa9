// Package storagetest gives tests isolated real backing services: a fresh
// PostgreSQL database per test, a claimed Redis database, and a MinIO bucket.
// Nothing here is a fake; every helper registers cleanup with t.Cleanup.
package storagetest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage/postgres"
)

// AdminDatabaseURL is the server tests create their databases on
// (AVIARY_TEST_DATABASE_URL, default the local trust-auth server).
func AdminDatabaseURL() string {
	return cmp.Or(os.Getenv("AVIARY_TEST_DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
}

// RandomSuffix returns n random hex bytes for unique test names.
func RandomSuffix(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("read random bytes: %v", err))
	}
	return hex.EncodeToString(b)
}

// NewDatabaseURL creates an empty database for this test and returns its URL;
// the database is dropped when the test ends.
func NewDatabaseURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminDatabaseURL())
	if err != nil {
		t.Fatalf("connect to test PostgreSQL %s: %v (is it running? make deps starts it)", AdminDatabaseURL(), err)
	}
	defer admin.Close(ctx)
	name := "aviary_test_" + RandomSuffix(6)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() { dropDatabase(t, name) })
	u, err := url.Parse(AdminDatabaseURL())
	if err != nil {
		t.Fatalf("parse admin database url: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func dropDatabase(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminDatabaseURL())
	if err != nil {
		t.Logf("drop test database %s: %v", name, err)
		return
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Logf("drop test database %s: %v", name, err)
	}
}

// NewDB creates a migrated database for this test and returns the store and
// its URL.
func NewDB(t testing.TB) (*postgres.DB, string) {
	t.Helper()
	dbURL := NewDatabaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate test database: %v", err)
	}
	return db, dbURL
}
