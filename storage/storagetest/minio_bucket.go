package storagetest

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// bucketCleanupTimeout bounds emptying and removing one test bucket.
const bucketCleanupTimeout = time.Minute

// NewBucket creates a uniquely named bucket ("aviary-test-<random>") on srv
// and registers a cleanup that empties and removes it.
func NewBucket(t testing.TB, srv MinIOServer) string {
	t.Helper()
	name := NewBucketName(t, srv)
	client := minioClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), bucketCleanupTimeout)
	defer cancel()
	if err := client.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: srv.Region}); err != nil {
		t.Fatalf("storagetest: create bucket %s: %v", name, err)
	}
	return name
}

// NewBucketName returns a unique bucket name without creating the bucket
// (for tests of bucket creation) and registers a cleanup that empties and
// removes the bucket if it exists by then.
func NewBucketName(t testing.TB, srv MinIOServer) string {
	t.Helper()
	name := "aviary-test-" + randomHex(8)
	client := minioClient(t, srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bucketCleanupTimeout)
		defer cancel()
		if err := removeBucket(ctx, client, name); err != nil {
			t.Errorf("storagetest: %v", err)
		}
	})
	return name
}

func minioClient(t testing.TB, srv MinIOServer) *minio.Client {
	t.Helper()
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatalf("storagetest: endpoint %q: %v", srv.Endpoint, err)
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
		Secure: u.Scheme == "https",
		Region: srv.Region,
	})
	if err != nil {
		t.Fatalf("storagetest: minio client: %v", err)
	}
	return client
}

// removeBucket deletes the bucket with everything in it (MinIO's force
// delete, which also finds objects MinIO's listing hides, such as "a/b"
// when an object "a" exists); a missing bucket is not an error.
func removeBucket(ctx context.Context, client *minio.Client, name string) error {
	ok, err := client.BucketExists(ctx, name)
	if err == nil && ok {
		err = client.RemoveBucketWithOptions(ctx, name, minio.RemoveBucketOptions{ForceDelete: true})
	}
	if err != nil {
		return fmt.Errorf("remove bucket %s: %w", name, err)
	}
	return nil
}
