package s3_test

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/blobtest"
	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

func TestMain(m *testing.M) { os.Exit(storagetest.RunWithMinIO(m)) }

func TestContract(t *testing.T) {
	blobtest.Exercise(t, func(t *testing.T) blob.Store {
		srv := storagetest.MinIO(t)
		return newStore(t, options(srv, storagetest.NewBucket(t, srv)))
	})
}

func options(srv storagetest.MinIOServer, bucket string) s3.Options {
	return s3.Options{
		Endpoint:  srv.Endpoint,
		Bucket:    bucket,
		Region:    srv.Region,
		AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey,
	}
}

func newStore(t *testing.T, opts s3.Options) *s3.Store {
	t.Helper()
	s, err := s3.New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := map[string]s3.Options{
		"no bucket":       {Endpoint: "http://127.0.0.1:9000", AccessKey: "a", SecretKey: "b"},
		"access key only": {Bucket: "b", AccessKey: "a"},
		"secret key only": {Bucket: "b", SecretKey: "b"},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := s3.New(t.Context(), opts); err == nil {
				t.Errorf("New(%+v) succeeded, want an error", opts)
			}
		})
	}
}

func TestEnsureBucket(t *testing.T) {
	srv := storagetest.MinIO(t)
	s := newStore(t, options(srv, storagetest.NewBucketName(t, srv)))
	if err := s.Ping(t.Context()); err == nil {
		t.Fatal("Ping succeeded before the bucket exists")
	}
	for i := range 2 { // the second call finds the bucket
		if err := s.EnsureBucket(t.Context()); err != nil {
			t.Fatalf("EnsureBucket #%d: %v", i+1, err)
		}
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping after EnsureBucket: %v", err)
	}
	if err := s.Put(t.Context(), "k", strings.NewReader("v"), 1, ""); err != nil {
		t.Fatalf("Put into the new bucket: %v", err)
	}
}

// TestPublicEndpoint checks presigned URLs carry PublicEndpoint's host and
// still verify there.
func TestPublicEndpoint(t *testing.T) {
	srv := storagetest.MinIO(t)
	opts := options(srv, storagetest.NewBucket(t, srv))
	opts.PublicEndpoint = strings.Replace(srv.Endpoint, "127.0.0.1", "localhost", 1)
	s := newStore(t, opts)
	if err := s.Put(t.Context(), "pub/k", strings.NewReader("public"), 6, "text/plain"); err != nil {
		t.Fatal(err)
	}
	raw, err := s.PresignGet(t.Context(), "pub/k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := url.Parse(opts.PublicEndpoint)
	if u.Host != want.Host {
		t.Errorf("presigned URL host = %q, want %q", u.Host, want.Host)
	}
	resp, err := http.Get(raw)
	if err != nil {
		t.Fatalf("GET via public endpoint: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET via public endpoint = %d, want 200", resp.StatusCode)
	}
}

// TestPresignedPutWithCurl checks `curl -T file URL` works as documented:
// no Content-Type or checksum headers are required.
func TestPresignedPutWithCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not on PATH")
	}
	srv := storagetest.MinIO(t)
	s := newStore(t, options(srv, storagetest.NewBucket(t, srv)))
	file := filepath.Join(t.TempDir(), "upload.jsonl")
	if err := os.WriteFile(file, []byte("{\"id\":\"1\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	putURL, err := s.PresignPut(t.Context(), "curl/upload.jsonl", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), curl, "-sS", "--fail-with-body", "-T", file, putURL).CombinedOutput()
	if err != nil {
		t.Fatalf("curl -T: %v: %s", err, out)
	}
	info, err := s.Stat(t.Context(), "curl/upload.jsonl")
	if err != nil || info.Size != 11 {
		t.Errorf("Stat after curl upload = %+v, %v; want 11 bytes", info, err)
	}
}
