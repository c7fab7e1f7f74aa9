package s3_test

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/aviary-dev/aviary/storage/blob/s3"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// countingAPI counts the upload calls reaching a real client.
type countingAPI struct {
	s3.API
	puts, parts atomic.Int64
}

func (c *countingAPI) PutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.Options)) (*awss3.PutObjectOutput, error) {
	c.puts.Add(1)
	return c.API.PutObject(ctx, in, opts...)
}

func (c *countingAPI) UploadPart(ctx context.Context, in *awss3.UploadPartInput, opts ...func(*awss3.Options)) (*awss3.UploadPartOutput, error) {
	c.parts.Add(1)
	return c.API.UploadPart(ctx, in, opts...)
}

// TestUploadPath checks which S3 calls Put makes: one PutObject for a known
// size, 5 MiB multipart parts for an unknown size.
func TestUploadPath(t *testing.T) {
	srv := storagetest.MinIO(t)
	bucket := storagetest.NewBucket(t, srv)
	client := awss3.New(awss3.Options{
		BaseEndpoint: aws.String(srv.Endpoint),
		Region:       srv.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		UsePathStyle: true,
	})
	tests := []struct {
		name      string
		size      int64
		known     bool
		wantPuts  int64
		wantParts int64
	}{
		{"known size", 6 << 20, true, 1, 0},
		{"unknown size, one part", 1 << 20, false, 1, 0},
		{"unknown size, multipart", 12<<20 + 1, false, 0, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &countingAPI{API: client}
			store := s3.NewFromAPI(api, awss3.NewPresignClient(client), bucket, srv.Region)
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
