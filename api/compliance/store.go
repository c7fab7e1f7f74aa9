package compliance

import (
	"context"
	"io"
	"net/url"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access compliance endpoints need
// (storage/postgres.DB satisfies it).
type Store interface {
	NextID(ctx context.Context) (int64, error)
	CreateComplianceJob(ctx context.Context, j storage.ComplianceJob) (storage.ComplianceJob, error)
	AppComplianceJob(ctx context.Context, appID, id int64) (storage.ComplianceJob, error)
	ListComplianceJobs(ctx context.Context, f storage.ComplianceFilter) ([]storage.ComplianceJob, error)

	// The upload gateway's claim on a job's upload (see upload.go).
	ClaimComplianceUpload(ctx context.Context, id int64, claim string, at, leaseUntil time.Time) (storage.ComplianceJob, error)
	RenewComplianceUpload(ctx context.Context, id int64, claim string, leaseUntil time.Time) error
	CompleteComplianceUpload(ctx context.Context, id int64, claim string, size int64, at time.Time) error
	ReleaseComplianceUpload(ctx context.Context, id int64, claim string) error
	// ComplianceJobTurn reports whether an uploaded job may start now (no
	// other job of its app and type in progress or queued ahead of it).
	ComplianceJobTurn(ctx context.Context, job storage.ComplianceJob) (bool, error)
}

// BlobStore stores uploads and presigns result downloads (blob.Store
// satisfies it).
type BlobStore interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// UploadSigner signs the upload URLs the API serves and checks them
// (*blob.URLSigner satisfies it). Verify's error is a phrase a
// client may read.
type UploadSigner interface {
	Sign(method, resource string, expires time.Time) url.Values
	Verify(method, resource string, q url.Values, now time.Time) error
	// Params names the query parameters Sign adds.
	Params() []string
}
