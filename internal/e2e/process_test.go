package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// tlsFiles is a self-signed certificate for 127.0.0.1 and a client that
// trusts it.
type tlsFiles struct {
	cert, key string
	client    *http.Client
}

func newTLSFiles(t *testing.T) *tlsFiles {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aviary test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatalf("create certificate: %v", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	dir := t.TempDir()
	f := &tlsFiles{cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem")}
	writePEM(t, f.cert, "CERTIFICATE", der)
	writePEM(t, f.key, "EC PRIVATE KEY", keyDER)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	f.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return f
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// TestDevModeOverHTTPS runs the one-machine mode (migrate + API + worker +
// reconciler in one process) behind TLS: the whole compliance flow works
// with https URLs everywhere, including the local driver's presigned URLs.
func TestDevModeOverHTTPS(t *testing.T) {
	s := newStack(t, stackOptions{dev: true, driver: "local", tls: newTLSFiles(t)})
	w := buildWorld(s)
	job := s.createJob("tweets", "dev")
	if !strings.HasPrefix(job["upload_url"].(string), s.baseURL+"/2/compliance/jobs/"+job["id"].(string)+"/upload?") {
		t.Fatalf("upload url %v is not served by this API over https", job["upload_url"])
	}
	if !strings.HasPrefix(job["download_url"].(string), s.baseURL+"/blobs/") {
		t.Fatalf("download url %v is not served by this API over https", job["download_url"])
	}
	s.upload(job["upload_url"].(string), "1\n")
	final := s.waitJob(job["id"].(string), 60*time.Second)
	if final["status"] != string(storage.JobComplete) || s.download(final["download_url"].(string)) != "" {
		t.Fatalf("job %v", final)
	}
	deleted := s.mustPost(w.posts["alice-deleted"])
	_, result := s.runJob("tweets", "1\n"+strconvFormat(deleted.ID)+"\n")
	if want := resultLine(deleted.ID, deleted.CreatedAt, *deleted.DeletedAt, "deleted") + "\n"; result != want {
		t.Fatalf("result %q, want %q", result, want)
	}
	if resp, err := http.Get(strings.Replace(s.baseURL, "https", "http", 1) + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("plain http served on the TLS listener")
		}
	}
}

// TestWorkerShutdownReturnsTaskToQueue stops a worker with SIGTERM in the
// middle of a job: it exits cleanly within its grace period, the task goes
// back to the queue at once (no lease timeout), and another worker finishes
// it with the exact result.
func TestWorkerShutdownReturnsTaskToQueue(t *testing.T) {
	s := newStack(t, stackOptions{driver: "s3"})
	job, worker, want := s.startBulkJob("shutdown", []string{"AVIARY_SHUTDOWN_TIMEOUT=1s"})
	id := job["id"].(string)
	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal worker: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- worker.Wait() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("worker exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("worker still running 20s after SIGTERM")
	}
	if rec := s.jobRecord(id); rec.Status != storage.JobInProgress {
		t.Fatalf("job %s before the replacement worker; make the upload larger", rec.Status)
	}
	s.start("worker", nil)
	final := s.waitJob(id, 40*time.Second) // far below asynq's lease recovery
	if final["status"] != string(storage.JobComplete) || s.download(final["download_url"].(string)) != want {
		t.Fatalf("job %v or its result is wrong", final["status"])
	}
	if rec := s.jobRecord(id); rec.Attempts != 2 {
		t.Fatalf("attempts %d, want 2", rec.Attempts)
	}
}

func strconvFormat(id int64) string { return big.NewInt(id).String() }

// TestAPIDrainsBeforeClosing stops an API replica the way an orchestrator
// does: during AVIARY_DRAIN_DELAY it keeps serving but /readyz answers 503
// draining, then it exits cleanly.
func TestAPIDrainsBeforeClosing(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local"})
	port := freePort(t)
	base := "http://127.0.0.1:" + strconvFormat(int64(port))
	replica := s.start("api", []string{"AVIARY_HTTP_ADDR=127.0.0.1:" + strconvFormat(int64(port)), "AVIARY_DRAIN_DELAY=3s", "AVIARY_SANDBOX_ADDR=off"})
	waitStatus(t, base+"/readyz", http.StatusOK)
	if err := replica.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal: %v", err)
	}
	waitStatus(t, base+"/readyz", http.StatusServiceUnavailable)
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("replica stopped serving while draining: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz while draining: %d", resp.StatusCode)
	}
	if err := replica.Wait(); err != nil {
		t.Fatalf("replica exit: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatalf("replica still listening after exit")
	}
}

func waitStatus(t *testing.T, url string, status int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered %d", url, status)
}
