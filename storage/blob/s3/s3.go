// Package s3 is the blob.Store driver for S3-compatible servers (AWS S3,
// MinIO, Ceph, R2, ...) on aws-sdk-go-v2. Objects are streamed in both
// directions; uploads of unknown size go through a multipart upload in
// parts of at least 5 MiB, so memory stays bounded (part size ×
// uploadConcurrency). The Store also implements blob.Multiparter on S3's
// multipart upload calls.
package s3

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/aviary-dev/aviary/storage/blob"
)

const (
	// maxSinglePut is S3's limit for one PutObject; larger known sizes go
	// through multipart upload.
	maxSinglePut = 5 << 30
	// maxParts is S3's limit on parts per multipart upload.
	maxParts = 10000
	// uploadConcurrency bounds parts in flight (and buffered) per upload.
	uploadConcurrency = 3
)

// API is the subset of *s3.Client the Store uses, so tests can inject
// faults. *s3.Client implements it.
type API interface {
	PutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.Options)) (*awss3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *awss3.GetObjectInput, opts ...func(*awss3.Options)) (*awss3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *awss3.HeadObjectInput, opts ...func(*awss3.Options)) (*awss3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, in *awss3.DeleteObjectInput, opts ...func(*awss3.Options)) (*awss3.DeleteObjectOutput, error)
	HeadBucket(ctx context.Context, in *awss3.HeadBucketInput, opts ...func(*awss3.Options)) (*awss3.HeadBucketOutput, error)
	CreateBucket(ctx context.Context, in *awss3.CreateBucketInput, opts ...func(*awss3.Options)) (*awss3.CreateBucketOutput, error)
	MultipartAPI
}

// MultipartAPI is the multipart upload part of API.
type MultipartAPI interface {
	CreateMultipartUpload(ctx context.Context, in *awss3.CreateMultipartUploadInput, opts ...func(*awss3.Options)) (*awss3.CreateMultipartUploadOutput, error)
	UploadPart(ctx context.Context, in *awss3.UploadPartInput, opts ...func(*awss3.Options)) (*awss3.UploadPartOutput, error)
	ListParts(ctx context.Context, in *awss3.ListPartsInput, opts ...func(*awss3.Options)) (*awss3.ListPartsOutput, error)
	CompleteMultipartUpload(ctx context.Context, in *awss3.CompleteMultipartUploadInput, opts ...func(*awss3.Options)) (*awss3.CompleteMultipartUploadOutput, error)
	AbortMultipartUpload(ctx context.Context, in *awss3.AbortMultipartUploadInput, opts ...func(*awss3.Options)) (*awss3.AbortMultipartUploadOutput, error)
}

// Presigner is the subset of *s3.PresignClient the Store uses.
type Presigner interface {
	PresignPutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
	PresignGetObject(ctx context.Context, in *awss3.GetObjectInput, opts ...func(*awss3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

// Store is a blob.Store on one S3 bucket. It is safe for concurrent use.
type Store struct {
	api       API
	presigner Presigner
	bucket    string
	region    string
	buffers   sync.Pool // *[]byte of blob.MinPartSize (stream.go)
}

var _ blob.Store = (*Store)(nil)

// NewFromAPI builds a Store on existing clients (New wires real ones).
// region is used only by EnsureBucket.
func NewFromAPI(api API, presigner Presigner, bucket, region string) *Store {
	return &Store{api: api, presigner: presigner, bucket: bucket, region: region}
}

// Put stores r under key. With size >= 0 it is one PutObject (multipart
// beyond 5 GiB); with size -1 the body is streamed as a multipart upload in
// 5 MiB parts (one PutObject if it fits one part). S3 makes the object
// visible only once complete.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := blob.CheckKey("put", key); err != nil {
		return err
	}
	if contentType == "" {
		contentType = blob.DefaultContentType
	}
	in := &awss3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: r, ContentType: &contentType}
	var err error
	if size >= 0 && size <= maxSinglePut {
		in.ContentLength = &size
		_, err = s.api.PutObject(ctx, in, unsignedPayload)
	} else {
		err = s.upload(ctx, in, size)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// unsignedPayload sends a body as UNSIGNED-PAYLOAD instead of signing its
// SHA-256: a stream cannot be read twice to hash it (over plain HTTP the
// SDK would refuse it), and hashing a buffered part or a file costs a pass
// over every byte here and another in the server that checks it, the
// largest CPU cost of an upload. The request itself stays signed; TLS
// protects the payload in transit (docs/blob-storage.md).
func unsignedPayload(o *awss3.Options) {
	o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
}

// Get opens key for reading; the caller closes the reader.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	if err := blob.CheckKey("get", key); err != nil {
		return nil, blob.Info{}, err
	}
	out, err := s.api.GetObject(ctx, &awss3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, blob.Info{}, wrap("get", key, err)
	}
	return out.Body, info(key, out.ContentLength, out.LastModified, out.ContentType), nil
}

// Stat describes key without reading it.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.CheckKey("stat", key); err != nil {
		return blob.Info{}, err
	}
	out, err := s.api.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return blob.Info{}, wrap("stat", key, err)
	}
	return info(key, out.ContentLength, out.LastModified, out.ContentType), nil
}

// Delete removes key; deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.CheckKey("delete", key); err != nil {
		return err
	}
	if _, err := s.api.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return wrap("delete", key, err)
	}
	return nil
}

// PresignPut returns a URL a plain HTTP client can PUT key to until ttl
// elapses. Only the host header is signed, so any Content-Type (or none,
// as with `curl -T file URL`) is accepted.
func (s *Store) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := checkPresign("presign put", key, ttl); err != nil {
		return "", err
	}
	req, err := s.presigner.PresignPutObject(ctx, &awss3.PutObjectInput{Bucket: &s.bucket, Key: &key}, awss3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("presign put %s: %w", key, err)
	}
	return req.URL, nil
}

// PresignGet returns a URL a plain HTTP client can GET key from until ttl
// elapses.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := checkPresign("presign get", key, ttl); err != nil {
		return "", err
	}
	req, err := s.presigner.PresignGetObject(ctx, &awss3.GetObjectInput{Bucket: &s.bucket, Key: &key}, awss3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("presign get %s: %w", key, err)
	}
	return req.URL, nil
}

func checkPresign(op, key string, ttl time.Duration) error {
	if err := blob.CheckKey(op, key); err != nil {
		return err
	}
	return blob.CheckTTL(op, key, ttl)
}

// Ping checks the bucket is reachable with the configured credentials.
func (s *Store) Ping(ctx context.Context) error {
	if _, err := s.api.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: &s.bucket}); err != nil {
		return fmt.Errorf("ping bucket %s: %w", s.bucket, err)
	}
	return nil
}

func info(key string, size *int64, modified *time.Time, contentType *string) blob.Info {
	ct := aws.ToString(contentType)
	if ct == "" {
		ct = blob.DefaultContentType
	}
	return blob.Info{Key: key, Size: aws.ToInt64(size), LastModified: aws.ToTime(modified).UTC(), ContentType: ct}
}

// wrap adds op and key to err, turning S3's not-found errors into
// blob.ErrNotFound.
func wrap(op, key string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%s %s: %w", op, key, blob.ErrNotFound)
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}
