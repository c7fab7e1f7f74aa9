package compliance

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// maxListedJobs bounds GET /2/compliance/jobs (newest first); the platform
// endpoint has no pagination parameters.
const maxListedJobs = 1000

type createRequest struct {
	Type      string `json:"type" validate:"required,enum=compliance_job_type"`
	Name      string `json:"name,omitempty" validate:"max=64"`
	Resumable bool   `json:"resumable,omitempty"`
}

func (m *Module) create(w http.ResponseWriter, r *http.Request) error {
	fields, err := httpx.Fields(r, fieldsParam, jobFields)
	if err != nil {
		return err
	}
	var req createRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	app := httpx.Principal(r).App
	job, err := m.newJob(r, app.ID, req)
	if err != nil {
		return err
	}
	job, err = m.Store.CreateComplianceJob(r.Context(), job)
	if errors.Is(err, storage.ErrConflict) {
		return apierr.Conflict(fmt.Sprintf("A %s compliance job is already in progress for this app; wait until it completes.", req.Type))
	}
	if err != nil {
		return fmt.Errorf("create compliance job: %w", err)
	}
	m.Logger.InfoContext(r.Context(), "compliance job created", "job_id", job.ID, "app_id", app.ID, "type", job.Type)
	return httpx.WriteJSON(w, http.StatusOK, jobResponse{Data: render(job, fields)})
}

// newJob allocates the id and signs both URLs: the upload URL for the
// API's own upload endpoint, the download URL for the blob store.
func (m *Module) newJob(r *http.Request, appID int64, req createRequest) (storage.ComplianceJob, error) {
	ctx := r.Context()
	id, err := m.Store.NextID(ctx)
	if err != nil {
		return storage.ComplianceJob{}, err
	}
	now := m.Clock().UTC().Truncate(time.Millisecond)
	job := storage.ComplianceJob{
		ID: id, AppID: appID, Type: req.Type, Name: req.Name, Resumable: req.Resumable, Status: storage.JobCreated,
		UploadKey: storage.ComplianceUploadKey(appID, id), ResultKey: storage.ComplianceResultKey(appID, id),
		UploadExpiresAt: now.Add(storage.ComplianceUploadURLTTL), DownloadExpiresAt: now.Add(storage.ComplianceDownloadURLTTL),
		CreatedAt: now,
	}
	job.UploadURL = m.uploadURL(r, id, job.UploadExpiresAt)
	if job.DownloadURL, err = m.Blobs.PresignGet(ctx, job.ResultKey, storage.ComplianceDownloadURLTTL); err != nil {
		return job, fmt.Errorf("presign download for job %d: %w", id, err)
	}
	return job, nil
}

func (m *Module) list(w http.ResponseWriter, r *http.Request) error {
	q := httpx.ReadQuery(r)
	typ := q.RequiredEnum("type", m.Validator.Enum(enumType))
	var status string
	if q.Raw("status") != "" { // an empty status filters nothing
		status = q.Enum("status", m.Validator.Enum(enumStatus), "")
	}
	if err := q.Err(); err != nil {
		return err
	}
	fields, err := httpx.Fields(r, fieldsParam, jobFields)
	if err != nil {
		return err
	}
	app := httpx.Principal(r).App
	filter := storage.ComplianceFilter{AppID: app.ID, Type: typ, Status: storage.JobStatus(status), Limit: maxListedJobs}
	jobs, err := m.Store.ListComplianceJobs(r.Context(), filter)
	if err != nil {
		return fmt.Errorf("list compliance jobs of app %d: %w", app.ID, err)
	}
	data := make([]jobObject, 0, len(jobs))
	for _, j := range jobs {
		data = append(data, render(j, fields))
	}
	return httpx.WriteJSON(w, http.StatusOK, listResponse{Data: data, Meta: listMeta{ResultCount: len(data)}})
}

func (m *Module) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	fields, err := httpx.Fields(r, fieldsParam, jobFields)
	if err != nil {
		return err
	}
	app := httpx.Principal(r).App
	job, err := m.Store.AppComplianceJob(r.Context(), app.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return apierr.NotFound("compliance_job", "id", httpx.FormatID(id))
	}
	if err != nil {
		return fmt.Errorf("load compliance job %d: %w", id, err)
	}
	body := jobResponse{Data: render(job, fields)}
	if job.Status == storage.JobFailed && job.FailureReason != "" {
		body.Errors = []map[string]any{m.Problems.ProblemJSON(&apierr.Error{Title: "Compliance job failed", Detail: job.FailureReason})}
	}
	return httpx.WriteJSON(w, http.StatusOK, body)
}
