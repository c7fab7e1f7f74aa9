// Package storagetest gives tests isolated real backing services: a fresh
// PostgreSQL database per test, a claimed Redis database, and a MinIO bucket.
// Nothing here is a fake; every helper registers cleanup with t.Cleanup.
package storagetest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage"
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

// PostgreSQL error codes the helpers react to, and their time limits.
const (
	codeObjectInUse     = "55006" // source database is being accessed by other users
	codeInvalidCatalog  = "3D000" // database does not exist
	cloneRetryFor       = 10 * time.Second
	cloneRetryInterval  = 50 * time.Millisecond
	newDBTimeout        = 2 * time.Minute
	dropDatabaseTimeout = 30 * time.Second
)

// NewDatabaseURL creates an empty database for this test and returns its URL;
// the database is dropped when the test ends. Use it to test migrations;
// NewDB gives a migrated one.
func NewDatabaseURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbURL, drop, err := CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return dbURL
}

// CreateDatabase is NewDatabaseURL for programs that are not tests
// (scripts/load): an empty database on the test server, its URL, and drop,
// which removes it.
func CreateDatabase(ctx context.Context) (dbURL string, drop func(), err error) {
	admin, err := pgx.Connect(ctx, AdminDatabaseURL())
	if err != nil {
		return "", nil, fmt.Errorf("connect to test PostgreSQL %s: %w (is it running? make deps starts it)", AdminDatabaseURL(), err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	name := newDatabaseName()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+quote(name)); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	dbURL, err = urlFor(name)
	if err != nil {
		return "", nil, fmt.Errorf("storagetest: %w", err)
	}
	return dbURL, func() { dropDatabaseLogged(name, log.Printf) }, nil
}

// NewDB creates a migrated database for this test and returns the store and
// its URL; both are closed and dropped when the test ends. The database is
// cloned from a template that holds every embedded migration (see
// MigratedTemplate), which is much faster than migrating an empty one.
func NewDB(t testing.TB) (*postgres.DB, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), newDBTimeout)
	defer cancel()
	admin := connectAdmin(ctx, t)
	defer admin.Close(context.WithoutCancel(ctx))
	name := newDatabaseName()
	if err := cloneMigrated(ctx, admin, name); err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	t.Cleanup(func() { dropDatabase(t, name) })
	dbURL := databaseURL(t, name)
	return openRegistered(ctx, t, dbURL), dbURL
}

// OpenDB opens an existing database (for example one from NewDatabaseURL
// that a server process migrated) for this test and closes it when the test
// ends. Like NewDB's store, it can be passed to the factory package, which
// needs the URL for the few states only SQL reaches.
func OpenDB(t testing.TB, dbURL string) *postgres.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return openRegistered(ctx, t, dbURL)
}

// NewDBWithPool is NewDB plus a pgx pool on the same database, for tests
// that also read or write tables directly; both close when the test ends.
func NewDBWithPool(t testing.TB) (*postgres.DB, *pgxpool.Pool) {
	t.Helper()
	db, url := NewDB(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatalf("storagetest: open a pool on %s: %v", url, err)
	}
	t.Cleanup(pool.Close)
	return db, pool
}

// DatabaseURL returns the URL of a store that NewDB or OpenDB opened and that
// is still open; ok is false for any other store.
func DatabaseURL(db *postgres.DB) (dbURL string, ok bool) {
	openDBs.mu.Lock()
	defer openDBs.mu.Unlock()
	dbURL, ok = openDBs.urls[db]
	return dbURL, ok
}

// openDBs maps the stores NewDB and OpenDB opened to their URLs, until the
// owning test ends.
var openDBs struct {
	mu   sync.Mutex
	urls map[*postgres.DB]string
}

func openRegistered(ctx context.Context, t testing.TB, dbURL string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	openDBs.mu.Lock()
	if openDBs.urls == nil {
		openDBs.urls = map[*postgres.DB]string{}
	}
	openDBs.urls[db] = dbURL
	openDBs.mu.Unlock()
	t.Cleanup(func() {
		openDBs.mu.Lock()
		delete(openDBs.urls, db)
		openDBs.mu.Unlock()
		db.Close()
	})
	return db
}

// cloneMigrated creates database name as a copy of the migrated template. If
// the template vanished since this process cached its name (another
// process dropped it as stale, or someone by hand), it is rebuilt once.
func cloneMigrated(ctx context.Context, admin *pgx.Conn, name string) error {
	for attempt := 1; ; attempt++ {
		tmpl, err := migratedTemplate(ctx, admin)
		if err != nil {
			return err
		}
		err = cloneDatabase(ctx, admin, name, tmpl)
		if attempt == 1 && pgCode(err) == codeInvalidCatalog {
			forgetTemplate(tmpl)
			continue
		}
		return err
	}
}

// cloneDatabase runs CREATE DATABASE name TEMPLATE tmpl, retrying for a while
// when PostgreSQL reports that the template is in use (a connection to it
// still closing).
func cloneDatabase(ctx context.Context, admin *pgx.Conn, name, tmpl string) error {
	deadline := time.Now().Add(cloneRetryFor)
	for {
		_, err := admin.Exec(ctx, "CREATE DATABASE "+quote(name)+" TEMPLATE "+quote(tmpl))
		if err == nil {
			return nil
		}
		if pgCode(err) != codeObjectInUse || time.Now().After(deadline) {
			return fmt.Errorf("create test database %s from template %s: %w", name, tmpl, err)
		}
		if err := sleep(ctx, cloneRetryInterval); err != nil {
			return fmt.Errorf("create test database %s from template %s: %w", name, tmpl, err)
		}
	}
}

// newDatabaseName returns a fresh per-test database name.
func newDatabaseName() string { return "aviary_test_" + RandomSuffix(6) }

func connectAdmin(ctx context.Context, t testing.TB) *pgx.Conn {
	t.Helper()
	admin, err := pgx.Connect(ctx, AdminDatabaseURL())
	if err != nil {
		t.Fatalf("connect to test PostgreSQL %s: %v (is it running? make deps starts it)", AdminDatabaseURL(), err)
	}
	return admin
}

// databaseURL is AdminDatabaseURL with the database name replaced.
func databaseURL(t testing.TB, name string) string {
	t.Helper()
	u, err := urlFor(name)
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	return u
}

func parseAdminURL() (*url.URL, error) {
	u, err := url.Parse(AdminDatabaseURL())
	if err != nil {
		return nil, fmt.Errorf("parse admin database url: %w", err)
	}
	return u, nil
}

func dropDatabase(t testing.TB, name string) { dropDatabaseLogged(name, t.Logf) }

func dropDatabaseLogged(name string, logf func(string, ...any)) {
	ctx, cancel := context.WithTimeout(context.Background(), dropDatabaseTimeout)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminDatabaseURL())
	if err != nil {
		logf("drop test database %s: %v", name, err)
		return
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+quote(name)+" WITH (FORCE)"); err != nil {
		logf("drop test database %s: %v", name, err)
	}
}

// quote quotes a database name as an SQL identifier.
func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// BarePool opens a pool on url with the session settings Aviary's own pools
// use (postgres.OpenWith turns JIT off unless the URL sets it), for the
// bare side of a benchmark: with JIT on, a statement the planner costs high
// spends about 100 ms compiling, and the bare figure would measure the
// compiler rather than the statement. It is closed when tb ends.
func BarePool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatalf("parse %s: %v", url, err)
	}
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// StoredTerms reads the search terms stored for post id from the database
// at url: reads of posts do not return them (storage.Post.Terms is
// written only), so tests of what was stored look at the columns.
func StoredTerms(tb testing.TB, url string, id int64) storage.PostTerms {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), url)
	if err != nil {
		tb.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(context.Background())
	var t storage.PostTerms
	err = conn.QueryRow(tb.Context(), `SELECT mentions, hashtags, cashtags, url_terms FROM posts WHERE id = $1`, id).
		Scan(&t.Mentions, &t.Hashtags, &t.Cashtags, &t.URLTerms)
	if err != nil {
		tb.Fatalf("read the terms of post %d: %v", id, err)
	}
	return t
}
