package storagetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage/postgres"
)

// Template databases: NewDB clones each test database from a template that
// holds every embedded migration. The template is named after a hash of the
// migrations, so a changed migration set gets a new template and never
// reuses a stale one, and it is built at most once per server:
//
//   - the first NewDB of a process looks the template up; when it is missing
//     it takes templateLockID (a session advisory lock on the admin
//     connection, which serializes builders across test processes), looks
//     again, and builds it under the name <template>_build;
//   - the build is migrated, its connections are closed, it is marked
//     IS_TEMPLATE true and ALLOW_CONNECTIONS false, and only then renamed to
//     the template name, so nobody can clone a half-migrated template;
//   - the builder also drops templates of other migration sets built more
//     than templateMaxAge ago and builds left behind by killed processes.
//
// The template name is cached per process; a template that disappears (for
// example dropped as stale by a process running other migrations) is rebuilt.
const (
	templatePrefix = "aviary_template_"
	buildSuffix    = "_build"
	// templateLockID is the advisory lock key that serializes template
	// builds (postgres.Migrate uses 7301190001).
	templateLockID = 7301190002
	// templateMaxAge is how long a template of other migrations is kept.
	templateMaxAge = 24 * time.Hour
	// templateFormat is part of the hash: bump it when the way templates are
	// built changes, so old ones are not reused.
	templateFormat = "aviary storagetest template v1"
	// builtPrefix starts the template's database comment, followed by the
	// build time in RFC 3339.
	builtPrefix = "aviary test template, built "
)

// template caches this process's migrated template name.
var template struct {
	mu   sync.Mutex
	name string
}

// MigratedTemplate returns the name of the template database that holds
// every embedded migration, building it if no test process has yet. NewDB
// clones it; tests rarely need the name themselves.
func MigratedTemplate(ctx context.Context) (string, error) {
	admin, err := pgx.Connect(ctx, AdminDatabaseURL())
	if err != nil {
		return "", fmt.Errorf("connect to test PostgreSQL %s: %w", AdminDatabaseURL(), err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	return migratedTemplate(ctx, admin)
}

// migratedTemplate returns the cached template name or ensures the template
// exists and caches its name. Concurrent callers in a process wait for the
// first one.
func migratedTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	template.mu.Lock()
	defer template.mu.Unlock()
	if template.name != "" {
		return template.name, nil
	}
	migrations, err := postgres.Migrations()
	if err != nil {
		return "", fmt.Errorf("template database: %w", err)
	}
	name := templateName(migrations)
	if err := ensureTemplate(ctx, admin, name, migrate); err != nil {
		return "", err
	}
	template.name = name
	return name, nil
}

// forgetTemplate drops name from the process cache (it no longer exists).
func forgetTemplate(name string) {
	template.mu.Lock()
	defer template.mu.Unlock()
	if template.name == name {
		template.name = ""
	}
}

// templateName derives the template database name from the migrations'
// versions, names and SQL (and templateFormat).
func templateName(migrations []postgres.Migration) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", templateFormat)
	for _, m := range migrations {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00%s\x00", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	return templatePrefix + hex.EncodeToString(h.Sum(nil))[:16]
}

// migrate applies the embedded migrations to the database at dbURL.
func migrate(ctx context.Context, dbURL string) error {
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Migrate(ctx)
	return err
}

// ensureTemplate makes sure the template database name exists, building it
// with build (which fills the database at the URL it is given) when it does
// not. It is safe to call from many connections and processes at once.
func ensureTemplate(ctx context.Context, admin *pgx.Conn, name string, build func(ctx context.Context, dbURL string) error) error {
	if ok, err := databaseExists(ctx, admin, name); err != nil || ok {
		return err
	}
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLockID); err != nil {
		return fmt.Errorf("lock template builds: %w", err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLockID) //nolint:errcheck
	// Another process may have built it while this one waited.
	if ok, err := databaseExists(ctx, admin, name); err != nil || ok {
		return err
	}
	if err := dropStaleTemplates(ctx, admin, name, time.Now()); err != nil {
		return err
	}
	if err := buildTemplate(ctx, admin, name, build); err != nil {
		// Best effort: the next builder drops it anyway.
		_ = forceDropDatabase(context.WithoutCancel(ctx), admin, name+buildSuffix)
		return err
	}
	return nil
}

// buildTemplate creates, fills and seals <name>_build and renames it to
// name. The caller holds templateLockID.
func buildTemplate(ctx context.Context, admin *pgx.Conn, name string, build func(ctx context.Context, dbURL string) error) error {
	tmp := name + buildSuffix
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+quote(tmp)); err != nil {
		return fmt.Errorf("create template database %s: %w", tmp, err)
	}
	tmpURL, err := urlFor(tmp)
	if err != nil {
		return err
	}
	if err := build(ctx, tmpURL); err != nil {
		return fmt.Errorf("build template database %s: %w", tmp, err)
	}
	comment := builtPrefix + time.Now().UTC().Format(time.RFC3339)
	if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+quote(tmp)+" IS "+quoteLiteral(comment)); err != nil {
		return fmt.Errorf("comment template database %s: %w", tmp, err)
	}
	// No new connections from here on; the ones the build used may still be
	// closing on the server, and a template with connections cannot be
	// cloned (nor renamed).
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+quote(tmp)+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("mark %s a template: %w", tmp, err)
	}
	if err := closeConnections(ctx, admin, tmp); err != nil {
		return err
	}
	deadline := time.Now().Add(cloneRetryFor)
	for {
		_, err := admin.Exec(ctx, "ALTER DATABASE "+quote(tmp)+" RENAME TO "+quote(name))
		if err == nil {
			return nil
		}
		if pgCode(err) != codeObjectInUse || time.Now().After(deadline) {
			return fmt.Errorf("rename template database %s to %s: %w", tmp, name, err)
		}
		if err := sleep(ctx, cloneRetryInterval); err != nil {
			return fmt.Errorf("rename template database %s to %s: %w", tmp, name, err)
		}
	}
}

// closeConnections terminates every session connected to database name and
// waits until the server has ended them.
func closeConnections(ctx context.Context, admin *pgx.Conn, name string) error {
	deadline := time.Now().Add(cloneRetryFor)
	for {
		var n int
		err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = $1 AND pid <> pg_backend_pid()`, name).Scan(&n)
		if err != nil {
			return fmt.Errorf("close connections to %s: %w", name, err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("close connections to %s: %d still open after %v", name, n, cloneRetryFor)
		}
		if err := sleep(ctx, cloneRetryInterval); err != nil {
			return fmt.Errorf("close connections to %s: %w", name, err)
		}
	}
}

// dropStaleTemplates drops, besides keep, every leftover template build and
// every template built before now-templateMaxAge. The caller holds
// templateLockID, so no build is in progress.
func dropStaleTemplates(ctx context.Context, admin *pgx.Conn, keep string, now time.Time) error {
	rows, err := admin.Query(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE starts_with(datname, $1)`, templatePrefix)
	if err != nil {
		return fmt.Errorf("list template databases: %w", err)
	}
	type dbComment struct{ name, comment string }
	dbs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (dbComment, error) {
		var d dbComment
		err := row.Scan(&d.name, &d.comment)
		return d, err
	})
	if err != nil {
		return fmt.Errorf("list template databases: %w", err)
	}
	for _, d := range dbs {
		if d.name == keep || !staleTemplate(d.name, d.comment, now) {
			continue
		}
		if err := forceDropDatabase(ctx, admin, d.name); err != nil {
			return err
		}
	}
	return nil
}

// staleTemplate reports whether the template database name with comment may
// be dropped at time now: a leftover build, or a template built more than
// templateMaxAge ago (one whose build time cannot be read is kept).
func staleTemplate(name, comment string, now time.Time) bool {
	if strings.HasSuffix(name, buildSuffix) {
		return true
	}
	stamp, ok := strings.CutPrefix(comment, builtPrefix)
	if !ok {
		return false
	}
	built, err := time.Parse(time.RFC3339, stamp)
	return err == nil && now.Sub(built) > templateMaxAge
}

// forceDropDatabase drops a database even if it is a template or in use; a
// missing database is not an error.
func forceDropDatabase(ctx context.Context, admin *pgx.Conn, name string) error {
	_, err := admin.Exec(ctx, "ALTER DATABASE "+quote(name)+" WITH IS_TEMPLATE false")
	if err != nil && pgCode(err) != codeInvalidCatalog {
		return fmt.Errorf("unmark template %s: %w", name, err)
	}
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+quote(name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// databaseExists reports whether database name exists.
func databaseExists(ctx context.Context, admin *pgx.Conn, name string) (bool, error) {
	var ok bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	return ok, nil
}

// urlFor is AdminDatabaseURL with the database name replaced.
func urlFor(name string) (string, error) {
	u, err := parseAdminURL()
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
