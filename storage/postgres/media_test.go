package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func addSegment(t *testing.T, db *postgres.DB, id int64, idx int, size int64, at time.Time) error {
	t.Helper()
	_, err := db.AddMediaSegment(t.Context(), storage.MediaSegment{MediaID: id, Index: idx,
		Key: fmt.Sprintf("media/%d/segments/%d-%d", id, idx, size), Size: size}, at)
	return err
}

// TestFinalizeMedia: the newest copy of each index counts, gaps and wrong
// totals are refused with the numbers, a finalized upload takes no more
// segments and cannot be finalized twice.
func TestFinalizeMedia(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	at := time.Now().UTC()
	tests := []struct {
		name     string
		segments [][2]int64 // index, size, in arrival order
		wantErr  *storage.SegmentsError
	}{
		{"in order", [][2]int64{{0, 600}, {1, 424}}, nil},
		{"out of order", [][2]int64{{1, 424}, {0, 600}}, nil},
		{"retried segment replaces", [][2]int64{{0, 100}, {1, 424}, {0, 600}}, nil},
		{"gap", [][2]int64{{0, 600}, {2, 424}}, &storage.SegmentsError{Received: 1024, Total: 1024, Missing: []int{1}}},
		{"short", [][2]int64{{0, 600}}, &storage.SegmentsError{Received: 600, Total: 1024}},
		{"long", [][2]int64{{0, 600}, {1, 600}}, &storage.SegmentsError{Received: 1200, Total: 1024}},
		{"nothing", nil, &storage.SegmentsError{Received: 0, Total: 1024}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := factory.Media(t, db, &factory.MediaOpts{})
			for _, s := range tc.segments {
				if err := addSegment(t, db, m.ID, int(s[0]), s[1], at); err != nil {
					t.Fatalf("add segment %v: %v", s, err)
				}
			}
			got, err := db.FinalizeMedia(ctx, m.ID, at)
			var segErr *storage.SegmentsError
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("FinalizeMedia: %v", err)
			case tc.wantErr != nil && !errors.As(err, &segErr):
				t.Fatalf("FinalizeMedia = %v, want %v", err, tc.wantErr)
			case tc.wantErr != nil:
				if segErr.Received != tc.wantErr.Received || segErr.Total != tc.wantErr.Total || !slices.Equal(segErr.Missing, tc.wantErr.Missing) {
					t.Errorf("FinalizeMedia error %+v, want %+v", segErr, tc.wantErr)
				}
				if again, _ := db.Media(ctx, m.ID); again.State != storage.MediaUploading {
					t.Errorf("state after a refused finalize = %s, want uploading", again.State)
				}
				return
			}
			if got.State != storage.MediaPending || got.FinalizedAt == nil || !got.ExpiresAt.After(at) {
				t.Errorf("finalized media = %+v, want pending with finalized_at and a new expiry", got)
			}
			wantErrIs(t, "append after finalize", addSegment(t, db, m.ID, 5, 10, at), storage.ErrConflict)
			_, err = db.FinalizeMedia(ctx, m.ID, at)
			wantErrIs(t, "finalize twice", err, storage.ErrConflict)
		})
	}
}

// TestMediaSegmentsConcurrentWithFinalize: appends racing a finalize either
// land before it (and count) or are refused; none lands after.
func TestMediaSegmentsConcurrentWithFinalize(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	at := time.Now().UTC()
	m := factory.Media(t, db, &factory.MediaOpts{TotalBytes: 10})
	if err := addSegment(t, db, m.ID, 0, 10, at); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for i := range 20 {
		wg.Go(func() {
			err := addSegment(t, db, m.ID, 0, 10, at)
			if err != nil && !errors.Is(err, storage.ErrConflict) {
				t.Errorf("append %d: %v", i, err)
			}
			if err == nil {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		if _, err := db.FinalizeMedia(ctx, m.ID, at); err != nil {
			t.Errorf("finalize: %v", err)
		}
	})
	wg.Wait()
	segs, err := db.MediaSegments(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != accepted+1 {
		t.Errorf("%d segment copies stored, want %d (the first plus every accepted append)", len(segs), accepted+1)
	}
	if fin, err := db.Media(ctx, m.ID); err != nil || fin.State != storage.MediaPending {
		t.Errorf("media after the race = %+v, %v; want pending", fin, err)
	}
	// Once finalized, every further append is refused.
	wantErrIs(t, "append after the race", addSegment(t, db, m.ID, 0, 10, at), storage.ErrConflict)
}

// TestMediaProcessingStates walks a media through processing and checks
// that final states stick.
func TestMediaProcessingStates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	at := time.Now().UTC()
	m := factory.Media(t, db, &factory.MediaOpts{TotalBytes: 10})
	_, err := db.StartMediaProcessing(ctx, m.ID, at)
	wantErrIs(t, "start while uploading", err, storage.ErrConflict)
	if err := addSegment(t, db, m.ID, 0, 10, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinalizeMedia(ctx, m.ID, at); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		got, err := db.StartMediaProcessing(ctx, m.ID, at)
		if err != nil || got.State != storage.MediaInProgress || got.Attempts != attempt || got.ProgressPercent != 0 {
			t.Fatalf("start attempt %d = %+v, %v", attempt, got, err)
		}
		if err := db.SetMediaProgress(ctx, m.ID, 150); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Media(ctx, m.ID); got.ProgressPercent != 99 {
			t.Errorf("progress = %d, want 99 (capped until complete)", got.ProgressPercent)
		}
	}
	res := storage.MediaResult{Width: 64, Height: 48, DurationMS: 3000, AspectRatio: "4:3", OutputType: "video/mp4",
		OutputKey: storage.MediaOutputKey(m.ID, "mp4"), PreviewKey: storage.MediaPreviewKey(m.ID)}
	if err := db.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Media(ctx, m.ID)
	if got.State != storage.MediaSucceeded || got.ProgressPercent != 100 || got.Width != 64 || got.AspectRatio != "4:3" || got.OutputKey != res.OutputKey {
		t.Errorf("completed media = %+v", got)
	}
	wantErrIs(t, "fail after success", db.FailMedia(ctx, m.ID, 3, "InternalError", "late", at), storage.ErrConflict)
	wantErrIs(t, "complete twice", db.CompleteMedia(ctx, m.ID, res, at), storage.ErrConflict)
	_, err = db.StartMediaProcessing(ctx, m.ID, at)
	wantErrIs(t, "start after success", err, storage.ErrConflict)
}

// TestMediaSweepAndExpiry: due media are the unprocessed finalized ones and
// the expired uploads; an expired upload is deleted with its segments.
func TestMediaSweepAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	now := time.Now().UTC()
	owner := factory.User(t, db, nil)
	live := factory.Media(t, db, &factory.MediaOpts{Owner: &owner})
	expired := factory.Media(t, db, &factory.MediaOpts{Owner: &owner, TotalBytes: 10, ExpiresAt: now.Add(-time.Minute)})
	if err := addSegment(t, db, expired.ID, 0, 4, now.Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	pending := factory.Media(t, db, &factory.MediaOpts{Owner: &owner, TotalBytes: 10})
	if err := addSegment(t, db, pending.ID, 0, 10, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinalizeMedia(ctx, pending.ID, now); err != nil {
		t.Fatal(err)
	}
	// An expired upload takes no segment and cannot be finalized into life.
	wantErrIs(t, "append to an expired upload", addSegment(t, db, expired.ID, 1, 4, now), storage.ErrConflict)
	_, err := db.FinalizeMedia(ctx, expired.ID, now)
	wantErrIs(t, "finalize an expired upload", err, storage.ErrConflict)

	due, err := db.MediaDue(ctx, now, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range due {
		if m.OwnerID == owner.ID {
			ids = append(ids, m.ID)
		}
	}
	slices.Sort(ids)
	want := []int64{expired.ID, pending.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("due = %v, want %v (not the live upload %d)", ids, want, live.ID)
	}
	var keys []string
	collect := func(k []string) error { keys = append(keys, k...); return nil }
	wantErrIs(t, "delete a live upload", db.DeleteExpiredUpload(ctx, live.ID, now, collect), storage.ErrNotFound)
	if len(keys) != 0 {
		t.Errorf("a live upload's objects were handed out for deletion: %v", keys)
	}
	// Deleting the objects fails: nothing is deleted, the next tick retries.
	failing := func([]string) error { return errors.New("blob store down") }
	if err := db.DeleteExpiredUpload(ctx, expired.ID, now, failing); err == nil {
		t.Fatal("DeleteExpiredUpload succeeded although the objects could not be deleted")
	}
	if segs, _ := db.MediaSegments(ctx, expired.ID); len(segs) != 1 {
		t.Fatalf("segments after a failed delete = %v, want the one kept", segs)
	}
	if err := db.DeleteExpiredUpload(ctx, expired.ID, now, collect); err != nil || len(keys) != 1 {
		t.Fatalf("DeleteExpiredUpload = %v, keys %v; want the one segment key", err, keys)
	}
	_, err = db.Media(ctx, expired.ID)
	wantErrIs(t, "load a deleted upload", err, storage.ErrNotFound)
	if segs, _ := db.MediaSegments(ctx, expired.ID); len(segs) != 0 {
		t.Errorf("segments left after delete: %v", segs)
	}
}

func TestUserMediaElevated(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	u := factory.User(t, db, nil)
	for _, step := range []struct {
		flag string
		on   bool
		want bool
	}{
		{"", false, false},
		{postgres.UserFlagPremium, true, true},
		{postgres.UserFlagPremium, false, false},
		{postgres.UserFlagVerified, true, true},
	} {
		if step.flag != "" {
			if err := db.SetUserFlag(ctx, u.ID, step.flag, step.on); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := db.UserMediaElevated(ctx, u.ID); err != nil || got != step.want {
			t.Errorf("after %s=%v: elevated = %v, %v; want %v", step.flag, step.on, got, err, step.want)
		}
	}
	wantErrIs(t, "unknown user", db.SetUserFlag(ctx, u.ID+999, postgres.UserFlagPremium, true), storage.ErrNotFound)
	if err := db.SetUserFlag(ctx, u.ID, "admin", true); err == nil {
		t.Error("SetUserFlag accepted an unknown flag")
	}
}

// TestExpiryRacesFinalize: a finalize stamped just before the expiry (its
// API's clock) that arrives while the sweeper removes the upload waits for
// the sweeper's lock and then finds no upload; it never gets a pending
// media whose segment objects are gone.
func TestExpiryRacesFinalize(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	now := time.Now().UTC()
	m := factory.Media(t, db, &factory.MediaOpts{TotalBytes: 10, ExpiresAt: now})
	if err := addSegment(t, db, m.ID, 0, 10, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	finalized := make(chan error, 1)
	err := db.DeleteExpiredUpload(ctx, m.ID, now, func([]string) error {
		go func() {
			_, err := db.FinalizeMedia(ctx, m.ID, now.Add(-time.Millisecond))
			finalized <- err
		}()
		time.Sleep(100 * time.Millisecond) // the finalize is waiting for the row
		return nil
	})
	if err != nil {
		t.Fatalf("DeleteExpiredUpload: %v", err)
	}
	wantErrIs(t, "finalize behind the sweeper", <-finalized, storage.ErrNotFound)
}
