package miniowatch_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob/miniowatch"
	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

func TestMain(m *testing.M) { os.Exit(storagetest.RunWithMinIO(m)) }

// watchTimeout bounds each test's wait for notifications.
const watchTimeout = 30 * time.Second

type fixture struct {
	srv    storagetest.MinIOServer
	bucket string
	store  *s3.Store
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	srv := storagetest.MinIO(t)
	f := fixture{srv: srv, bucket: storagetest.NewBucket(t, srv)}
	var err error
	f.store, err = s3.New(t.Context(), s3.Options{
		Endpoint: srv.Endpoint, Bucket: f.bucket, Region: srv.Region,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f fixture) options(endpoint string) miniowatch.Options {
	return miniowatch.Options{
		Endpoint: endpoint, Bucket: f.bucket, Region: f.srv.Region,
		AccessKey: f.srv.AccessKey, SecretKey: f.srv.SecretKey,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	}
}

func (f fixture) put(t *testing.T, key string) {
	t.Helper()
	if err := f.store.Put(t.Context(), key, strings.NewReader("x"), 1, "text/plain"); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// awaitProbe creates probe objects under prefix until the watcher reports
// one: events before the stream is (re)connected are lost by design.
func (f fixture) awaitProbe(ctx context.Context, t *testing.T, keys <-chan string, prefix string) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		f.put(t, prefix+"probe-"+strconv.Itoa(i))
		select {
		case key, ok := <-keys:
			if !ok {
				t.Fatal("watch channel closed while waiting for a probe")
			}
			if !strings.HasPrefix(key, prefix+"probe-") {
				t.Fatalf("watcher reported %q, want a probe under %q", key, prefix)
			}
			return
		case <-ctx.Done():
			t.Fatalf("no probe under %q reported within %v", prefix, watchTimeout)
		case <-tick.C:
		}
	}
}

// next returns the next key that is not a probe.
func next(ctx context.Context, t *testing.T, keys <-chan string) string {
	t.Helper()
	for {
		select {
		case key, ok := <-keys:
			if !ok {
				t.Fatal("watch channel closed early")
			}
			if !strings.Contains(key, "probe-") {
				return key
			}
		case <-ctx.Done():
			t.Fatalf("no key reported within %v", watchTimeout)
		}
	}
}

func TestWatchReportsCreatedKeysUnderPrefix(t *testing.T) {
	f := newFixture(t)
	requireStreaming(t, f)
	ctx, cancel := context.WithTimeout(t.Context(), watchTimeout)
	defer cancel()
	keys, err := miniowatch.Watch(ctx, f.options(f.srv.Endpoint), "incoming/")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	f.awaitProbe(ctx, t, keys, "incoming/")
	for _, key := range []string{"outgoing/ignored", "incoming/with space+plus.json", "incoming/deeper/multi"} {
		f.put(t, key)
	}
	for _, want := range []string{"incoming/with space+plus.json", "incoming/deeper/multi"} {
		if got := next(ctx, t, keys); got != want {
			t.Fatalf("watcher reported %q, want %q", got, want)
		}
	}
}

func TestWatchClosesWhenContextDone(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	keys, err := miniowatch.Watch(ctx, f.options(f.srv.Endpoint), "")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	cancel()
	timeout := time.After(watchTimeout)
	for {
		select {
		case _, ok := <-keys:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("channel still open %v after cancel", watchTimeout)
		}
	}
}

// TestWatchReconnects cuts the watcher's connections through a proxy and
// checks notifications resume.
func TestWatchReconnects(t *testing.T) {
	f := newFixture(t)
	requireStreaming(t, f)
	proxy := storagetest.NewProxy(t, strings.TrimPrefix(f.srv.Endpoint, "http://"))
	ctx, cancel := context.WithTimeout(t.Context(), watchTimeout)
	defer cancel()
	keys, err := miniowatch.Watch(ctx, f.options("http://"+proxy.Addr()), "jobs/")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	f.awaitProbe(ctx, t, keys, "jobs/")
	if n := proxy.Cut(); n == 0 {
		t.Fatal("proxy had no connection to cut")
	}
	f.awaitProbe(ctx, t, keys, "jobs/")
}

func TestWatchFailsForMissingBucket(t *testing.T) {
	f := newFixture(t)
	opts := f.options(f.srv.Endpoint)
	opts.Bucket = storagetest.NewBucketName(t, f.srv)
	if _, err := miniowatch.Watch(t.Context(), opts, ""); err == nil {
		t.Fatal("Watch on a missing bucket succeeded")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := map[string]miniowatch.Options{
		"no endpoint":      {Bucket: "b"},
		"endpoint not URL": {Endpoint: "127.0.0.1:9000", Bucket: "b"},
		"no bucket":        {Endpoint: "http://127.0.0.1:9000"},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := miniowatch.New(opts); err == nil {
				t.Errorf("New(%+v) succeeded, want an error", opts)
			}
		})
	}
}
