package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/validation"
)

// Compliance job timing from the spec: the upload URL lives 15 minutes, the
// download URL 7 days.
const (
	UploadURLTTL   = 15 * time.Minute
	DownloadURLTTL = 7 * 24 * time.Hour
	// maxListedJobs bounds GET /2/compliance/jobs (newest first).
	maxListedJobs = 1000
)

var (
	complianceTypes    = []string{storage.ComplianceTypeTweets, storage.ComplianceTypeUsers}
	complianceStatuses = []string{storage.JobCreated, storage.JobInProgress, storage.JobFailed, storage.JobComplete}
	complianceFields   = []string{"created_at", "download_expires_at", "download_url", "id", "name", "resumable",
		"status", "type", "upload_expires_at", "upload_url"}
)

type createComplianceJobRequest struct {
	Type      string `json:"type" validate:"required,oneof=tweets users"`
	Name      string `json:"name,omitempty" validate:"max=64"`
	Resumable bool   `json:"resumable,omitempty"`
}

// ComplianceUploadKey and ComplianceResultKey are where a job's files live.
func ComplianceUploadKey(appID, jobID int64) string {
	return fmt.Sprintf("compliance/%d/%d/upload.txt", appID, jobID)
}

// ComplianceResultKey is the object the worker writes the results to.
func ComplianceResultKey(appID, jobID int64) string {
	return fmt.Sprintf("compliance/%d/%d/result.json", appID, jobID)
}

func (s *Server) createComplianceJob(w http.ResponseWriter, r *http.Request) error {
	fields, err := jobFields(r)
	if err != nil {
		return err
	}
	var req createComplianceJobRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	app := mustPrincipal(r).App
	job, err := s.newComplianceJob(r, app.ID, req)
	if err != nil {
		return err
	}
	job, err = s.Store.CreateComplianceJob(r.Context(), job)
	if errors.Is(err, storage.ErrConflict) {
		return apierr.Conflict(fmt.Sprintf("A %s compliance job is already in progress for this app; wait until it completes.", req.Type))
	}
	if err != nil {
		return fmt.Errorf("create compliance job: %w", err)
	}
	s.Logger.InfoContext(r.Context(), "compliance job created", "job_id", job.ID, "app_id", app.ID, "type", job.Type)
	return writeJSON(w, http.StatusOK, map[string]any{"data": renderJob(job, fields)})
}

// newComplianceJob allocates the id and presigns both URLs.
func (s *Server) newComplianceJob(r *http.Request, appID int64, req createComplianceJobRequest) (storage.ComplianceJob, error) {
	ctx := r.Context()
	id, err := s.Store.NextID(ctx)
	if err != nil {
		return storage.ComplianceJob{}, err
	}
	now := s.now().Truncate(time.Millisecond)
	job := storage.ComplianceJob{
		ID: id, AppID: appID, Type: req.Type, Name: req.Name, Resumable: req.Resumable, Status: storage.JobCreated,
		UploadKey: ComplianceUploadKey(appID, id), ResultKey: ComplianceResultKey(appID, id),
		UploadExpiresAt: now.Add(UploadURLTTL), DownloadExpiresAt: now.Add(DownloadURLTTL), CreatedAt: now,
	}
	if job.UploadURL, err = s.Blobs.PresignPut(ctx, job.UploadKey, UploadURLTTL); err != nil {
		return job, fmt.Errorf("presign upload for job %d: %w", id, err)
	}
	if job.DownloadURL, err = s.Blobs.PresignGet(ctx, job.ResultKey, DownloadURLTTL); err != nil {
		return job, fmt.Errorf("presign download for job %d: %w", id, err)
	}
	return job, nil
}

func (s *Server) listComplianceJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var errs []validation.FieldError
	jobType := q.Get("type")
	if !q.Has("type") || jobType == "" {
		return apierr.MissingParam("type")
	}
	if e := validation.Enum("type", jobType, complianceTypes); e != nil {
		errs = append(errs, *e)
	}
	status := q.Get("status")
	if q.Has("status") {
		if e := validation.Enum("status", status, complianceStatuses); e != nil {
			errs = append(errs, *e)
		}
	}
	fields, err := jobFields(r)
	if err != nil {
		return err
	}
	if err := fieldErrors(errs); err != nil {
		return err
	}
	app := mustPrincipal(r).App
	jobs, err := s.Store.ListComplianceJobs(r.Context(), storage.ComplianceFilter{AppID: app.ID, Type: jobType, Status: status, Limit: maxListedJobs})
	if err != nil {
		return fmt.Errorf("list compliance jobs of app %d: %w", app.ID, err)
	}
	data := make([]map[string]any, 0, len(jobs))
	for _, j := range jobs {
		data = append(data, renderJob(j, fields))
	}
	return writeJSON(w, http.StatusOK, map[string]any{"data": data, "meta": map[string]any{"result_count": len(data)}})
}

func (s *Server) getComplianceJob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	fields, err := jobFields(r)
	if err != nil {
		return err
	}
	app := mustPrincipal(r).App
	job, err := s.Store.AppComplianceJob(r.Context(), app.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return apierr.NotFound("compliance_job", "id", ids.Format(id))
	}
	if err != nil {
		return fmt.Errorf("load compliance job %d: %w", id, err)
	}
	body := map[string]any{"data": renderJob(job, fields)}
	if job.Status == storage.JobFailed && job.FailureReason != "" {
		body["errors"] = []any{s.Errors.ProblemJSON(&apierr.Error{Title: "Compliance job failed", Detail: job.FailureReason})}
	}
	return writeJSON(w, http.StatusOK, body)
}

// jobFields parses compliance_job.fields; nil means the default (all fields).
func jobFields(r *http.Request) ([]string, error) {
	q := r.URL.Query()
	if !q.Has("compliance_job.fields") {
		return nil, nil
	}
	fields, errs := validation.FieldList("compliance_job.fields", q.Get("compliance_job.fields"), complianceFields)
	return fields, fieldErrors(errs)
}

// renderJob renders a job as the API shows it. With fields given, the
// object holds id plus exactly those fields (see docs/compliance-fields.md).
func renderJob(j storage.ComplianceJob, fields []string) map[string]any {
	all := map[string]any{
		"id":                  ids.Format(j.ID),
		"type":                j.Type,
		"status":              j.Status,
		"resumable":           j.Resumable,
		"created_at":          formatTime(j.CreatedAt),
		"upload_url":          j.UploadURL,
		"upload_expires_at":   formatTime(j.UploadExpiresAt),
		"download_url":        j.DownloadURL,
		"download_expires_at": formatTime(j.DownloadExpiresAt),
	}
	if j.Name != "" {
		all["name"] = j.Name
	}
	if fields == nil {
		return all
	}
	out := map[string]any{"id": all["id"]}
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}

// formatTime renders timestamps the way the platform does: UTC, milliseconds.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// mustPrincipal returns the authenticated caller; routes are always wrapped
// by an auth middleware, so its absence is a wiring bug.
func mustPrincipal(r *http.Request) auth.Principal {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		panic("api: route served without authentication middleware")
	}
	return p
}
