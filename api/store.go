package api

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access the API tier needs (storage/postgres.DB
// satisfies it).
type Store interface {
	NextID(ctx context.Context) (int64, error)

	CreateComplianceJob(ctx context.Context, j storage.ComplianceJob) (storage.ComplianceJob, error)
	AppComplianceJob(ctx context.Context, appID, id int64) (storage.ComplianceJob, error)
	ListComplianceJobs(ctx context.Context, f storage.ComplianceFilter) ([]storage.ComplianceJob, error)

	CreatePost(ctx context.Context, p storage.Post) (storage.Post, error)
	PostByID(ctx context.Context, id int64) (storage.Post, error)
	DeletePost(ctx context.Context, id int64, at time.Time) (storage.Post, error)
}
