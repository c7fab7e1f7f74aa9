package storagetest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// privateRedisStartTimeout bounds how long PrivateRedis waits for its
// redis-server to answer PING.
const privateRedisStartTimeout = 10 * time.Second

// RedisProcess is a redis-server of one test's own, so the test can take it
// away without disturbing the shared test Redis: Freeze suspends the process
// (SIGSTOP; the kernel still accepts connections but nothing answers, like
// a hung server), Thaw resumes it, Stop ends it for good (connections are
// refused), Crash kills it and Revive starts an empty one on the same
// address (a restart without persistence). It persists nothing.
type RedisProcess struct {
	// Addr is the server's host:port on the loopback interface.
	Addr string

	t      testing.TB
	bin    string
	cmd    *exec.Cmd
	output *bytes.Buffer
	mu     sync.Mutex
	frozen bool
	done   bool
	// crashed: killed by Crash, to be started again by Revive.
	crashed bool
}

// PrivateRedis starts a redis-server on a free loopback port for this test
// and stops it when the test ends. The test fails at once, saying what to
// install, if redis-server is not on PATH.
func PrivateRedis(t testing.TB) *RedisProcess {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("storagetest: PrivateRedis needs redis-server on PATH (Debian/Ubuntu: apt-get install redis-server): %v", err)
	}
	for attempt := 1; ; attempt++ {
		r, err := startRedis(bin)
		if err == nil {
			r.t = t
			t.Cleanup(r.Stop)
			return r
		}
		if attempt == 3 {
			t.Fatalf("storagetest: start private redis-server: %v", err)
		}
	}
}

// startRedis runs bin on a port that was free a moment ago and waits until
// it answers; another process taking the port first makes it fail.
func startRedis(bin string) (*RedisProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &RedisProcess{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), bin: bin}
	if err := r.launch(); err != nil {
		return nil, err
	}
	return r, nil
}

// launch runs a new server on r.Addr and waits until it answers.
func (r *RedisProcess) launch() error {
	_, port, _ := net.SplitHostPort(r.Addr)
	r.output = &bytes.Buffer{}
	r.cmd = exec.Command(r.bin, "--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	r.cmd.Stdout, r.cmd.Stderr = r.output, r.output
	r.cmd.SysProcAttr = minioSysProcAttr() // the same parent-death signal as MinIO's
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", r.bin, err)
	}
	if err := r.waitReady(); err != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		return fmt.Errorf("%w; redis-server said: %s", err, r.output.String())
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls PING until the server answers or the start timeout ends.
func (r *RedisProcess) waitReady() error {
	client := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), privateRedisStartTimeout)
	defer cancel()
	for {
		err := client.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if sleep(ctx, 50*time.Millisecond) != nil {
			return fmt.Errorf("redis-server on %s did not answer within %v: %w", r.Addr, privateRedisStartTimeout, err)
		}
	}
}

// Freeze suspends the server: connections are still accepted by the kernel
// but no command is answered until Thaw.
func (r *RedisProcess) Freeze() { r.setFrozen(true) }

// Thaw resumes a frozen server.
func (r *RedisProcess) Thaw() { r.setFrozen(false) }

func (r *RedisProcess) setFrozen(frozen bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.crashed || r.frozen == frozen {
		return
	}
	if err := signalFreeze(r.cmd.Process, frozen); err != nil {
		r.t.Fatalf("storagetest: freeze=%v redis-server %s: %v", frozen, r.Addr, err)
	}
	r.frozen = frozen
}

// Stop kills the server (a frozen one too); connections are refused from
// then on. It is safe to call more than once.
func (r *RedisProcess) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	if !r.crashed {
		_ = r.cmd.Process.Kill() // SIGKILL ends a stopped process as well
		_ = r.cmd.Wait()
	}
}

// Crash kills the server (SIGKILL) and keeps its address for Revive:
// connections are refused meanwhile, and what it held is gone.
func (r *RedisProcess) Crash() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.crashed {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.crashed, r.frozen = true, false
}

// Revive starts a new, empty server on the crashed one's address, as a
// Redis restarted without persistence, and waits until it answers.
func (r *RedisProcess) Revive() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || !r.crashed {
		return
	}
	if err := r.launch(); err != nil {
		r.t.Fatalf("storagetest: restart redis-server on %s: %v", r.Addr, err)
	}
	r.crashed = false
}
