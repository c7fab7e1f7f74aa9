package storagetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresProcess is a PostgreSQL cluster of one test's own (initdb and
// pg_ctl on a free loopback port, trust authentication), so a test can
// restart it without disturbing the shared test server. URL is the
// connection URL of its "postgres" database as user postgres.
type PostgresProcess struct {
	URL  string
	Addr string
	t    testing.TB
	dir  string
	mu   sync.Mutex
	// asPostgres runs a command as the postgres OS user when the test runs
	// as root (PostgreSQL refuses to run as root).
	asPostgres bool
}

// privatePostgresStartTimeout bounds a start or a restart of the cluster.
const privatePostgresStartTimeout = 60 * time.Second

// PrivatePostgres creates and starts a PostgreSQL cluster for this test and
// stops it (and removes its directory) when the test ends. The test fails
// at once, saying what to install, if initdb or pg_ctl cannot be found.
func PrivatePostgres(t testing.TB) *PostgresProcess {
	t.Helper()
	initdb, err := postgresTool("initdb")
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	p := &PostgresProcess{t: t, asPostgres: os.Geteuid() == 0}
	// Not t.TempDir: its parents are private to root, and the server runs
	// as postgres.
	if p.dir, err = os.MkdirTemp("", "aviary-pg-*"); err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(p.dir) })
	if p.asPostgres {
		if err := chownToPostgres(p.dir); err != nil {
			t.Fatalf("storagetest: %v", err)
		}
	}
	if out, err := p.command(initdb, "-D", p.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		t.Fatalf("storagetest: initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	p.Addr = "127.0.0.1:" + strconv.Itoa(port)
	p.URL = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", p.Addr)
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300", port, p.dir)
	if err := p.pgCtl("start", "-o", opts); err != nil {
		t.Fatalf("storagetest: start private PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = p.pgCtl("stop", "-m", "immediate") })
	return p
}

func (p *PostgresProcess) data() string { return filepath.Join(p.dir, "data") }

// Restart stops the server at once, as a crash does (pg_ctl restart -m
// immediate: no checkpoint, crash recovery at the next start), starts it
// again on the same port and waits until it accepts connections.
func (p *PostgresProcess) Restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.pgCtl("restart", "-m", "immediate"); err != nil {
		p.t.Fatalf("storagetest: restart private PostgreSQL: %v", err)
	}
}

// pgCtl runs pg_ctl on the cluster, waiting for the action to complete,
// then (for start and restart) until a connection works.
func (p *PostgresProcess) pgCtl(action string, args ...string) error {
	bin, err := postgresTool("pg_ctl")
	if err != nil {
		return err
	}
	args = append([]string{action, "-D", p.data(), "-w", "-t", strconv.Itoa(int(privatePostgresStartTimeout.Seconds())),
		"-l", filepath.Join(p.dir, "server.log")}, args...)
	if out, err := p.command(bin, args...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		return fmt.Errorf("pg_ctl %s: %v\n%s\n%s", action, err, out, tailBytes(log, 4000))
	}
	if action == "stop" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), privatePostgresStartTimeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, p.URL)
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		if sleep(ctx, 50*time.Millisecond) != nil {
			return fmt.Errorf("private PostgreSQL on %s does not accept connections: %w", p.Addr, err)
		}
	}
}

func (p *PostgresProcess) command(bin string, args ...string) *exec.Cmd {
	if p.asPostgres {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

// postgresTool finds a PostgreSQL server program on PATH or in the
// distribution's versioned directory.
func postgresTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob(filepath.Join("/usr/lib/postgresql", "*", "bin", name))
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("PrivatePostgres needs %s (Debian/Ubuntu: apt-get install postgresql)", name)
}

func chownToPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("PrivatePostgres runs the server as the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
