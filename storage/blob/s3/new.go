package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// DefaultRegion is used when Options.Region is empty.
const DefaultRegion = "us-east-1"

// Options configures a Store.
type Options struct {
	// Endpoint is the S3 base URL, for example "http://127.0.0.1:9000".
	// Empty means AWS S3 for Region.
	Endpoint string
	// PublicEndpoint is the base URL put in presigned URLs handed to
	// clients, when they reach the server under another name than the
	// API does (for example "https://blobs.example.com"). Default Endpoint.
	PublicEndpoint string
	// Bucket holds every object; it must exist (see EnsureBucket).
	Bucket string
	// Region is the bucket's region; default DefaultRegion.
	Region string
	// AccessKey and SecretKey are static credentials. If both are empty
	// the SDK's default chain (environment, shared config, IAM role) is used.
	AccessKey string
	SecretKey string
	// PathStyle forces path-style addressing (endpoint/bucket/key). It is
	// always used when Endpoint is set, since most S3-compatible servers
	// need it; it matters only for AWS.
	PathStyle bool
}

// New returns a Store for opts.Bucket. It does not contact the server; use
// Ping or EnsureBucket for that.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3 blob store: Bucket is required")
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if (opts.AccessKey == "") != (opts.SecretKey == "") {
		return nil, errors.New("s3 blob store: set both AccessKey and SecretKey, or neither")
	}
	cfg, err := loadConfig(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("s3 blob store: %w", err)
	}
	client := awss3.NewFromConfig(cfg, clientOptions(opts, opts.Endpoint))
	presignClient := client
	if opts.PublicEndpoint != "" && opts.PublicEndpoint != opts.Endpoint {
		presignClient = awss3.NewFromConfig(cfg, clientOptions(opts, opts.PublicEndpoint))
	}
	return NewFromAPI(client, awss3.NewPresignClient(presignClient), opts.Bucket, opts.Region), nil
}

func loadConfig(ctx context.Context, opts Options) (aws.Config, error) {
	load := []func(*config.LoadOptions) error{config.WithRegion(opts.Region)}
	if opts.AccessKey != "" {
		creds := credentials.NewStaticCredentialsProvider(opts.AccessKey, opts.SecretKey, "")
		load = append(load, config.WithCredentialsProvider(creds))
	}
	return config.LoadDefaultConfig(ctx, load...)
}

// clientOptions configures a client for endpoint. Checksums are computed
// only when an operation requires them: S3-compatible servers vary in their
// support, and presigned PUT URLs must not demand a checksum from clients.
func clientOptions(opts Options, endpoint string) func(*awss3.Options) {
	return func(o *awss3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = opts.PathStyle || opts.Endpoint != ""
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			// A server that accepts connections but never answers must not
			// stall workers and the reconciler; bodies may stream for long.
			tr.ResponseHeaderTimeout = ResponseHeaderTimeout
		})
	}
}

// ResponseHeaderTimeout bounds the wait for a response's headers after a
// request was sent (object bodies themselves are not time-limited).
const ResponseHeaderTimeout = 60 * time.Second

// EnsureBucket creates the bucket if it does not exist (dev setup, tests).
func (s *Store) EnsureBucket(ctx context.Context) error {
	_, err := s.api.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: &s.bucket})
	if err == nil {
		return nil
	}
	if !isNoBucket(err) {
		return fmt.Errorf("ensure bucket %s: %w", s.bucket, err)
	}
	in := &awss3.CreateBucketInput{Bucket: &s.bucket}
	if s.region != "" && s.region != DefaultRegion {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(s.region),
		}
	}
	_, err = s.api.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("ensure bucket %s: create: %w", s.bucket, err)
	}
	return nil
}
