package postgres_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// eventsOf reads the log's events of typ after seq.
func eventsOf(t *testing.T, db *postgres.DB, after int64, match func(events.Type) bool) []events.Event {
	t.Helper()
	all, err := db.EventsAfter(t.Context(), after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for _, e := range all {
		if match(e.Type) {
			out = append(out, e)
		}
	}
	return out
}

// TestLikeAppendsEvent: a new like appends one like.create naming the
// liker, the liked version and its author; a repeat, and a like of a
// repost (its original), append nothing more / name the original.
func TestLikeAppendsEvent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	post := factory.Post(t, db, &factory.PostOpts{Author: alice})
	repost := factory.Post(t, db, &factory.PostOpts{Author: bob, RepostOf: post})
	for range 2 {
		if _, err := db.Like(ctx, bob.ID, post.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Like(ctx, alice.ID, repost.ID); err != nil {
		t.Fatal(err)
	}
	likes := eventsOf(t, db, 0, func(typ events.Type) bool { return typ == events.LikeCreate })
	if len(likes) != 2 {
		t.Fatalf("%d like.create events, want 2 (the repeat writes none)", len(likes))
	}
	for i, liker := range []int64{bob.ID, alice.ID} {
		var l events.Like
		if err := json.Unmarshal(likes[i].Payload, &l); err != nil {
			t.Fatal(err)
		}
		if l.UserID != liker || l.PostID != post.ID || l.PostAuthorID != alice.ID || l.LikedAt.IsZero() || !l.PostCreatedAt.Equal(post.CreatedAt) ||
			likes[i].UserID != liker || likes[i].SubjectID != post.ID {
			t.Errorf("like %d: event %+v payload %+v", i, likes[i], l)
		}
	}
}

// TestUpdateUserProfileEvents: one profile.update.* event per changed
// field with before and after; unchanged and absent fields write none.
func TestUpdateUserProfileEvents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	u := factory.User(t, db, &factory.UserOpts{Name: "Old Name"})
	head, err := db.EventHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	on := true
	got, types, err := db.UpdateUserProfile(ctx, u.ID, postgres.ProfileUpdate{Bio: str("birds"), Name: str("Old Name"),
		Handle: str(u.Username + "x"), Verified: &on})
	if err != nil {
		t.Fatal(err)
	}
	want := []events.Type{events.ProfileUpdateBio, events.ProfileUpdateHandle, events.ProfileUpdateVerifiedBadge}
	if !slices.Equal(types, want) || got.Description != "birds" || got.Username != u.Username+"x" || !got.Verified {
		t.Fatalf("UpdateUserProfile = %+v, %v; want the changes and %v", got, types, want)
	}
	evs := eventsOf(t, db, head, func(typ events.Type) bool { return true })
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	var handle events.ProfileUpdated
	if err := json.Unmarshal(evs[1].Payload, &handle); err != nil {
		t.Fatal(err)
	}
	if evs[1].Type != events.ProfileUpdateHandle || handle.UserID != u.ID || handle.Before != u.Username || handle.After != u.Username+"x" {
		t.Errorf("handle event %+v payload %+v", evs[1], handle)
	}
	var badge events.ProfileUpdated
	if err := json.Unmarshal(evs[2].Payload, &badge); err != nil {
		t.Fatal(err)
	}
	if badge.Before != "false" || badge.After != "true" {
		t.Errorf("verified badge payload %+v, want \"false\" to \"true\" (strings)", badge)
	}
	if _, types, err := db.UpdateUserProfile(ctx, u.ID, postgres.ProfileUpdate{Bio: str("birds")}); err != nil || len(types) != 0 {
		t.Errorf("an unchanged bio wrote %v (err %v), want nothing", types, err)
	}
	other := factory.User(t, db, nil)
	if _, _, err := db.UpdateUserProfile(ctx, other.ID, postgres.ProfileUpdate{Handle: str(u.Username + "x")}); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("taking another user's handle: %v, want storage.ErrConflict", err)
	}
}

// TestOperatorProfileChangesAppendEvents: the older operator paths that
// change a profile (aviary admin user profile, aviary admin user verified)
// append the same profile.update.* events as UpdateUserProfile, and
// nothing when no value changed or the field has no event (premium).
func TestOperatorProfileChangesAppendEvents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	u := factory.User(t, db, nil)
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		change func() error
		want   []events.Type
	}{
		{"profile", func() error {
			_, err := db.SetUserProfile(ctx, u.ID, postgres.ProfileChange{Description: str("wrens"), Location: str("Oslo"), CountryCode: str("no")})
			return err
		}, []events.Type{events.ProfileUpdateBio, events.ProfileUpdateGeo}},
		{"profile unchanged", func() error {
			_, err := db.SetUserProfile(ctx, u.ID, postgres.ProfileChange{Description: str("wrens")})
			return err
		}, nil},
		{"verified on", func() error { return db.SetUserFlag(ctx, u.ID, postgres.UserFlagVerified, true) },
			[]events.Type{events.ProfileUpdateVerifiedBadge}},
		{"verified again", func() error { return db.SetUserFlag(ctx, u.ID, postgres.UserFlagVerified, true) }, nil},
		{"premium", func() error { return db.SetUserFlag(ctx, u.ID, postgres.UserFlagPremium, true) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, err := db.EventHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.change(); err != nil {
				t.Fatal(err)
			}
			var got []events.Type
			for _, e := range eventsOf(t, db, head, func(events.Type) bool { return true }) {
				if e.UserID != u.ID {
					t.Errorf("event %s by user %d, want %d", e.Type, e.UserID, u.ID)
				}
				got = append(got, e.Type)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events %v, want %v", got, tt.want)
			}
		})
	}
	if err := db.SetUserFlag(ctx, 1, postgres.UserFlagVerified, true); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("unknown user: %v, want storage.ErrNotFound", err)
	}
}
