package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrJobBusy is returned when a compliance job may not start yet: another
// job of its app and type is in progress, or an older one is waiting to
// start. At most one job per app and type is in progress at any moment, and
// waiting jobs start in the order they were queued.
var ErrJobBusy = errors.New("storage: another compliance job of this app and type goes first")

// Compliance job types, exactly as the API spells them.
const (
	ComplianceTypeTweets = "tweets"
	ComplianceTypeUsers  = "users"
)

// ComplianceTypes lists every compliance job type, in the API's order.
var ComplianceTypes = []string{ComplianceTypeTweets, ComplianceTypeUsers}

// JobStatus is the state of a compliance job. The compliance_jobs.status
// CHECK constraint allows exactly JobStatuses (a postgres test compares
// them).
type JobStatus string

// Compliance job statuses, exactly as the API spells them.
const (
	JobCreated    JobStatus = "created"
	JobInProgress JobStatus = "in_progress"
	JobFailed     JobStatus = "failed"
	JobComplete   JobStatus = "complete"
)

// JobStatuses lists every JobStatus, in lifecycle order.
var JobStatuses = []JobStatus{JobCreated, JobInProgress, JobFailed, JobComplete}

// JobStatusNames returns JobStatuses as strings (for enum validation).
func JobStatusNames() []string {
	out := make([]string, len(JobStatuses))
	for i, s := range JobStatuses {
		out[i] = string(s)
	}
	return out
}

// Final reports whether no further processing happens to a job in status s.
func (s JobStatus) Final() bool { return s == JobFailed || s == JobComplete }

// Compliance job timing from the spec: the upload URL lives 15 minutes, the
// download URL 7 days.
const (
	ComplianceUploadURLTTL   = 15 * time.Minute
	ComplianceDownloadURLTTL = 7 * 24 * time.Hour
)

// Compliance upload gateway timing (docs/compliance-upload-gateway.md): a PUT
// claims the job's upload for ComplianceUploadLease and renews the claim
// every ComplianceUploadRenew while the body streams, so a claim whose API
// process died lapses within a minute and a retry can take over.
const (
	ComplianceUploadLease = 60 * time.Second
	ComplianceUploadRenew = 15 * time.Second
)

// ComplianceMaxUpload is the default cap on one compliance upload
// (AVIARY_COMPLIANCE_MAX_UPLOAD).
const ComplianceMaxUpload int64 = 4 << 30

// ComplianceResultContentType is the media type of a result file: JSON
// lines, one object per line, not one JSON document.
const ComplianceResultContentType = "application/x-ndjson"

// ComplianceBlobPrefix is the key prefix of every compliance object; upload
// notifications are watched under it.
const ComplianceBlobPrefix = "compliance/"

// ComplianceJobOfKey returns the job a compliance object key (upload or
// result) belongs to; ok is false for any other key.
func ComplianceJobOfKey(key string) (jobID int64, ok bool) {
	rest, found := strings.CutPrefix(key, ComplianceBlobPrefix)
	if !found {
		return 0, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return 0, false
	}
	if _, err := strconv.ParseInt(parts[0], 10, 64); err != nil {
		return 0, false
	}
	id, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// ComplianceUploadKey is where a job's uploaded id list is stored.
func ComplianceUploadKey(appID, jobID int64) string {
	return fmt.Sprintf("%s%d/%d/upload.txt", ComplianceBlobPrefix, appID, jobID)
}

// ComplianceResultKey is the object the worker writes the results to.
func ComplianceResultKey(appID, jobID int64) string {
	return fmt.Sprintf("%s%d/%d/result.json", ComplianceBlobPrefix, appID, jobID)
}

// ComplianceJob is a batch compliance job owned by an app.
type ComplianceJob struct {
	ID                int64
	AppID             int64
	Type              string
	Name              string
	Resumable         bool
	Status            JobStatus
	UploadKey         string
	ResultKey         string
	UploadExpiresAt   time.Time
	DownloadExpiresAt time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// UploadURL and DownloadURL are the presigned URLs handed out at
	// creation; they stay valid until the matching expiry.
	UploadURL   string
	DownloadURL string

	// Upload bookkeeping (not part of the public object): the gateway's
	// claim on the upload (UploadLeaseUntil is set while a PUT streams),
	// when the winning PUT began and finished and how many bytes it
	// stored, and when retention deleted the job's blobs.
	UploadStartedAt  *time.Time
	UploadLeaseUntil *time.Time
	UploadedAt       *time.Time
	UploadBytes      int64
	BlobsDeletedAt   *time.Time

	// Processing bookkeeping (not part of the public object).
	EnqueuedAt     *time.Time
	StartedAt      *time.Time
	HeartbeatAt    *time.Time
	CompletedAt    *time.Time
	Attempts       int
	LinesRead      int64
	MalformedLines int64
	ResultLines    int64
	FailureReason  string
}

// Progress returns the job's recorded processing counts.
func (j ComplianceJob) Progress() ComplianceProgress {
	return ComplianceProgress{LinesRead: j.LinesRead, MalformedLines: j.MalformedLines, ResultLines: j.ResultLines}
}

// ComplianceFilter selects an app's jobs for listing.
type ComplianceFilter struct {
	AppID  int64
	Type   string
	Status JobStatus // optional
	Limit  int
}

// ComplianceProgress is what a worker reports while it processes a job.
type ComplianceProgress struct {
	LinesRead      int64
	MalformedLines int64
	ResultLines    int64
}
