package postgres_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestStartComplianceJobOneAtATime: whatever is created and queued, at most
// one job of an app and type is in progress, and queued jobs start in the
// order they were created. (Before, 20 queued jobs of one app all started.)
func TestStartComplianceJobOneAtATime(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	const n = 20
	jobs := make([]storage.ComplianceJob, n)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Go(func() { jobs[i] = factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app}) })
	}
	wg.Wait()
	for _, j := range jobs {
		markUploaded(t, db, j.ID)
	}
	started := make([]bool, n)
	errs := make([]error, n)
	for i, j := range jobs {
		wg.Go(func() { _, started[i], errs[i] = db.StartComplianceJob(ctx, j.ID, t0) })
	}
	wg.Wait()
	oldest := 0
	for i, j := range jobs {
		if j.ID < jobs[oldest].ID {
			oldest = i
		}
	}
	for i := range jobs {
		switch {
		case i == oldest && (!started[i] || errs[i] != nil):
			t.Errorf("oldest queued job did not start: %v %v", started[i], errs[i])
		case i != oldest && (started[i] || !errors.Is(errs[i], storage.ErrJobBusy)):
			t.Errorf("job %d started=%v err=%v while another runs; want ErrJobBusy", jobs[i].ID, started[i], errs[i])
		}
	}
	if got := countInProgress(t, db, app.ID); got != 1 {
		t.Fatalf("%d jobs in progress, want 1", got)
	}
}

func TestStartComplianceJobOrder(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	first := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app})
	second := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app})
	third := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app})
	notQueued := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app}) // not uploaded yet
	users := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeUsers})
	otherApp := factory.ComplianceJob(t, db, nil)
	for _, j := range []storage.ComplianceJob{third, second, first, users, otherApp} {
		markUploaded(t, db, j.ID)
	}
	start := func(j storage.ComplianceJob, want error) {
		t.Helper()
		turn, err := db.ComplianceJobTurn(ctx, j)
		if err != nil || turn != (want == nil) {
			t.Fatalf("turn of job %d = %v, %v; want %v", j.ID, turn, err, want == nil)
		}
		_, ok, err := db.StartComplianceJob(ctx, j.ID, t0)
		if !errors.Is(err, want) || (want == nil) != ok {
			t.Fatalf("start job %d = %v, %v; want %v", j.ID, ok, err, want)
		}
	}
	start(third, storage.ErrJobBusy) // two older jobs are queued
	start(first, nil)
	start(users, nil)    // another type runs beside it
	start(otherApp, nil) // another app too
	if _, ok, err := db.StartComplianceJob(ctx, first.ID, t0); !ok || err != nil {
		t.Fatalf("a retry of the running job = %v, %v; want it started again", ok, err)
	}
	start(second, storage.ErrJobBusy)
	if err := db.CompleteComplianceJob(ctx, first.ID, storage.ComplianceProgress{}, t0); err != nil {
		t.Fatal(err)
	}
	start(third, storage.ErrJobBusy) // second goes first
	start(second, nil)
	if err := db.FailComplianceJob(ctx, second.ID, "boom", t0); err != nil {
		t.Fatal(err)
	}
	start(third, nil)
	if err := db.CompleteComplianceJob(ctx, third.ID, storage.ComplianceProgress{}, t0); err != nil {
		t.Fatal(err)
	}
	start(notQueued, nil) // nothing ahead of it any more
}

func countInProgress(t *testing.T, db *postgres.DB, appID int64) int {
	t.Helper()
	jobs, err := db.ListComplianceJobs(t.Context(), storage.ComplianceFilter{AppID: appID,
		Type: storage.ComplianceTypeTweets, Status: storage.JobInProgress, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

// markUploaded records a finished upload the way the upload gateway does.
func markUploaded(t *testing.T, db *postgres.DB, id int64) {
	t.Helper()
	ctx := t.Context()
	claim := "test-claim"
	if _, err := db.ClaimComplianceUpload(ctx, id, claim, t0, t0.Add(time.Minute)); err != nil {
		t.Fatalf("claim upload of job %d: %v", id, err)
	}
	if err := db.CompleteComplianceUpload(ctx, id, claim, 1, t0); err != nil {
		t.Fatalf("complete upload of job %d: %v", id, err)
	}
}

// TestUploadRecordsRespectTheJob: a gateway upload that finishes after its
// job failed is refused, and a blob found by the sweeper while a claim still
// streams is not recorded over it (review findings).
func TestUploadRecordsRespectTheJob(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	failed := factory.ComplianceJob(t, db, nil)
	if _, err := db.ClaimComplianceUpload(ctx, failed.ID, "c1", t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := db.FailComplianceJob(ctx, failed.ID, "window expired", t0); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteComplianceUpload(ctx, failed.ID, "c1", 10, t0); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("completing the upload of a failed job = %v, want ErrConflict", err)
	}

	streaming := factory.ComplianceJob(t, db, nil)
	if _, err := db.ClaimComplianceUpload(ctx, streaming.ID, "c2", t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordComplianceUpload(ctx, streaming.ID, 5, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := db.ComplianceJob(ctx, streaming.ID)
	if err != nil || got.UploadedAt != nil {
		t.Errorf("upload recorded under a live claim: %v %v", got.UploadedAt, err)
	}
	if err := db.RecordComplianceUpload(ctx, streaming.ID, 5, t0.Add(2*time.Minute)); err != nil { // lease lapsed
		t.Fatal(err)
	}
	if got, _ := db.ComplianceJob(ctx, streaming.ID); got.UploadedAt == nil {
		t.Error("upload not recorded once the claim lapsed")
	}
}
