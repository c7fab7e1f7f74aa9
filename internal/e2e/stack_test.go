package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// bootstrapResult is the JSON object `aviary admin bootstrap --json` prints
// (decoded independently of the command's own type: it is a contract).
type bootstrapResult struct {
	ConsumerKey       string `json:"consumer_key"`
	ConsumerSecret    string `json:"consumer_secret"`
	BearerToken       string `json:"bearer_token"`
	AccessToken       string `json:"access_token"`
	AccessTokenSecret string `json:"access_token_secret"`
	UserID            string `json:"user_id"`
	Username          string `json:"username"`
	AdsAccountID      string `json:"ads_account_id"`
	// The OAuth accounts (docs/oauth.md): the demo user's password, the
	// demo app's OAuth 2.0 client and its registered callback.
	Password     string `json:"password"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	CallbackURL  string `json:"callback_url"`
}

// binary is the aviary executable built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aviary-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "aviary")
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+e2eVersion, "-o", binary, "github.com/aviary-dev/aviary/cmd/aviary")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build aviary:", err)
		os.Exit(1)
	}
	code := storagetest.RunWithMinIO(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// stack is one isolated Aviary deployment: its own database, Redis
// database, blob bucket or directory, API process and worker processes.
type stack struct {
	t       testing.TB
	client  *http.Client
	env     []string
	baseURL string
	// sandboxURL is the ads sandbox listener of the stack's API process.
	sandboxURL string
	dbURL      string
	db         *postgres.DB
	creds      bootstrapResult
	// workerMetrics is the /metrics URL of the first worker ("" in dev mode).
	workerMetrics string
	// api is the API process (nil in dev mode).
	api   *exec.Cmd
	mu    sync.Mutex
	procs []*exec.Cmd
}

type stackOptions struct {
	dev            bool // one "aviary dev" process instead of api + workers
	tls            *tlsFiles
	driver         string // "local" or "s3"
	workers        int
	workerRedisURL string   // override for workers (a proxy in failure tests)
	env            []string // extra settings for every process (later entries win)
	// publicHost, if set, replaces 127.0.0.1 in the public URLs the server
	// is configured with (AVIARY_PUBLIC_URL, AVIARY_SANDBOX_PUBLIC_URL);
	// the tests still call 127.0.0.1 (baseURL).
	publicHost string
	// redisURL, if set, is the stack's AVIARY_REDIS_URL (a Redis Cluster or
	// Sentinel of the test's own, docs/redis.md) instead of a database of
	// the shared test Redis.
	redisURL string
	// dbURL, if set, is the stack's database (already created, e.g. on a
	// PostgreSQL of the test's own, reached through a proxy) instead of a
	// new database of the shared test PostgreSQL; it is migrated here.
	dbURL string
	// blobEnv, if set, replaces the blob settings driver would give
	// (e.g. a MinIO of the test's own behind a proxy).
	blobEnv []string
}

func newStack(t testing.TB, opts stackOptions) *stack {
	t.Helper()
	if opts.redisURL != "" {
		return newStackWithRedisDB(t, opts, -1)
	}
	_, redisDB := storagetest.RedisDB(t)
	return newStackWithRedisDB(t, opts, redisDB)
}

// newStackWithRedisDB builds a stack on an already claimed Redis database
// (unused when opts.redisURL is set).
func newStackWithRedisDB(t testing.TB, opts stackOptions, redisDB int) *stack {
	t.Helper()
	s := &stack{t: t, dbURL: opts.dbURL, client: http.DefaultClient}
	if s.dbURL == "" {
		s.dbURL = storagetest.NewDatabaseURL(t)
	}
	redisURL := fmt.Sprintf("redis://%s/%d", storagetest.RedisAddr(), redisDB)
	if opts.redisURL != "" {
		redisURL = opts.redisURL
	}
	port := freePort(t)
	scheme := "http"
	if opts.tls != nil {
		scheme = "https"
		s.client = opts.tls.client
	}
	s.baseURL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, port)
	sandboxPort := freePort(t)
	s.sandboxURL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, sandboxPort)
	s.env = []string{
		fmt.Sprintf("AVIARY_SANDBOX_ADDR=127.0.0.1:%d", sandboxPort),
		"AVIARY_SANDBOX_PUBLIC_URL=" + publicURL(s.sandboxURL, opts.publicHost),
		"AVIARY_DATABASE_URL=" + s.dbURL,
		"AVIARY_REDIS_URL=" + redisURL,
		fmt.Sprintf("AVIARY_HTTP_ADDR=127.0.0.1:%d", port),
		"AVIARY_PUBLIC_URL=" + publicURL(s.baseURL, opts.publicHost),
		"AVIARY_RECONCILE_INTERVAL=200ms",
		"AVIARY_SHUTDOWN_TIMEOUT=5s",
		"AVIARY_RATE_LIMIT_SCALE=100",
		"AVIARY_LOG_FORMAT=text",
		"AVIARY_ADMIN_PASSWORD=secret",
		"AVIARY_OAUTH_INSECURE_HTTP=true", // plain-HTTP stacks drive the OAuth 1.0a flow
	}
	if opts.tls != nil {
		s.env = append(s.env, "AVIARY_TLS_CERT="+opts.tls.cert, "AVIARY_TLS_KEY="+opts.tls.key)
	}
	if opts.blobEnv != nil {
		s.env = append(s.env, opts.blobEnv...)
	} else {
		s.env = append(s.env, blobEnv(t, opts.driver)...)
	}
	s.env = append(s.env, opts.env...)
	if opts.dev {
		s.start("dev", nil) // migrates itself
		s.waitReady()
	} else {
		s.run("migrate")
	}
	s.bootstrap()
	if !opts.dev {
		s.api = s.start("api", nil)
		workerEnv := []string{}
		if opts.workerRedisURL != "" {
			workerEnv = append(workerEnv, "AVIARY_REDIS_URL="+opts.workerRedisURL)
		}
		for i := 0; i < opts.workers; i++ {
			env := workerEnv
			if i == 0 { // the first worker serves its task metrics
				s.workerMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", freePort(t))
				env = append(slices.Clone(workerEnv), "AVIARY_WORKER_METRICS_ADDR="+strings.TrimSuffix(strings.TrimPrefix(s.workerMetrics, "http://"), "/metrics"))
			}
			s.start("worker", env)
		}
	}
	s.waitReady()
	return s
}

// publicURL is base with its host 127.0.0.1 replaced by host (base when
// host is empty).
func publicURL(base, host string) string {
	if host == "" {
		return base
	}
	return strings.Replace(base, "127.0.0.1", host, 1)
}

// bootstrap creates the demo identity twice (it must be idempotent) and
// opens the stack's database for assertions.
func (s *stack) bootstrap() {
	s.t.Helper()
	var again bootstrapResult
	s.runJSON(&s.creds, "admin", "bootstrap", "--json")
	s.runJSON(&again, "admin", "bootstrap", "--json")
	if again != s.creds {
		s.t.Fatalf("bootstrap is not idempotent:\n%+v\n%+v", s.creds, again)
	}
	db, err := postgres.Open(context.Background(), s.dbURL)
	if err != nil {
		s.t.Fatalf("open stack database: %v", err)
	}
	s.t.Cleanup(db.Close)
	s.db = db
}

func blobEnv(t testing.TB, driver string) []string {
	if driver == "s3" {
		srv := storagetest.MinIO(t)
		return []string{"AVIARY_BLOB_DRIVER=s3", "AVIARY_S3_ENDPOINT=" + srv.Endpoint,
			"AVIARY_S3_BUCKET=" + storagetest.NewBucket(t, srv), "AVIARY_S3_ACCESS_KEY=" + srv.AccessKey,
			"AVIARY_S3_SECRET_KEY=" + srv.SecretKey, "AVIARY_S3_REGION=" + srv.Region}
	}
	return []string{"AVIARY_BLOB_DRIVER=local", "AVIARY_BLOB_DIR=" + t.TempDir()}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *stack) command(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), s.env...), extraEnv...)
	return cmd
}

// run executes a one-shot subcommand and returns its stdout.
func (s *stack) run(args ...string) []byte {
	s.t.Helper()
	cmd := s.command(nil, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("aviary %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func (s *stack) runJSON(v any, args ...string) {
	s.t.Helper()
	if err := json.Unmarshal(s.run(args...), v); err != nil {
		s.t.Fatalf("aviary %s: decode output: %v", strings.Join(args, " "), err)
	}
}

// start launches a long-running subcommand; it is stopped (SIGTERM, then
// SIGKILL) when the test ends, and its log is attached to a failed test.
func (s *stack) start(name string, extraEnv []string) *exec.Cmd {
	s.t.Helper()
	cmd := s.command(extraEnv, name)
	logFile, err := os.CreateTemp(s.t.TempDir(), name+"-*.log")
	if err != nil {
		s.t.Fatalf("create log file: %v", err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start aviary %s: %v", name, err)
	}
	s.mu.Lock()
	s.procs = append(s.procs, cmd)
	s.mu.Unlock()
	s.t.Cleanup(func() {
		if err := stopProcess(cmd); err != nil {
			s.t.Errorf("aviary %s did not shut down cleanly on SIGTERM: %v", name, err)
		}
		logFile.Close()
		if s.t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			s.t.Logf("---- aviary %s log (pid %d) ----\n%s", name, cmd.Process.Pid, tail(b, 12000))
		}
	})
	return cmd
}

// stopProcess stops a process the way an orchestrator does (SIGTERM, then
// SIGKILL after 15 s) and reports an unclean exit. Processes a test already
// killed on purpose are left alone.
func stopProcess(cmd *exec.Cmd) error {
	if cmd.ProcessState != nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running 15s after SIGTERM")
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (s *stack) waitReady() {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := s.client.Get(s.baseURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("API at %s not ready after 30s", s.baseURL)
}

// response is a decoded API answer.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// newRequest builds an API request with an optional JSON body.
func (s *stack) newRequest(method, path string, body any) *http.Request {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.baseURL+path, rd)
	if err != nil {
		s.t.Fatalf("build request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// do sends a request with the given Authorization header value.
func (s *stack) do(method, path, authz string, body any) response {
	s.t.Helper()
	req := s.newRequest(method, path, body)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	return s.send(req)
}

func (s *stack) send(req *http.Request) response {
	s.t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("read %s %s: %v", req.Method, req.URL, err)
	}
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			s.t.Fatalf("%s %s: decode %q: %v", req.Method, req.URL, raw, err)
		}
	}
	return out
}

func (s *stack) bearer() string { return "Bearer " + s.creds.BearerToken }
