package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestNeedingAction: the compliance lookups return exactly the known posts
// and users that need action, with the times the check reads, and agree
// with PostStatuses / UsersByIDs on them.
func TestNeedingAction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	t1 := t0.Add(time.Hour)
	live := factory.User(t, db, nil)
	protected := factory.User(t, db, &factory.UserOpts{ProtectedAt: &t0})
	suspended := factory.User(t, db, &factory.UserOpts{SuspendedAt: &t0})
	deactivated := factory.User(t, db, &factory.UserOpts{DeactivatedAt: &t1})
	deleted := factory.User(t, db, &factory.UserOpts{DeletedAt: &t1, ProtectedAt: &t0})
	var postIDs, wantPosts []int64
	for _, u := range []storage.User{live, protected, suspended, deactivated, deleted} {
		p := factory.Post(t, db, &factory.PostOpts{Author: u})
		postIDs = append(postIDs, p.ID)
		if u.ID != live.ID {
			wantPosts = append(wantPosts, p.ID)
		}
	}
	gone := factory.Post(t, db, &factory.PostOpts{Author: live, DeletedAt: &t0})
	postIDs = append(postIDs, gone.ID, gone.ID+1_000_000)
	wantPosts = append(wantPosts, gone.ID)

	got, err := db.PostsNeedingAction(ctx, postIDs)
	if err != nil {
		t.Fatalf("PostsNeedingAction: %v", err)
	}
	full, err := db.PostStatuses(ctx, postIDs)
	if err != nil {
		t.Fatalf("PostStatuses: %v", err)
	}
	byID := map[int64]storage.PostStatus{}
	for _, s := range full {
		byID[s.ID] = s
	}
	var gotIDs []int64
	for _, s := range got {
		gotIDs = append(gotIDs, s.ID)
		w := byID[s.ID]
		if !s.CreatedAt.Equal(w.CreatedAt) || s.Author.ID != w.Author.ID {
			t.Errorf("post %d = %+v, want %+v", s.ID, s, w)
		}
		checkStamp(t, "deleted_at", s.DeletedAt, w.DeletedAt)
		checkStamp(t, "author protected_at", s.Author.ProtectedAt, w.Author.ProtectedAt)
		checkStamp(t, "author suspended_at", s.Author.SuspendedAt, w.Author.SuspendedAt)
		checkStamp(t, "author deactivated_at", s.Author.DeactivatedAt, w.Author.DeactivatedAt)
		checkStamp(t, "author deleted_at", s.Author.DeletedAt, w.Author.DeletedAt)
	}
	slices.Sort(gotIDs)
	slices.Sort(wantPosts)
	if !slices.Equal(gotIDs, wantPosts) {
		t.Errorf("PostsNeedingAction ids = %v, want %v", gotIDs, wantPosts)
	}

	userIDs := []int64{live.ID, protected.ID, suspended.ID, deactivated.ID, deleted.ID, deleted.ID + 1_000_000}
	users, err := db.UsersNeedingAction(ctx, userIDs)
	if err != nil {
		t.Fatalf("UsersNeedingAction: %v", err)
	}
	fullUsers, err := db.UsersByIDs(ctx, userIDs)
	if err != nil {
		t.Fatalf("UsersByIDs: %v", err)
	}
	byUser := map[int64]storage.User{}
	for _, u := range fullUsers {
		byUser[u.ID] = u
	}
	var gotUsers []int64
	for _, u := range users {
		gotUsers = append(gotUsers, u.ID)
		w := byUser[u.ID]
		if !u.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("user %d created_at = %v, want %v", u.ID, u.CreatedAt, w.CreatedAt)
		}
		checkStamp(t, "protected_at", u.ProtectedAt, w.ProtectedAt)
		checkStamp(t, "suspended_at", u.SuspendedAt, w.SuspendedAt)
		checkStamp(t, "deactivated_at", u.DeactivatedAt, w.DeactivatedAt)
		checkStamp(t, "deleted_at", u.DeletedAt, w.DeletedAt)
	}
	slices.Sort(gotUsers)
	wantUsers := []int64{protected.ID, suspended.ID, deactivated.ID, deleted.ID}
	slices.Sort(wantUsers)
	if !slices.Equal(gotUsers, wantUsers) {
		t.Errorf("UsersNeedingAction ids = %v, want %v", gotUsers, wantUsers)
	}
}
