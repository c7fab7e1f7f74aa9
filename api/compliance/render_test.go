package compliance

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

func TestRender(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 123e6, time.UTC)
	job := storage.ComplianceJob{
		ID: 1460323737035677698, Type: "tweets", Status: storage.JobInProgress, Resumable: false,
		CreatedAt: t0, UploadURL: "https://up", UploadExpiresAt: t0.Add(storage.ComplianceUploadURLTTL),
		DownloadURL: "https://down", DownloadExpiresAt: t0.Add(storage.ComplianceDownloadURLTTL),
	}
	named := job
	named.Name = "nightly"
	const every = `{"id":"1460323737035677698","type":"tweets","status":"in_progress","resumable":false,` +
		`"created_at":"2024-03-01T10:00:00.123Z","upload_url":"https://up","upload_expires_at":"2024-03-01T10:15:00.123Z",` +
		`"download_url":"https://down","download_expires_at":"2024-03-08T10:00:00.123Z"}`
	const everyNamed = `{"id":"1460323737035677698","type":"tweets","status":"in_progress","name":"nightly","resumable":false,` +
		`"created_at":"2024-03-01T10:00:00.123Z","upload_url":"https://up","upload_expires_at":"2024-03-01T10:15:00.123Z",` +
		`"download_url":"https://down","download_expires_at":"2024-03-08T10:00:00.123Z"}`
	tests := []struct {
		name   string
		job    storage.ComplianceJob
		fields string // compliance_job.fields; "" means the parameter is absent
		want   string
	}{
		{"defaults: every field, no name", job, "", every},
		{"defaults: name when set", named, "", everyNamed},
		{"fields add, never remove (the issue's request)", job, "id,status,upload_url", every},
		{"a single field keeps the defaults", job, "status", every},
		{"name requested and set", named, "name", everyNamed},
		{"name requested but unset is left out", job, "name", every},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := "/2/compliance/jobs"
			if tc.fields != "" {
				target += "?compliance_job.fields=" + tc.fields
			}
			fs, err := httpx.Fields(httptest.NewRequest("GET", target, nil), fieldsParam, jobFields)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(render(tc.job, fs))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("render =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestJobFieldsDeclaration: the defaults are allowed names, and the allowed
// names are the spec's list.
func TestJobFieldsDeclaration(t *testing.T) {
	for _, f := range jobFields.Default {
		if !slices.Contains(jobFields.Allowed, f) {
			t.Errorf("default field %s is not an allowed one", f)
		}
	}
	spec := []string{"created_at", "download_expires_at", "download_url", "id", "name", "resumable", "status", "type", "upload_expires_at", "upload_url"}
	if !slices.Equal(slices.Sorted(slices.Values(jobFields.Allowed)), spec) {
		t.Errorf("allowed fields %v, want the spec's %v", jobFields.Allowed, spec)
	}
}
