package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// countingAPI counts the upload calls reaching a real client; onPart, if
// set, runs before each UploadPart and may fail it.
type countingAPI struct {
	s3.API
	puts, parts, aborts atomic.Int64
	inFlight, maxFlight atomic.Int64
	onPart              func(number int32) error
}

func (c *countingAPI) PutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.Options)) (*awss3.PutObjectOutput, error) {
	c.puts.Add(1)
	return c.API.PutObject(ctx, in, opts...)
}

func (c *countingAPI) UploadPart(ctx context.Context, in *awss3.UploadPartInput, opts ...func(*awss3.Options)) (*awss3.UploadPartOutput, error) {
	c.parts.Add(1)
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for m := c.maxFlight.Load(); n > m && !c.maxFlight.CompareAndSwap(m, n); m = c.maxFlight.Load() {
	}
	if c.onPart != nil {
		if err := c.onPart(aws.ToInt32(in.PartNumber)); err != nil {
			return nil, err
		}
	}
	return c.API.UploadPart(ctx, in, opts...)
}

func (c *countingAPI) AbortMultipartUpload(ctx context.Context, in *awss3.AbortMultipartUploadInput, opts ...func(*awss3.Options)) (*awss3.AbortMultipartUploadOutput, error) {
	c.aborts.Add(1)
	return c.API.AbortMultipartUpload(ctx, in, opts...)
}

// testClient returns a plain client of srv and a fresh bucket on it.
func testClient(t *testing.T) (*awss3.Client, string, string) {
	t.Helper()
	srv := storagetest.MinIO(t)
	client := awss3.New(awss3.Options{
		BaseEndpoint: aws.String(srv.Endpoint),
		Region:       srv.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		UsePathStyle: true,
	})
	return client, storagetest.NewBucket(t, srv), srv.Region
}

// TestUploadPath checks which S3 calls Put makes: one PutObject for a known
// size or a body that fits one part, 5 MiB multipart parts otherwise.
func TestUploadPath(t *testing.T) {
	client, bucket, region := testClient(t)
	tests := []struct {
		name      string
		size      int64
		known     bool
		wantPuts  int64
		wantParts int64
	}{
		{"known size", 6 << 20, true, 1, 0},
		{"unknown size, one part", 1 << 20, false, 1, 0},
		{"unknown size, exactly one part", 5 << 20, false, 1, 0},
		{"unknown size, exactly two parts", 10 << 20, false, 0, 2},
		{"unknown size, multipart", 12<<20 + 1, false, 0, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &countingAPI{API: client}
			store := s3.NewFromAPI(api, awss3.NewPresignClient(client), bucket, region)
			data := bytes.Repeat([]byte{'z'}, int(tc.size))
			size := tc.size
			if !tc.known {
				size = -1
			}
			if err := store.Put(t.Context(), "upload/path", struct{ io.Reader }{bytes.NewReader(data)}, size, ""); err != nil {
				t.Fatalf("Put: %v", err)
			}
			if api.puts.Load() != tc.wantPuts || api.parts.Load() != tc.wantParts {
				t.Errorf("PutObject calls = %d, UploadPart calls = %d; want %d and %d",
					api.puts.Load(), api.parts.Load(), tc.wantPuts, tc.wantParts)
			}
			info, err := store.Stat(t.Context(), "upload/path")
			if err != nil || info.Size != tc.size {
				t.Errorf("Stat = %+v, %v; want size %d", info, err, tc.size)
			}
		})
	}
}

// TestUploadConcurrency checks a streamed Put keeps several parts, but at
// most 3, in flight.
func TestUploadConcurrency(t *testing.T) {
	client, bucket, region := testClient(t)
	api := &countingAPI{API: client, onPart: func(int32) error {
		time.Sleep(50 * time.Millisecond)
		return nil
	}}
	store := s3.NewFromAPI(api, awss3.NewPresignClient(client), bucket, region)
	const size = 8*blob.MinPartSize + 1
	body := io.LimitReader(zeros{}, size)
	if err := store.Put(t.Context(), "concurrent/upload", body, -1, ""); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if n := api.maxFlight.Load(); n < 2 || n > 3 {
		t.Errorf("at most %d parts were in flight, want 2 or 3", n)
	}
	if info, err := store.Stat(t.Context(), "concurrent/upload"); err != nil || info.Size != size {
		t.Errorf("Stat = %+v, %v; want size %d", info, err, size)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

var errInjected = errors.New("injected UploadPart failure")

// TestFailedUploadLeavesNoParts checks every failure of a streamed Put
// aborts its multipart upload.
func TestFailedUploadLeavesNoParts(t *testing.T) {
	client, bucket, region := testClient(t)
	tests := []struct {
		name   string
		body   io.Reader
		size   int64
		onPart func(cancel context.CancelFunc) func(int32) error
	}{
		{"reader fails after two parts", io.MultiReader(io.LimitReader(zeros{}, 11<<20), failing{}), -1, nil},
		{"second part fails", io.LimitReader(zeros{}, 16<<20), -1, failPart(2)},
		{"context cancelled", io.LimitReader(zeros{}, 16<<20), -1, cancelAtPart(2)},
		{"body shorter than a large declared size", io.LimitReader(zeros{}, 11<<20), 6 << 30, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			api := &countingAPI{API: client}
			if tc.onPart != nil {
				api.onPart = tc.onPart(cancel)
			}
			store := s3.NewFromAPI(api, awss3.NewPresignClient(client), bucket, region)
			key := "failed/" + tc.name
			if err := store.Put(ctx, key, tc.body, tc.size, ""); err == nil {
				t.Fatal("Put succeeded")
			}
			if api.aborts.Load() != 1 {
				t.Errorf("AbortMultipartUpload calls = %d, want 1", api.aborts.Load())
			}
			out, err := client.ListMultipartUploads(t.Context(), &awss3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &key})
			if err != nil || len(out.Uploads) != 0 {
				t.Errorf("ListMultipartUploads = %d uploads, %v; want none", len(out.Uploads), err)
			}
			if _, err := store.Stat(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Stat: err = %v, want ErrNotFound", err)
			}
		})
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("body failed") }

func failPart(n int32) func(context.CancelFunc) func(int32) error {
	return func(context.CancelFunc) func(int32) error {
		return func(number int32) error {
			if number == n {
				return errInjected
			}
			return nil
		}
	}
}

func cancelAtPart(n int32) func(context.CancelFunc) func(int32) error {
	return func(cancel context.CancelFunc) func(int32) error {
		return func(number int32) error {
			if number == n {
				cancel()
			}
			return nil
		}
	}
}
