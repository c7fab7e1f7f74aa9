// Package miniowatch implements blob.Watcher for MinIO with its bucket
// notification stream (ListenBucketNotification, a MinIO extension to S3):
// it yields the keys of objects created under a prefix, reconnecting with
// backoff until its context is done. Notifications are hints; callers keep
// polling as a fallback (see blob.Watcher).
package miniowatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/aviary-dev/aviary/storage/blob"
)

// createdEvents selects every kind of object creation (put, copy,
// completed multipart upload).
var createdEvents = []string{"s3:ObjectCreated:*"}

// Defaults for reconnect backoff.
const (
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 30 * time.Second
)

// keyBuffer is how many keys may wait for a slow receiver.
const keyBuffer = 64

// Options configures a Watcher.
type Options struct {
	// Endpoint is MinIO's S3 base URL, for example "http://127.0.0.1:9000".
	Endpoint string
	Bucket   string
	// Region is the bucket's region; default "us-east-1".
	Region    string
	AccessKey string
	SecretKey string
	// MinBackoff and MaxBackoff bound the wait between reconnects; zero
	// means DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Logger receives reconnect warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Watcher watches one MinIO bucket for created objects.
type Watcher struct {
	client     *minio.Client
	bucket     string
	minBackoff time.Duration
	maxBackoff time.Duration
	log        *slog.Logger
}

var _ blob.Watcher = (*Watcher)(nil)

// New returns a Watcher for opts.Bucket; it does not contact the server.
func New(opts Options) (*Watcher, error) {
	u, err := url.Parse(opts.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("miniowatch: Endpoint %q must be an http(s) URL", opts.Endpoint)
	}
	if opts.Bucket == "" {
		return nil, errors.New("miniowatch: Bucket is required")
	}
	region := opts.Region
	if region == "" {
		region = "us-east-1"
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, ""),
		Secure: u.Scheme == "https",
		Region: region,
	})
	if err != nil {
		return nil, fmt.Errorf("miniowatch: %w", err)
	}
	w := &Watcher{client: client, bucket: opts.Bucket, minBackoff: opts.MinBackoff, maxBackoff: opts.MaxBackoff, log: opts.Logger}
	if w.minBackoff <= 0 {
		w.minBackoff = DefaultMinBackoff
	}
	if w.maxBackoff < w.minBackoff {
		w.maxBackoff = max(DefaultMaxBackoff, w.minBackoff)
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	return w, nil
}

// Watch is New followed by WatchCreated.
func Watch(ctx context.Context, opts Options, prefix string) (<-chan string, error) {
	w, err := New(opts)
	if err != nil {
		return nil, err
	}
	return w.WatchCreated(ctx, prefix)
}

// WatchCreated yields the keys of objects created under prefix until ctx is
// done, then closes the channel. It fails only if the bucket cannot be
// reached now; later failures are retried with backoff, and objects created
// while disconnected are missed.
func (w *Watcher) WatchCreated(ctx context.Context, prefix string) (<-chan string, error) {
	ok, err := w.client.BucketExists(ctx, w.bucket)
	if err == nil && !ok {
		err = errors.New("no such bucket")
	}
	if err != nil {
		return nil, fmt.Errorf("watch %s/%s: %w", w.bucket, prefix, err)
	}
	keys := make(chan string, keyBuffer)
	go w.run(ctx, prefix, keys)
	return keys, nil
}

// run keeps a notification stream open until ctx is done.
func (w *Watcher) run(ctx context.Context, prefix string, keys chan<- string) {
	defer close(keys)
	backoff := w.minBackoff
	for {
		delivered, err := w.listen(ctx, prefix, keys)
		if ctx.Err() != nil {
			return
		}
		if delivered {
			backoff = w.minBackoff
		}
		w.log.WarnContext(ctx, "miniowatch: notification stream failed, reconnecting",
			"bucket", w.bucket, "prefix", prefix, "err", err, "backoff", backoff)
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, w.maxBackoff)
	}
}

// errStreamClosed reports a stream that ended without an error.
var errStreamClosed = errors.New("notification stream closed")

// listen relays one notification stream until it fails or ctx is done and
// reports whether it delivered any key.
func (w *Watcher) listen(ctx context.Context, prefix string, keys chan<- string) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's goroutine when we return early
	delivered := false
	for info := range w.client.ListenBucketNotification(ctx, w.bucket, prefix, "", createdEvents) {
		if info.Err != nil {
			return delivered, info.Err
		}
		for _, rec := range info.Records {
			// The listen API sends keys verbatim (unlike MinIO's
			// notification targets, which query-escape them).
			key := rec.S3.Object.Key
			if !strings.HasPrefix(key, prefix) {
				continue
			}
			select {
			case keys <- key:
				delivered = true
			case <-ctx.Done():
				return delivered, ctx.Err()
			}
		}
	}
	return delivered, errStreamClosed
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
