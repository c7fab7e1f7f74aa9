package compliance

import (
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// jobFieldNames are the fields of a compliance job, the values
// compliance_job.fields may name (the spec's list).
var jobFieldNames = []string{"created_at", "download_expires_at", "download_url", "id", "name", "resumable",
	"status", "type", "upload_expires_at", "upload_url"}

// jobFields are a job's fields for compliance_job.fields. Every field is a
// default one: earlier versions of the platform's OpenAPI description
// required all of them but name (2.167 lists none), the platform returns
// resumable by default and name whenever the job has one
// (docs/compliance-api.md, "Fields"). The parameter is validated; since it
// only adds fields, it cannot change the object.
var jobFields = httpx.ObjectFields{Default: jobFieldNames, Allowed: jobFieldNames}

// jobObject is a compliance job as the API shows it: id and the fields of
// the request's FieldSet; name only when the job has one.
type jobObject struct {
	ID                string            `json:"id"`
	Type              string            `json:"type,omitempty"`
	Status            storage.JobStatus `json:"status,omitempty"`
	Name              string            `json:"name,omitempty"`
	Resumable         *bool             `json:"resumable,omitempty"`
	CreatedAt         string            `json:"created_at,omitempty"`
	UploadURL         string            `json:"upload_url,omitempty"`
	UploadExpiresAt   string            `json:"upload_expires_at,omitempty"`
	DownloadURL       string            `json:"download_url,omitempty"`
	DownloadExpiresAt string            `json:"download_expires_at,omitempty"`
}

type jobResponse struct {
	Data   jobObject        `json:"data"`
	Errors []map[string]any `json:"errors,omitempty"`
}

type listResponse struct {
	Data []jobObject `json:"data"`
	Meta listMeta    `json:"meta"`
}

type listMeta struct {
	ResultCount int `json:"result_count"`
}

// render shows j with id plus the fields fs holds (the defaults plus the
// requested ones, see docs/compliance-api.md); name only when the job has
// one.
func render(j storage.ComplianceJob, fs httpx.FieldSet) jobObject {
	o := jobObject{ID: httpx.FormatID(j.ID)}
	if fs.Has("type") {
		o.Type = j.Type
	}
	if fs.Has("status") {
		o.Status = j.Status
	}
	if fs.Has("name") {
		o.Name = j.Name
	}
	if fs.Has("resumable") {
		o.Resumable = &j.Resumable
	}
	if fs.Has("created_at") {
		o.CreatedAt = httpx.FormatTime(j.CreatedAt)
	}
	if fs.Has("upload_url") {
		o.UploadURL = j.UploadURL
	}
	if fs.Has("upload_expires_at") {
		o.UploadExpiresAt = httpx.FormatTime(j.UploadExpiresAt)
	}
	if fs.Has("download_url") {
		o.DownloadURL = j.DownloadURL
	}
	if fs.Has("download_expires_at") {
		o.DownloadExpiresAt = httpx.FormatTime(j.DownloadExpiresAt)
	}
	return o
}
