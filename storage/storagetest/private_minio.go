package storagetest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
)

// MinIOProcess is a MinIO server of one test's own, so the test can restart
// it without disturbing the test binary's shared server (MinIO). Its data
// directory survives Restart, as a real server's disk does.
type MinIOProcess struct {
	Server MinIOServer
	t      testing.TB
	bin    string
	dir    string
	addr   string
	caddr  string
	mu     sync.Mutex
	proc   *minioProcess
}

// PrivateMinIO starts a MinIO server on free loopback ports for this test
// and stops it (removing its data) when the test ends.
func PrivateMinIO(t testing.TB) *MinIOProcess {
	t.Helper()
	bin, err := minioBinary()
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	m := &MinIOProcess{t: t, bin: bin,
		Server: MinIOServer{AccessKey: "aviary-" + randomHex(4), SecretKey: randomHex(16), Region: "us-east-1"}}
	for attempt := 1; ; attempt++ {
		if m.dir, err = newMinIODir(); err != nil {
			t.Fatalf("storagetest: %v", err)
		}
		m.addr, m.caddr = freeAddr(), freeAddr()
		m.Server.Endpoint = "http://" + m.addr
		if err = m.launch(); err == nil {
			break
		}
		_ = os.RemoveAll(m.dir)
		if attempt == 3 {
			t.Fatalf("storagetest: start private MinIO: %v", err)
		}
	}
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.proc.stop() // removes the data directory
	})
	return m
}

func (m *MinIOProcess) launch() error {
	p, err := spawn(m.bin, m.Server, m.dir, m.addr, m.caddr)
	if err != nil {
		return err
	}
	if err := waitLive(m.Server.Endpoint, p); err != nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
		return err
	}
	m.proc = p
	return nil
}

// Restart kills the server (SIGKILL, so uploads in flight are cut off),
// starts it again on the same address with the same data and waits until
// it is live.
func (m *MinIOProcess) Restart() {
	m.mu.Lock()
	defer m.mu.Unlock()
	_ = m.proc.cmd.Process.Kill()
	<-m.proc.exited
	if err := m.launch(); err != nil {
		m.t.Fatalf("storagetest: restart private MinIO: %v", err)
	}
}

// Client is a MinIO client of the server (for assertions: listings,
// incomplete multipart uploads).
func (m *MinIOProcess) Client(t testing.TB) *minio.Client { return minioClient(t, m.Server) }

// Bucket creates a bucket on the server and returns its name (removed with
// the server's data when the test ends).
func (m *MinIOProcess) Bucket(t testing.TB) string {
	t.Helper()
	name := "aviary-test-" + randomHex(8)
	if err := m.Client(t).MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: m.Server.Region}); err != nil {
		t.Fatalf("storagetest: create bucket %s: %v", name, err)
	}
	return name
}
