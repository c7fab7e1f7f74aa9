package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// creds is what `aviary admin bootstrap --json` prints (the fields the load
// uses); `make run` saves the same object in var/demo-credentials.json.
type creds struct {
	ConsumerKey       string `json:"consumer_key"`
	ConsumerSecret    string `json:"consumer_secret"`
	BearerToken       string `json:"bearer_token"`
	AccessToken       string `json:"access_token"`
	AccessTokenSecret string `json:"access_token_secret"`
	UserID            string `json:"user_id"`
	AdsAccountID      string `json:"ads_account_id"`
}

// backends is where a started stack keeps its state: an isolated database,
// a claimed Redis logical database and a blob directory.
type backends struct {
	DatabaseURL string
	RedisURL    string
	BlobDir     string
}

// stack is the system under load: its base URL, credentials and the pids
// whose RSS is sampled. When the stack was started here (bin set) it can
// start and stop workers.
type stack struct {
	baseURL  string
	creds    creds
	redisURL string
	dbURL    string
	apiPID   int
	workers  []*exec.Cmd
	extPIDs  []int // workers of an attached stack
	bin      string
	env      []string
	logDir   string
	apiCmd   *exec.Cmd
	// bearers are app-only tokens of the demo app and of the extra apps
	// the compliance jobs are spread over (one job per app and type runs
	// at a time: docs/compliance-lifecycle.md).
	bearers []string
}

// startStack migrates the isolated database, bootstraps the demo app, user
// and ad account with the binary's own admin command, and starts one `api`
// and nWorkers `worker` processes. Their logs go to files under logDir.
func startStack(ctx context.Context, bin string, b backends, nWorkers, apps int, extraEnv []string, logDir string) (*stack, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	s := &stack{baseURL: base, redisURL: b.RedisURL, dbURL: b.DatabaseURL, bin: bin, logDir: logDir}
	s.env = append([]string{
		"AVIARY_DATABASE_URL=" + b.DatabaseURL,
		"AVIARY_REDIS_URL=" + b.RedisURL,
		"AVIARY_BLOB_DRIVER=local",
		"AVIARY_BLOB_DIR=" + b.BlobDir,
		fmt.Sprintf("AVIARY_HTTP_ADDR=127.0.0.1:%d", port),
		"AVIARY_PUBLIC_URL=" + base,
		"AVIARY_SANDBOX_ADDR=off",
		"AVIARY_LOG_FORMAT=text",
		"AVIARY_LOG_LEVEL=warn",
		"AVIARY_SHUTDOWN_TIMEOUT=5s",
		// The load measures latency, not the platform's rate limits.
		"AVIARY_RATE_LIMIT_SCALE=1000000",
	}, extraEnv...)
	if err := s.run(ctx, nil, "migrate"); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := s.run(ctx, &out, "admin", "bootstrap", "--json"); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out.Bytes(), &s.creds); err != nil {
		return nil, fmt.Errorf("decode bootstrap output: %w", err)
	}
	s.bearers = []string{s.creds.BearerToken}
	for i := range apps {
		var app struct {
			BearerToken string `json:"bearer_token"`
		}
		out.Reset()
		if err := s.run(ctx, &out, "admin", "app", "create", "--name", fmt.Sprintf("load-%d", i+1), "--json"); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(out.Bytes(), &app); err != nil {
			return nil, fmt.Errorf("decode app create output: %w", err)
		}
		s.bearers = append(s.bearers, app.BearerToken)
	}
	if s.apiCmd, err = s.start("api"); err != nil {
		return nil, err
	}
	s.apiPID = s.apiCmd.Process.Pid
	if err := waitReady(ctx, base+"/readyz", 30*time.Second); err != nil {
		s.stop()
		return nil, err
	}
	for range nWorkers {
		if err := s.addWorker(); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// run runs one aviary command to completion (stdout to out when set).
func (s *stack) run(ctx context.Context, out *bytes.Buffer, args ...string) error {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = append(os.Environ(), s.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("aviary %v: %w: %s", args, err, stderr.String())
	}
	return nil
}

// start starts a long-running aviary command with its log in logDir.
func (s *stack) start(role string, extraEnv ...string) (*exec.Cmd, error) {
	return s.startOn(role, -1, extraEnv...)
}

// startOn is start pinned to CPU cpu with taskset (cpu < 0: not pinned).
// taskset execs the command, so the pid is the aviary process's.
func (s *stack) startOn(role string, cpu int, extraEnv ...string) (*exec.Cmd, error) {
	name := filepath.Join(s.logDir, fmt.Sprintf("%s-%d.log", role, time.Now().UnixNano()))
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("create %s log: %w", role, err)
	}
	cmd := exec.Command(s.bin, role)
	if cpu >= 0 {
		cmd = exec.Command("taskset", "-c", strconv.Itoa(cpu), s.bin, role)
	}
	cmd.Env = append(append(os.Environ(), s.env...), extraEnv...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start aviary %s: %w", role, err)
	}
	go func() { _ = cmd.Wait(); f.Close() }()
	return cmd, nil
}

// addWorker starts one more worker replica.
func (s *stack) addWorker(extraEnv ...string) error {
	return s.addWorkerOn(-1, extraEnv...)
}

// addWorkerOn starts one more worker replica pinned to CPU cpu (< 0: not
// pinned).
func (s *stack) addWorkerOn(cpu int, extraEnv ...string) error {
	if s.bin == "" {
		return fmt.Errorf("attached stack: workers are not ours to start")
	}
	w, err := s.startOn("worker", cpu, extraEnv...)
	if err != nil {
		return err
	}
	s.workers = append(s.workers, w)
	return nil
}

// stopWorkers stops every worker this program started (SIGTERM, then
// waits for the processes to leave, at most 20 s each).
func (s *stack) stopWorkers() {
	for _, w := range s.workers {
		stopProcess(w)
	}
	s.workers = nil
}

// restartAPI stops the API and starts it again with extraEnv added (same
// address), waiting until it is ready.
func (s *stack) restartAPI(ctx context.Context, extraEnv ...string) error {
	if s.apiCmd == nil {
		return fmt.Errorf("attached stack: the API is not ours to restart")
	}
	stopProcess(s.apiCmd)
	cmd, err := s.start("api", extraEnv...)
	if err != nil {
		s.apiCmd = nil
		return err
	}
	s.apiCmd, s.apiPID = cmd, cmd.Process.Pid
	return waitReady(ctx, s.baseURL+"/readyz", 30*time.Second)
}

func (s *stack) stop() {
	s.stopWorkers()
	if s.apiCmd != nil {
		stopProcess(s.apiCmd)
		s.apiCmd = nil
	}
}

func stopProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
}

// workerPIDs are the pids of the workers sampled for RSS.
func (s *stack) workerPIDs() []int {
	pids := append([]int(nil), s.extPIDs...)
	for _, w := range s.workers {
		pids = append(pids, w.Process.Pid)
	}
	return pids
}

func waitReady(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s", url, timeout)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// rssMB is a process's VmRSS in MB from /proc/<pid>/status (-1 if gone).
func rssMB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "VmRSS:" {
			kb, err := strconv.ParseFloat(string(f[1]), 64)
			if err != nil {
				return -1
			}
			return kb / 1024
		}
	}
	return -1
}
