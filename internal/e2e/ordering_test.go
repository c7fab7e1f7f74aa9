package e2e

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// TestComplianceJobsOfOneAppRunOneAtATime: an app that creates and uploads
// several jobs of one type at once gets them processed one at a time, in
// the order they were uploaded, with no attempt wasted. (Before, all five
// were created and ran at once on the workers' slots.)
func TestComplianceJobsOfOneAppRunOneAtATime(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 2})
	posts := s.seedPosts(20_000)
	upload, want := s.bulkUpload(posts, 150_000)
	const n = 5
	jobs := make([]map[string]any, n)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Go(func() {
			resp := s.do(http.MethodPost, "/2/compliance/jobs", s.bearer(), map[string]any{"type": "tweets"})
			if resp.Status != http.StatusOK {
				t.Errorf("create job %d: %d %s", i, resp.Status, resp.Raw)
				return
			}
			jobs[i] = resp.Body["data"].(map[string]any)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.SortFunc(jobs, func(a, b map[string]any) int { return compareIDs(a["id"].(string), b["id"].(string)) })
	for _, j := range jobs { // uploaded one after the other, oldest first
		s.upload(j["upload_url"].(string), upload)
	}
	var records []storage.ComplianceJob
	for _, j := range jobs {
		done := s.waitJob(j["id"].(string), 3*time.Minute)
		if done["status"] != string(storage.JobComplete) || s.download(done["download_url"].(string)) != want {
			t.Fatalf("job %v ended %v or with a wrong result", j["id"], done["status"])
		}
		records = append(records, s.jobRecord(j["id"].(string)))
	}
	for i, r := range records {
		if r.Attempts != 1 {
			t.Errorf("job %d took %d attempts, want 1", r.ID, r.Attempts)
		}
		if i == 0 {
			continue
		}
		prev := records[i-1]
		if r.StartedAt.Before(*prev.CompletedAt) {
			t.Errorf("job %d started at %v, before job %d (uploaded earlier) completed at %v",
				r.ID, r.StartedAt.Format(time.StampMicro), prev.ID, prev.CompletedAt.Format(time.StampMicro))
		}
	}
}

// compareIDs orders decimal ids numerically.
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
