package storagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// MinIOServer is the S3 endpoint and root credentials of the test binary's
// MinIO server.
type MinIOServer struct {
	// Endpoint is the S3 base URL, for example "http://127.0.0.1:38123".
	Endpoint  string
	AccessKey string
	SecretKey string
	Region    string
}

// minioStartTimeout bounds how long MinIO may take to become live.
const minioStartTimeout = 60 * time.Second

// minioServer is the one MinIO process of this test binary (the only
// package-level state, by design: starting MinIO takes seconds).
var minioServer struct {
	once sync.Once
	srv  MinIOServer
	proc *minioProcess
	err  error
}

// MinIO returns the test binary's MinIO server, starting it on first use on
// free 127.0.0.1 ports with a fresh data directory. Tests share the server;
// give each test its own bucket with NewBucket. The binary is found via
// $AVIARY_MINIO_BIN, then $AVIARY_TOOLS_DIR/minio (default
// $HOME/.cache/aviary/bin/minio), then minio on PATH; it is never built here
// (run `make tools`). Call StopMinIO from TestMain after m.Run.
func MinIO(t testing.TB) MinIOServer {
	t.Helper()
	s := &minioServer
	s.once.Do(func() { s.srv, s.proc, s.err = startMinIO() })
	if s.err != nil {
		t.Fatalf("storagetest: %v", s.err)
	}
	return s.srv
}

// StopMinIO kills the test binary's MinIO server, if one was started, and
// removes its data directory. Call it from TestMain after m.Run; the server
// is also killed (SIGKILL, on Linux) if the test process dies first.
func StopMinIO() {
	if p := minioServer.proc; p != nil {
		p.stop()
	}
}

// minioProcess is a running MinIO server.
type minioProcess struct {
	cmd    *exec.Cmd
	dir    string
	exited chan struct{}
	output *tailBuffer
}

func (p *minioProcess) stop() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	_ = os.RemoveAll(p.dir)
}

func startMinIO() (MinIOServer, *minioProcess, error) {
	bin, err := minioBinary()
	if err != nil {
		return MinIOServer{}, nil, err
	}
	srv := MinIOServer{AccessKey: "aviary-" + randomHex(4), SecretKey: randomHex(16), Region: "us-east-1"}
	// A port picked as free may be taken before MinIO binds it; retry then.
	for attempt := 1; ; attempt++ {
		p, endpoint, err := launchMinIO(bin, srv)
		if err == nil {
			srv.Endpoint = endpoint
			return srv, p, nil
		}
		if attempt == 3 {
			return MinIOServer{}, nil, err
		}
	}
}

// launchMinIO starts one MinIO process and waits until it is live.
func launchMinIO(bin string, srv MinIOServer) (*minioProcess, string, error) {
	dir, err := newMinIODir()
	if err != nil {
		return nil, "", err
	}
	addr, consoleAddr, err := freeAddr(), freeAddr(), nil
	if addr == "" || consoleAddr == "" {
		err = errors.New("no free 127.0.0.1 port")
	}
	var p *minioProcess
	if err == nil {
		p, err = spawn(bin, srv, dir, addr, consoleAddr)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", err
	}
	endpoint := "http://" + addr
	if err := waitLive(endpoint, p); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, endpoint, nil
}

// spawn starts MinIO from a goroutine locked to its OS thread: Linux sends
// Pdeathsig when the parent *thread* exits, so that thread must live as long
// as MinIO does. The goroutine then waits for MinIO to exit.
func spawn(bin string, srv MinIOServer, dir, addr, consoleAddr string) (*minioProcess, error) {
	cmd := exec.Command(bin, "server", filepath.Join(dir, "data"), "--address", addr, "--console-address", consoleAddr, "--quiet")
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+srv.AccessKey,
		"MINIO_ROOT_PASSWORD="+srv.SecretKey,
		"MINIO_REGION="+srv.Region,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	p := &minioProcess{cmd: cmd, dir: dir, exited: make(chan struct{}), output: &tailBuffer{max: 8 << 10}}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	cmd.SysProcAttr = minioSysProcAttr()
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with MinIO
		defer close(p.exited)
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("start %s: %w", bin, err)
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// minioDirPattern names the per-process directories under os.TempDir; each
// holds MinIO's data dir and an owner.pid file.
const minioDirPattern = "aviary-minio-*"

// newMinIODir creates a fresh directory for one MinIO server, first removing
// those left behind by test processes that were killed.
func newMinIODir() (string, error) {
	removeOrphanDirs()
	dir, err := os.MkdirTemp("", minioDirPattern)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("minio data dir: %w", err)
	}
	return dir, nil
}

// removeOrphanDirs deletes MinIO directories whose owning process is gone.
// Directories without a readable owner.pid are left alone.
func removeOrphanDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), minioDirPattern))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner.pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(string(b)); err == nil && !processAlive(pid) {
			_ = os.RemoveAll(dir)
		}
	}
}

// waitLive polls MinIO's liveness endpoint until it answers 200.
func waitLive(endpoint string, p *minioProcess) error {
	ctx, cancel := context.WithTimeout(context.Background(), minioStartTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if live(ctx, client, endpoint+"/minio/health/live") {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("minio exited before becoming live: %s", p.output)
		case <-ctx.Done():
			return fmt.Errorf("minio not live at %s after %v: %s", endpoint, minioStartTimeout, p.output)
		case <-tick.C:
		}
	}
}

func live(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// minioBinary finds the MinIO server binary without building it.
func minioBinary() (string, error) {
	if p := os.Getenv("AVIARY_MINIO_BIN"); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("AVIARY_MINIO_BIN=%s is not an executable file", p)
		}
		return p, nil
	}
	toolsDir := os.Getenv("AVIARY_TOOLS_DIR")
	if toolsDir == "" {
		home, _ := os.UserHomeDir()
		toolsDir = filepath.Join(home, ".cache", "aviary", "bin")
	}
	if p := filepath.Join(toolsDir, "minio"); isExecutable(p) {
		return p, nil
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("MinIO server binary not found (checked $AVIARY_MINIO_BIN, %s/minio and minio on PATH): "+
		"run `make tools` to build it into $AVIARY_TOOLS_DIR (default ~/.cache/aviary/bin), "+
		"or set AVIARY_MINIO_BIN to an existing minio binary", toolsDir)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago,
// or "" if none could be found.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(bytes.TrimSpace(b.buf)) == 0 {
		return "(no output)"
	}
	return string(b.buf)
}

// RunWithMinIO runs a package's tests and then stops the package's MinIO
// server: `func TestMain(m *testing.M) { os.Exit(storagetest.RunWithMinIO(m)) }`.
func RunWithMinIO(m *testing.M) int {
	defer StopMinIO()
	return m.Run()
}
