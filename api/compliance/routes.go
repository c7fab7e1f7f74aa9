// Package compliance serves the batch compliance job endpoints
// (/2/compliance/jobs): an app creates a job and gets a signed upload URL
// served by the API itself (upload.go), uploads its ids there once, and
// polls the job until a worker has written the result file behind the
// presigned download URL. The API records the job and its upload; the
// workers notice the upload and do the processing.
package compliance

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// Enum names this package registers on the validator.
const (
	enumType   = "compliance_job_type"
	enumStatus = "compliance_job_status"
)

// fieldsParam selects optional job fields.
const fieldsParam = "compliance_job.fields"

// ProblemRenderer renders a problem as embedded in a response's errors
// array (apierr.Writer).
type ProblemRenderer interface {
	ProblemJSON(e *apierr.Error) map[string]any
}

// Deps is what the compliance endpoints need.
type Deps struct {
	Store Store
	Blobs BlobStore
	// Uploads signs and checks the upload URLs; every API replica must use
	// the same key (cmd keeps it in PostgreSQL). Nil: a random key of this
	// process (tests).
	Uploads UploadSigner
	// PublicURL is the base URL clients reach the API at
	// (AVIARY_PUBLIC_URL); upload URLs start with it. Empty: the scheme and
	// host of the request creating the job.
	PublicURL string
	// MaxUpload caps one upload (413 beyond it); zero means
	// storage.ComplianceMaxUpload.
	MaxUpload int64
	// Queue, when set, receives a job's task as soon as its upload is
	// recorded and it is its turn (upload.go). Nil, or an enqueue that
	// fails, leaves it to the workers' sweeper (the fallback).
	Queue     tasks.Enqueuer
	Validator *validation.Validator
	Problems  ProblemRenderer
	Logger    *slog.Logger
	Clock     func() time.Time
}

// uploadRequests is the upload endpoint's limit per job and 15-minute
// window: room for retries of a failed upload, not for a flood.
const uploadRequests = 30

// Module is the compliance feature.
type Module struct{ Deps }

// New builds the module and registers its enums on d.Validator. Without
// d.Uploads it signs with a random key of its own, which only this process
// accepts (tests); it panics if no key can be generated.
func New(d Deps) *Module {
	if d.Uploads == nil {
		d.Uploads = ephemeralSigner()
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.MaxUpload <= 0 {
		d.MaxUpload = storage.ComplianceMaxUpload
	}
	d.Validator.MustRegisterEnum(enumType, storage.ComplianceTypes)
	d.Validator.MustRegisterEnum(enumStatus, storage.JobStatusNames())
	return &Module{Deps: d}
}

// Routes lists the compliance endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{
			Pattern: "POST /2/compliance/jobs",
			Auth:    auth.BearerOnly.Writes(),
			Limit:   httpx.Limit{Name: "compliance_jobs_create", Requests: 150, Scope: httpx.PerApp},
			Query:   []string{fieldsParam},
			Body:    httpx.JSONBody(httpx.DefaultMaxBody),
			Handle:  m.create,
		},
		{
			Pattern: "GET /2/compliance/jobs",
			Auth:    auth.BearerOnly,
			Limit:   httpx.Limit{Name: "compliance_jobs_list", Requests: 150, Scope: httpx.PerApp},
			Query:   []string{"type", "status", fieldsParam},
			Handle:  m.list,
		},
		{
			// The job's upload URL: signed, no Authorization; one upload
			// per job, while it is created (upload.go).
			Pattern: "PUT /2/compliance/jobs/{id}/upload",
			Auth:    auth.Signed(m.verifyUpload),
			Limit:   httpx.Limit{Name: "compliance_jobs_upload", Requests: uploadRequests, Scope: httpx.PerResource, Resource: "id"},
			Query:   m.Uploads.Params(),
			Handle:  m.upload,
		},
		{
			Pattern: "GET /2/compliance/jobs/{id}",
			Auth:    auth.BearerOnly,
			Limit:   httpx.Limit{Name: "compliance_jobs_get", Requests: 150, Scope: httpx.PerApp},
			Query:   []string{fieldsParam},
			Handle:  m.get,
		},
	}
}

// ephemeralSigner is an upload signer with a random key of this process.
func ephemeralSigner() *blob.URLSigner {
	key, err := blob.NewSigningKey()
	if err != nil {
		panic(fmt.Sprintf("compliance: %v", err))
	}
	s, err := blob.NewURLSigner(key)
	if err != nil {
		panic(fmt.Sprintf("compliance: %v", err))
	}
	return s
}
