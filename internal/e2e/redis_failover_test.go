package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// failoverLane is one app's jobs of one type: the platform runs one at a
// time per app and type (docs/compliance-lifecycle.md), so the workload
// keeps one job in flight per lane.
type failoverLane struct {
	bearer, jobType, body string
	job, uploadURL        string // the job in flight ("" when idle)
	accepted              bool   // its upload was answered 200
	acceptedAt            time.Time
}

// failoverRun is what the workload saw.
type failoverRun struct {
	accepted, completed, refused int
	firstAfterKill               time.Duration // kill -> first completion of a job accepted after it
	longestGap                   time.Duration // the longest time without a completion
	lastCompletion               time.Time
}

// TestComplianceSurvivesSentinelFailover runs compliance jobs through an
// API and a worker on a Redis Sentinel set, kills the primary with SIGKILL
// mid-workload, and checks that the sentinels promote the replica, that
// Aviary keeps accepting and completing jobs, and that every accepted job
// completes (nothing lost). It reports the times to recover.
func TestComplianceSurvivesSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("a Sentinel set and a full stack (about 30 s)")
	}
	set := storagetest.RedisSentinel(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, redisURL: set.URL(0)})
	var lanes []*failoverLane
	for i := 0; i < 4; i++ {
		var app map[string]string
		s.runJSON(&app, "admin", "app", "create", "--name", fmt.Sprintf("failover-%d", i))
		lanes = append(lanes,
			&failoverLane{bearer: "Bearer " + app["bearer_token"], jobType: "users", body: s.creds.UserID + "\n"},
			&failoverLane{bearer: "Bearer " + app["bearer_token"], jobType: "tweets", body: "20\n"})
	}
	run := &failoverRun{lastCompletion: time.Now()}
	var killed time.Time
	promoted := make(chan time.Time, 1)
	start := time.Now()
	for time.Since(start) < 16*time.Second {
		if killed.IsZero() && time.Since(start) > 3*time.Second {
			killed = set.KillPrimary()
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				at, err := set.WaitPromoted(ctx)
				if err != nil {
					at = time.Time{}
				}
				promoted <- at
			}()
		}
		for _, l := range lanes {
			s.stepLane(t, l, run, killed, true)
		}
		time.Sleep(100 * time.Millisecond)
	}
	promotedAt := <-promoted
	if promotedAt.IsZero() {
		t.Fatalf("the sentinels did not promote the replica %s within 30 s", set.Replica)
	}
	deadline := time.Now().Add(90 * time.Second)
	for busy := true; busy; {
		busy = false
		for _, l := range lanes {
			s.stepLane(t, l, run, killed, false)
			busy = busy || l.job != ""
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still not complete 90 s after the workload: %d of %d accepted completed", run.completed, run.accepted)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if run.completed != run.accepted || run.firstAfterKill == 0 {
		t.Fatalf("%d jobs accepted, %d completed, first completion after the kill %v", run.accepted, run.completed, run.firstAfterKill)
	}
	t.Logf("failover: replica promoted %v after the kill; %d jobs accepted, all %d completed; %d requests refused meanwhile; "+
		"first job accepted after the kill completed %v after it; longest time without a completion %v",
		promotedAt.Sub(killed).Round(time.Millisecond), run.accepted, run.completed, run.refused,
		run.firstAfterKill.Round(time.Millisecond), run.longestGap.Round(time.Millisecond))
}

// stepLane moves a lane on by one request: polls its job in flight, or
// uploads it, or (when produce) creates the next one. Refusals (a 5xx
// while Redis fails over) are counted and retried on the next step.
func (s *stack) stepLane(t *testing.T, l *failoverLane, run *failoverRun, killed time.Time, produce bool) {
	t.Helper()
	switch {
	case l.job != "" && l.accepted:
		resp := s.do(http.MethodGet, "/2/compliance/jobs/"+l.job, l.bearer, nil)
		if resp.Status != http.StatusOK {
			run.refused++
			return
		}
		switch st := resp.Body["data"].(map[string]any)["status"]; st {
		case string(storage.JobComplete):
			now := time.Now()
			run.completed++
			run.longestGap = max(run.longestGap, now.Sub(run.lastCompletion))
			run.lastCompletion = now
			if !killed.IsZero() && l.acceptedAt.After(killed) && run.firstAfterKill == 0 {
				run.firstAfterKill = now.Sub(killed)
			}
			l.job = ""
		case string(storage.JobFailed):
			t.Errorf("job %s (%s) failed: %s", l.job, l.jobType, resp.Raw)
			l.job = ""
		}
	case l.job != "":
		if s.tryUpload(l.uploadURL, l.body) {
			l.accepted, l.acceptedAt = true, time.Now()
			run.accepted++
		} else {
			run.refused++
		}
	case produce:
		resp := s.do(http.MethodPost, "/2/compliance/jobs", l.bearer, map[string]any{"type": l.jobType})
		if resp.Status != http.StatusOK {
			run.refused++
			return
		}
		data := resp.Body["data"].(map[string]any)
		l.job, l.uploadURL, l.accepted = data["id"].(string), data["upload_url"].(string), false
	}
}

// tryUpload PUTs body to url; false when it is not answered 200.
func (s *stack) tryUpload(url, body string) bool {
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		s.t.Fatalf("build upload: %v", err)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("upload: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
