package postgres_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func TestComplianceUploadClaim(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	j := factory.ComplianceJob(t, db, nil)
	lease := t0.Add(storage.ComplianceUploadLease)

	claimed, err := db.ClaimComplianceUpload(ctx, j.ID, "a", t0, lease)
	if err != nil {
		t.Fatalf("first claim: %v", err)
	}
	checkStamp(t, "upload_started_at", claimed.UploadStartedAt, &t0)
	checkStamp(t, "upload_lease_until", claimed.UploadLeaseUntil, &lease)

	// A second PUT while the lease runs is refused with the job as stored.
	busy, err := db.ClaimComplianceUpload(ctx, j.ID, "b", t0.Add(time.Second), lease.Add(time.Second))
	wantErrIs(t, "claim during a live lease", err, storage.ErrConflict)
	if busy.ID != j.ID || busy.UploadLeaseUntil == nil {
		t.Errorf("refused claim returned %+v, want the job with its live claim", busy)
	}
	wantErrIs(t, "renew by a non-holder", db.RenewComplianceUpload(ctx, j.ID, "b", lease), storage.ErrConflict)
	wantErrIs(t, "complete by a non-holder", db.CompleteComplianceUpload(ctx, j.ID, "b", 1, t0), storage.ErrConflict)

	// The holder renews; a released claim can be taken again.
	renewed := lease.Add(time.Minute)
	if err := db.RenewComplianceUpload(ctx, j.ID, "a", renewed); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if err := db.ReleaseComplianceUpload(ctx, j.ID, "a"); err != nil {
		t.Fatalf("release: %v", err)
	}
	released, _ := db.ComplianceJob(ctx, j.ID)
	checkStamp(t, "upload_lease_until after release", released.UploadLeaseUntil, nil)
	checkStamp(t, "upload_started_at after release", released.UploadStartedAt, nil)
	if err := db.ReleaseComplianceUpload(ctx, j.ID, "a"); err != nil {
		t.Errorf("releasing a released claim: %v", err)
	}

	// A lease that lapsed (its API process died) is taken over; the old
	// holder can then neither renew nor complete.
	if _, err := db.ClaimComplianceUpload(ctx, j.ID, "c", t0, lease); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	after := lease.Add(time.Second)
	if _, err := db.ClaimComplianceUpload(ctx, j.ID, "d", after, after.Add(storage.ComplianceUploadLease)); err != nil {
		t.Fatalf("claim after the lease lapsed: %v", err)
	}
	wantErrIs(t, "renew by the lapsed holder", db.RenewComplianceUpload(ctx, j.ID, "c", after), storage.ErrConflict)
	done := after.Add(time.Minute)
	if err := db.CompleteComplianceUpload(ctx, j.ID, "d", 42, done); err != nil {
		t.Fatalf("complete: %v", err)
	}
	up, _ := db.ComplianceJob(ctx, j.ID)
	checkStamp(t, "uploaded_at", up.UploadedAt, &done)
	checkStamp(t, "upload_lease_until after completion", up.UploadLeaseUntil, nil)
	checkStamp(t, "upload_started_at after completion", up.UploadStartedAt, &after)
	if up.UploadBytes != 42 {
		t.Errorf("upload_bytes = %d, want 42", up.UploadBytes)
	}

	// Once uploaded, the job takes no other upload, however late.
	_, err = db.ClaimComplianceUpload(ctx, j.ID, "e", done.Add(time.Hour), done.Add(2*time.Hour))
	wantErrIs(t, "claim after the upload", err, storage.ErrConflict)
	_, err = db.ClaimComplianceUpload(ctx, 12345, "f", t0, lease)
	wantErrIs(t, "claim of a missing job", err, storage.ErrNotFound)
}

func TestComplianceUploadClaimNeedsCreatedJob(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	for _, st := range []storage.JobStatus{storage.JobInProgress, storage.JobComplete, storage.JobFailed} {
		j := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{Status: st})
		got, err := db.ClaimComplianceUpload(ctx, j.ID, "a", t0, t0.Add(time.Minute))
		wantErrIs(t, fmt.Sprintf("claim of a %s job", st), err, storage.ErrConflict)
		if got.Status != st {
			t.Errorf("refused claim of a %s job returned status %s", st, got.Status)
		}
	}
}

// TestComplianceUploadClaimConcurrent: of many PUTs claiming one upload at
// once, exactly one wins.
func TestComplianceUploadClaimConcurrent(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	j := factory.ComplianceJob(t, db, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for i := range 16 {
		wg.Go(func() {
			claim := fmt.Sprintf("c%d", i)
			_, err := db.ClaimComplianceUpload(t.Context(), j.ID, claim, t0, t0.Add(time.Minute))
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, claim)
				mu.Unlock()
			case !errors.Is(err, storage.ErrConflict):
				t.Errorf("claim %s: %v", claim, err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("claims won: %v, want exactly one", won)
	}
}

func TestComplianceJobsToPurge(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	old := t0.Add(-8 * 24 * time.Hour)
	expired := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Status: storage.JobComplete, CreatedAt: old})
	fresh := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Status: storage.JobComplete, CreatedAt: t0})
	failedLong := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeUsers,
		Status: storage.JobFailed, CreatedAt: t0.Add(-time.Hour), CompletedAt: t0.Add(-time.Hour)})
	failedNow := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Type: storage.ComplianceTypeUsers,
		Status: storage.JobFailed, CreatedAt: t0, CompletedAt: t0})
	factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, CreatedAt: old})                                // created: never
	factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: app, Status: storage.JobInProgress, CreatedAt: old}) // open: never

	due, err := db.ComplianceJobsToPurge(ctx, t0, t0.Add(-time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jobIDs(due), []int64{expired.ID, failedLong.ID}; !slices.Equal(got, want) {
		t.Errorf("due at t0 = %v, want %v (expired complete, failed an hour ago)", got, want)
	}
	due, _ = db.ComplianceJobsToPurge(ctx, t0, t0, 1)
	if got := jobIDs(due); !slices.Equal(got, []int64{expired.ID}) {
		t.Errorf("limit 1 = %v, want the oldest", got)
	}
	if err := db.MarkComplianceBlobsDeleted(ctx, expired.ID, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkComplianceBlobsDeleted(ctx, expired.ID, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	marked, _ := db.ComplianceJob(ctx, expired.ID)
	checkStamp(t, "blobs_deleted_at (marked twice)", marked.BlobsDeletedAt, &t0)
	due, _ = db.ComplianceJobsToPurge(ctx, t0.Add(8*24*time.Hour), t0, 100)
	if got, want := jobIDs(due), []int64{fresh.ID, failedLong.ID, failedNow.ID}; !slices.Equal(got, want) {
		t.Errorf("due a week later = %v, want %v", got, want)
	}
}

func TestURLSigningKey(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	candidates := make([][]byte, 8)
	keys := make([][]byte, len(candidates))
	var wg sync.WaitGroup
	for i := range candidates {
		candidates[i] = bytes.Repeat([]byte{byte(i + 1)}, 32)
		wg.Go(func() {
			k, err := db.URLSigningKey(t.Context(), "upload", candidates[i])
			if err != nil {
				t.Errorf("URLSigningKey: %v", err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i, k := range keys {
		if !bytes.Equal(k, keys[0]) {
			t.Errorf("replica %d got another key than replica 0", i)
		}
	}
	if !slices.ContainsFunc(candidates, func(c []byte) bool { return bytes.Equal(c, keys[0]) }) {
		t.Errorf("stored key is none of the candidates")
	}
	other, err := db.URLSigningKey(t.Context(), "other", bytes.Repeat([]byte{99}, 32))
	if err != nil || other[0] != 99 {
		t.Errorf("another name: %v, %v", other, err)
	}
	if _, err := db.URLSigningKey(t.Context(), "short", []byte("short")); err == nil {
		t.Errorf("a short key was stored")
	}
}
