package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage/postgres"
)

func TestTemplateName(t *testing.T) {
	base := []postgres.Migration{
		{Version: 1, Name: "0001_a.sql", SQL: "CREATE TABLE a (id int);"},
		{Version: 2, Name: "0002_b.sql", SQL: "CREATE TABLE b (id int);"},
	}
	edit := func(f func(ms []postgres.Migration) []postgres.Migration) []postgres.Migration {
		return f(append([]postgres.Migration(nil), base...))
	}
	tests := []struct {
		name       string
		migrations []postgres.Migration
	}{
		{"changed SQL", edit(func(ms []postgres.Migration) []postgres.Migration {
			ms[1].SQL += " "
			return ms
		})},
		{"renamed file", edit(func(ms []postgres.Migration) []postgres.Migration {
			ms[0].Name = "0001_c.sql"
			return ms
		})},
		{"renumbered", edit(func(ms []postgres.Migration) []postgres.Migration {
			ms[1].Version = 3
			return ms
		})},
		{"added", edit(func(ms []postgres.Migration) []postgres.Migration {
			return append(ms, postgres.Migration{Version: 3, Name: "0003_c.sql", SQL: ""})
		})},
		{"removed", base[:1]},
		{"SQL moved between files", edit(func(ms []postgres.Migration) []postgres.Migration {
			ms[0].SQL, ms[1].SQL = ms[0].SQL+ms[1].SQL, ""
			return ms
		})},
		{"none", nil},
	}
	want := templateName(base)
	if again := templateName(edit(func(ms []postgres.Migration) []postgres.Migration { return ms })); again != want {
		t.Errorf("templateName of equal migrations = %q and %q", want, again)
	}
	if !strings.HasPrefix(want, templatePrefix) || len(want+buildSuffix) > 63 {
		t.Errorf("templateName = %q: want prefix %q and room for %q within 63 bytes", want, templatePrefix, buildSuffix)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := templateName(tt.migrations); got == want {
				t.Errorf("templateName = %q, the same as for the original migrations", got)
			}
		})
	}
}

func TestStaleTemplate(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	built := func(d time.Duration) string { return builtPrefix + now.Add(-d).Format(time.RFC3339) }
	tests := []struct {
		name, db, comment string
		want              bool
	}{
		{"leftover build", templatePrefix + "0123456789abcdef" + buildSuffix, "", true},
		{"built two days ago", templatePrefix + "0123456789abcdef", built(48 * time.Hour), true},
		{"built an hour ago", templatePrefix + "0123456789abcdef", built(time.Hour), false},
		{"no comment", templatePrefix + "0123456789abcdef", "", false},
		{"foreign comment", templatePrefix + "0123456789abcdef", "hands off", false},
		{"unparsable time", templatePrefix + "0123456789abcdef", builtPrefix + "yesterday", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := staleTemplate(tt.db, tt.comment, now); got != tt.want {
				t.Errorf("staleTemplate(%q, %q) = %v, want %v", tt.db, tt.comment, got, tt.want)
			}
		})
	}
}

// TestEnsureTemplateConcurrent builds one template from many admin
// connections at once, as concurrent test processes do: the advisory lock
// must let exactly one build it, and the result must be a sealed template
// that can be cloned.
func TestEnsureTemplateConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	name := testTemplateName(t)
	var builds atomic.Int32
	build := func(ctx context.Context, dbURL string) error {
		builds.Add(1)
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return err
		}
		// Left open on purpose: sealing must close what a build leaves.
		t.Cleanup(func() { conn.Close(context.Background()) })
		time.Sleep(200 * time.Millisecond) // widen the window for racing builders
		_, err = conn.Exec(ctx, `CREATE TABLE marker (v text); INSERT INTO marker VALUES ('built')`)
		return err
	}

	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		admin := connectAdmin(ctx, t)
		t.Cleanup(func() { admin.Close(context.Background()) })
		wg.Go(func() { errs[i] = ensureTemplate(ctx, admin, name, build) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("ensureTemplate #%d: %v", i, err)
		}
	}
	if got := builds.Load(); got != 1 {
		t.Errorf("template built %d times, want once", got)
	}

	admin := connectAdmin(ctx, t)
	defer admin.Close(context.Background())
	var isTemplate, allowConn bool
	var comment string
	if err := admin.QueryRow(ctx, `SELECT datistemplate, datallowconn, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname = $1`, name).Scan(&isTemplate, &allowConn, &comment); err != nil {
		t.Fatalf("load template %s: %v", name, err)
	}
	if !isTemplate || allowConn || !strings.HasPrefix(comment, builtPrefix) {
		t.Errorf("template %s: is_template %v, allow_connections %v, comment %q; want true, false, %q...",
			name, isTemplate, allowConn, comment, builtPrefix)
	}
	if ok, err := databaseExists(ctx, admin, name+buildSuffix); err != nil || ok {
		t.Errorf("build database left behind: exists %v, %v", ok, err)
	}

	clone := newDatabaseName()
	if err := cloneDatabase(ctx, admin, clone, name); err != nil {
		t.Fatalf("clone: %v", err)
	}
	t.Cleanup(func() { dropDatabase(t, clone) })
	conn, err := pgx.Connect(ctx, databaseURL(t, clone))
	if err != nil {
		t.Fatalf("connect to clone: %v", err)
	}
	defer conn.Close(context.Background())
	var v string
	if err := conn.QueryRow(ctx, `SELECT v FROM marker`).Scan(&v); err != nil || v != "built" {
		t.Errorf("clone marker = %q, %v; want the template's contents", v, err)
	}
}

func TestEnsureTemplateFailedBuild(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	admin := connectAdmin(ctx, t)
	defer admin.Close(context.Background())
	name := testTemplateName(t)
	boom := errors.New("boom")
	err := ensureTemplate(ctx, admin, name, func(context.Context, string) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("ensureTemplate with a failing build = %v, want %v", err, boom)
	}
	for _, db := range []string{name, name + buildSuffix} {
		if ok, err := databaseExists(ctx, admin, db); err != nil || ok {
			t.Errorf("after a failed build, database %s exists %v (%v); want it gone", db, ok, err)
		}
	}
	built := false
	err = ensureTemplate(ctx, admin, name, func(context.Context, string) error { built = true; return nil })
	if err != nil || !built {
		t.Errorf("ensureTemplate after a failed build = %v, built %v; want it built", err, built)
	}
	if ok, err := databaseExists(ctx, admin, name); err != nil || !ok {
		t.Errorf("template %s exists %v, %v", name, ok, err)
	}
}

func TestDropStaleTemplates(t *testing.T) {
	ctx := t.Context()
	admin := connectAdmin(ctx, t)
	defer admin.Close(context.Background())
	// Hold the build lock as a builder does: no build is in progress then.
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLockID); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, templateLockID) //nolint:errcheck

	now := time.Now()
	old := builtPrefix + now.Add(-48*time.Hour).UTC().Format(time.RFC3339)
	recent := builtPrefix + now.Add(-time.Hour).UTC().Format(time.RFC3339)
	keep := testTemplateName(t)
	tests := []struct {
		db, comment string
		template    bool
		wantDropped bool
	}{
		{keep, old, true, false},
		{testTemplateName(t), old, true, true},
		{testTemplateName(t), recent, true, false},
		{testTemplateName(t), "", true, false},
		{testTemplateName(t) + buildSuffix, "", false, true},
	}
	for _, tt := range tests {
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+quote(tt.db)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+quote(tt.db)+" IS "+quoteLiteral(tt.comment)); err != nil {
			t.Fatal(err)
		}
		if tt.template {
			if _, err := admin.Exec(ctx, "ALTER DATABASE "+quote(tt.db)+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := dropStaleTemplates(ctx, admin, keep, now); err != nil {
		t.Fatalf("dropStaleTemplates: %v", err)
	}
	for _, tt := range tests {
		ok, err := databaseExists(ctx, admin, tt.db)
		if err != nil {
			t.Fatal(err)
		}
		if ok == tt.wantDropped {
			t.Errorf("database %s (comment %q): exists %v, want dropped %v", tt.db, tt.comment, ok, tt.wantDropped)
		}
	}
}

// TestNewDBRebuildsVanishedTemplate points the process cache at a template
// that does not exist: NewDB must notice and fall back to the real one. Not
// parallel: it changes the cache the other tests read.
func TestNewDBRebuildsVanishedTemplate(t *testing.T) {
	if _, err := MigratedTemplate(t.Context()); err != nil {
		t.Fatal(err)
	}
	template.mu.Lock()
	want := template.name
	template.name = testTemplateName(t) // never created
	template.mu.Unlock()
	db, _ := NewDB(t)
	if _, err := db.NextID(t.Context()); err != nil {
		t.Errorf("NextID on the clone: %v", err)
	}
	template.mu.Lock()
	got := template.name
	template.mu.Unlock()
	if got != want {
		t.Errorf("cached template = %q after the fallback, want %q", got, want)
	}
}

func TestNewDB(t *testing.T) {
	t.Parallel()
	const n = 6
	urls := make([]string, n)
	var dbs sync.Map
	t.Run("group", func(t *testing.T) {
		for i := range n {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				db, dbURL := NewDB(t)
				urls[i] = dbURL
				dbs.Store(i, db)
				if got, ok := DatabaseURL(db); !ok || got != dbURL {
					t.Errorf("DatabaseURL = %q, %v; want %q", got, ok, dbURL)
				}
				applied, err := db.Migrate(ctx)
				if err != nil || len(applied) != 0 {
					t.Errorf("Migrate on a new database applied %v, %v; want nothing", applied, err)
				}
				// Each database is its own: usernames are unique per
				// database, and every test creates the same one.
				if _, err := db.CreateUser(ctx, "same-name", ""); err != nil {
					t.Errorf("CreateUser: %v", err)
				}
			})
		}
	})
	ctx := t.Context()
	admin := connectAdmin(ctx, t)
	defer admin.Close(context.Background())
	seen := map[string]bool{}
	for i, u := range urls {
		if seen[u] {
			t.Errorf("database URL %s handed out twice", u)
		}
		seen[u] = true
		name := u[strings.LastIndex(u, "/")+1:]
		if j := strings.IndexByte(name, '?'); j >= 0 {
			name = name[:j]
		}
		if ok, err := databaseExists(ctx, admin, name); err != nil || ok {
			t.Errorf("database %s still exists after its test (%v)", name, err)
		}
		db, _ := dbs.Load(i)
		if _, ok := DatabaseURL(db.(*postgres.DB)); ok {
			t.Errorf("DatabaseURL still knows the store of test %d after it ended", i)
		}
	}
}

func TestNewDatabaseURLIsEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, NewDatabaseURL(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("new database has %d tables (%v), want none", tables, err)
	}
}

// testTemplateName returns a template-like database name of this test only
// (never a real migrations hash), force-dropped when the test ends.
func testTemplateName(t *testing.T) string {
	t.Helper()
	name := templatePrefix + "test_" + RandomSuffix(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropDatabaseTimeout)
		defer cancel()
		admin, err := pgx.Connect(ctx, AdminDatabaseURL())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		for _, db := range []string{name, name + buildSuffix} {
			if err := forceDropDatabase(ctx, admin, db); err != nil {
				t.Errorf("%v", err)
			}
		}
	})
	return name
}
