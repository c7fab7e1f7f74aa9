package postgres_test

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestTaskLeases: one holder at a time; a lease is renewed only by its
// holder, lapses after its ttl (then another run takes it and the old
// holder can no longer renew), and is released only by its holder.
func TestTaskLeases(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	// The ttl leaves each check a margin of a quarter of it (1.5 s) against a
	// loaded machine's scheduling delays (0.5 s was not enough at load 15).
	const id, ttl = "media-1", 6 * time.Second
	check := func(what string, got bool, err error, want bool) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", what, got, err, want)
		}
	}
	held, err := db.TaskLeaseHeld(ctx, id)
	check("held before any claim", held, err, false)
	ok, err := db.ClaimTaskLease(ctx, id, "a", ttl)
	check("claim by a", ok, err, true)
	ok, err = db.ClaimTaskLease(ctx, id, "b", ttl)
	check("claim by b while a holds it", ok, err, false)
	held, err = db.TaskLeaseHeld(ctx, id)
	check("held", held, err, true)
	ok, err = db.RenewTaskLease(ctx, id, "b", ttl)
	check("renew by b", ok, err, false)
	time.Sleep(ttl / 2)
	ok, err = db.RenewTaskLease(ctx, id, "a", ttl)
	check("renew by a", ok, err, true)
	time.Sleep(ttl * 3 / 4) // past the first ttl, within the renewed one
	held, err = db.TaskLeaseHeld(ctx, id)
	check("held after the renewal", held, err, true)
	if err := db.ReleaseTaskLease(ctx, id, "b"); err != nil {
		t.Fatal(err)
	}
	held, err = db.TaskLeaseHeld(ctx, id)
	check("held after b's release", held, err, true)

	time.Sleep(ttl + ttl/4) // a stops heartbeating: the lease lapses
	held, err = db.TaskLeaseHeld(ctx, id)
	check("held after it lapsed", held, err, false)
	ok, err = db.ClaimTaskLease(ctx, id, "b", ttl)
	check("claim by b after it lapsed", ok, err, true)
	ok, err = db.RenewTaskLease(ctx, id, "a", ttl)
	check("renew by a after b took it", ok, err, false)
	if err := db.ReleaseTaskLease(ctx, id, "b"); err != nil {
		t.Fatal(err)
	}
	held, err = db.TaskLeaseHeld(ctx, id)
	check("held after b's release", held, err, false)
}

// TestLapsedTaskLeases: a run's lease lists with its queue and run id once
// it lapsed, never while held, never when it names no run (a time-based
// lease); forgetting removes only a lapsed lease of that holder.
func TestLapsedTaskLeases(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	const ttl = 500 * time.Millisecond
	runs := []storage.TaskLease{
		{TaskID: "media-1", Holder: "h1", Queue: "media", RunID: "media-1"},
		{TaskID: "compliance-2", Holder: "h2", Queue: "compliance", RunID: "compliance-2~rh0"},
	}
	for _, l := range runs {
		if ok, err := db.ClaimTaskRun(ctx, l, ttl); err != nil || !ok {
			t.Fatalf("claim %s: %v, %v", l.TaskID, ok, err)
		}
	}
	if ok, err := db.ClaimTaskLease(ctx, "retention", "r", ttl); err != nil || !ok {
		t.Fatalf("claim the time-based lease: %v, %v", ok, err)
	}
	if ok, err := db.ClaimTaskRun(ctx, storage.TaskLease{TaskID: "held-3", Holder: "h3", Queue: "media", RunID: "held-3"}, time.Hour); err != nil || !ok {
		t.Fatalf("claim the held lease: %v, %v", ok, err)
	}
	if got, err := db.LapsedTaskLeases(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("lapsed before the ttl: %v, %v", got, err)
	}
	time.Sleep(ttl + 200*time.Millisecond)
	got, err := db.LapsedTaskLeases(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(runs) {
		t.Fatalf("lapsed = %+v; want %d runs", got, len(runs))
	}
	for i, l := range got {
		if l.TaskID != runs[i].TaskID || l.Holder != runs[i].Holder || l.Queue != runs[i].Queue || l.RunID != runs[i].RunID {
			t.Errorf("lapsed[%d] = %+v; want %+v", i, l, runs[i])
		}
	}
	if err := db.ForgetTaskLease(ctx, "media-1", "other"); err != nil {
		t.Fatal(err)
	}
	if err := db.ForgetTaskLease(ctx, "held-3", "h3"); err != nil {
		t.Fatal(err)
	}
	if err := db.ForgetTaskLease(ctx, "compliance-2", "h2"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.LapsedTaskLeases(ctx, 10); err != nil || len(got) != 1 || got[0].TaskID != "media-1" {
		t.Fatalf("lapsed after forgetting compliance-2 = %+v, %v; want media-1 only", got, err)
	}
	if held, err := db.TaskLeaseHeld(ctx, "held-3"); err != nil || !held {
		t.Fatalf("a held lease was forgotten: %v, %v", held, err)
	}
}
