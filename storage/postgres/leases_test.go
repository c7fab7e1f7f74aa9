package postgres_test

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestTaskLeases: one holder at a time; a lease is renewed only by its
// holder, lapses after its ttl (then another run takes it and the old
// holder can no longer renew), and is released only by its holder.
func TestTaskLeases(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	// The ttl leaves each check a margin of a quarter of it (0.5 s) against a
	// loaded machine's scheduling delays.
	const id, ttl = "media-1", 2 * time.Second
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
