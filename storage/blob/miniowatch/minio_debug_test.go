package miniowatch_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func TestDebugListen(t *testing.T) {
	f := newFixture(t)
	c, err := minio.New(strings.TrimPrefix(f.srv.Endpoint, "http://"), &minio.Options{Creds: credentials.NewStaticV4(f.srv.AccessKey, f.srv.SecretKey, ""), Region: f.srv.Region})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Second)
	defer cancel()
	ch := c.ListenBucketNotification(ctx, f.bucket, "x/", "", []string{"s3:ObjectCreated:*"})
	go func() {
		for i := 0; i < 40; i++ {
			time.Sleep(100 * time.Millisecond)
			f.put(t, "x/probe"+strconv.Itoa(i))
		}
		t.Logf("puts done at %v", time.Since(start))
	}()
	for info := range ch {
		t.Logf("%v info err=%v records=%d", time.Since(start), info.Err, len(info.Records))
		for _, r := range info.Records {
			t.Logf("  %s %s", r.EventName, r.S3.Object.Key)
		}
	}
}
