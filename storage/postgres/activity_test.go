package postgres_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestActivitySubscriptionCreate: the refusals of a creation, table-driven
// on one app that holds a webhook and a subscription already.
func TestActivitySubscriptionCreate(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	user := factory.User(t, db, nil)
	hook, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://a.example/hook", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: other.ID, URL: "https://b.example/hook", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	base := storage.ActivitySubscription{AppID: app.ID, EventType: "post.create", FilterUserID: user.ID, Tag: "posts"}
	first, err := db.CreateActivitySubscription(ctx, base, 4)
	if err != nil || first.ID == 0 || first.FilterUserID != user.ID || first.Tag != "posts" || first.WebhookID != 0 ||
		first.CreatedAt.IsZero() || !first.UpdatedAt.Equal(first.CreatedAt) {
		t.Fatalf("create: %+v, %v", first, err)
	}
	with := func(f func(*storage.ActivitySubscription)) storage.ActivitySubscription {
		s := base
		f(&s)
		return s
	}
	tests := []struct {
		name string
		sub  storage.ActivitySubscription
		max  int
		want error
	}{
		{"same type and filter", base, 4, storage.ErrActivityDuplicate},
		{"same, another tag", with(func(s *storage.ActivitySubscription) { s.Tag = "other" }), 4, storage.ErrActivityDuplicate},
		{"another app's webhook", with(func(s *storage.ActivitySubscription) { s.WebhookID = foreign.ID }), 4, storage.ErrActivityWebhook},
		{"no such webhook", with(func(s *storage.ActivitySubscription) { s.WebhookID = foreign.ID + 1000 }), 4, storage.ErrActivityWebhook},
		{"over the cap", with(func(s *storage.ActivitySubscription) { s.EventType = "post.delete" }), 1, storage.ErrActivityLimit},
		{"to a webhook too", with(func(s *storage.ActivitySubscription) { s.WebhookID = hook.ID }), 4, nil},
		{"a direction", with(func(s *storage.ActivitySubscription) { s.EventType, s.Direction = "like.create", "inbound" }), 4, nil},
		{"a keyword", with(func(s *storage.ActivitySubscription) {
			s.EventType, s.FilterUserID, s.FilterKeyword = "news.new", 0, "go"
		}), 4, nil},
		{"the same for another app", with(func(s *storage.ActivitySubscription) { s.AppID = other.ID }), 4, nil},
	}
	for _, tt := range tests {
		got, err := db.CreateActivitySubscription(ctx, tt.sub, tt.max)
		if !errors.Is(err, tt.want) || (tt.want == nil && (got.EventType != tt.sub.EventType || got.WebhookID != tt.sub.WebhookID ||
			got.Direction != tt.sub.Direction || got.FilterKeyword != tt.sub.FilterKeyword)) {
			t.Errorf("%s: %+v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := db.CreateActivitySubscription(ctx, with(func(s *storage.ActivitySubscription) { s.EventType = "post.delete" }), 4); !errors.Is(err, storage.ErrActivityLimit) {
		t.Fatalf("the fifth of 4: %v", err)
	}
	if n, err := db.CountActivitySubscriptions(ctx, app.ID); n != 4 || err != nil {
		t.Fatalf("count: %d, %v", n, err)
	}
}

// TestActivitySubscriptionLifecycle: pages, load, update and delete stay
// within the app; deleting a webhook deletes the subscriptions delivering
// to it.
func TestActivitySubscriptionLifecycle(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	hook, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://a.example/hook", CheckedAt: time.Now(), Max: 2})
	if err != nil {
		t.Fatal(err)
	}
	var made []int64
	for i := range 5 {
		u := factory.User(t, db, nil)
		s, err := db.CreateActivitySubscription(ctx, storage.ActivitySubscription{AppID: app.ID, EventType: "profile.update.bio", FilterUserID: u.ID}, 0)
		if err != nil {
			t.Fatal(i, err)
		}
		made = append(made, s.ID)
	}
	page, err := db.ActivitySubscriptions(ctx, storage.ActivitySubscriptionPage{AppID: app.ID, Limit: 3})
	if err != nil || len(page) != 3 || page[0].ID != made[0] || page[2].ID != made[2] {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	page, err = db.ActivitySubscriptions(ctx, storage.ActivitySubscriptionPage{AppID: app.ID, AfterID: made[2], Limit: 3})
	if err != nil || len(page) != 2 || page[1].ID != made[4] {
		t.Fatalf("second page: %+v, %v", page, err)
	}
	if page, _ := db.ActivitySubscriptions(ctx, storage.ActivitySubscriptionPage{AppID: other.ID, Limit: 10}); len(page) != 0 {
		t.Fatalf("another app sees %d", len(page))
	}
	if _, err := db.ActivitySubscriptionOf(ctx, other.ID, made[0]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another app's load: %v", err)
	}
	tag := "renamed"
	updates := []struct {
		name string
		u    storage.ActivitySubscriptionUpdate
		want error
		tag  string
		hook int64
	}{
		{"tag", storage.ActivitySubscriptionUpdate{AppID: app.ID, ID: made[0], Tag: &tag}, nil, "renamed", 0},
		{"webhook", storage.ActivitySubscriptionUpdate{AppID: app.ID, ID: made[0], WebhookID: &hook.ID}, nil, "renamed", hook.ID},
		{"another app's", storage.ActivitySubscriptionUpdate{AppID: other.ID, ID: made[0], Tag: &tag}, storage.ErrNotFound, "", 0},
		{"unknown webhook", storage.ActivitySubscriptionUpdate{AppID: app.ID, ID: made[0], WebhookID: new(int64(hook.ID + 99))}, storage.ErrActivityWebhook, "", 0},
		{"nothing", storage.ActivitySubscriptionUpdate{AppID: app.ID, ID: made[0]}, nil, "renamed", hook.ID},
	}
	for _, tt := range updates {
		got, err := db.UpdateActivitySubscription(ctx, tt.u)
		if !errors.Is(err, tt.want) || (tt.want == nil && (got.Tag != tt.tag || got.WebhookID != tt.hook || got.UpdatedAt.Before(got.CreatedAt))) {
			t.Errorf("update %s: %+v, %v", tt.name, got, err)
		}
	}
	// A copy of made[1] delivering to the webhook: moving made[1] there
	// makes it a duplicate.
	s1, _ := db.ActivitySubscriptionOf(ctx, app.ID, made[1])
	s1.WebhookID = hook.ID
	if _, err := db.CreateActivitySubscription(ctx, s1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateActivitySubscription(ctx, storage.ActivitySubscriptionUpdate{AppID: app.ID, ID: made[1], WebhookID: &hook.ID}); !errors.Is(err, storage.ErrActivityDuplicate) {
		t.Fatalf("update into a duplicate: %v", err)
	}
	gone, err := db.DeleteActivitySubscriptions(ctx, other.ID, made)
	if err != nil || len(gone) != 0 {
		t.Fatalf("another app deletes: %v, %v", gone, err)
	}
	gone, err = db.DeleteActivitySubscriptions(ctx, app.ID, []int64{made[3], made[4], made[4] + 1000})
	slices.Sort(gone)
	if err != nil || !slices.Equal(gone, []int64{made[3], made[4]}) {
		t.Fatalf("delete: %v, %v", gone, err)
	}
	if err := db.DeleteWebhook(ctx, app.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountActivitySubscriptions(ctx, app.ID); n != 2 {
		t.Fatalf("after the webhook's deletion %d subscriptions, want 2 (made[1], made[2])", n)
	}
}

// TestActivitySubscriptionCapConcurrent: concurrent creations never pass
// the cap.
func TestActivitySubscriptionCapConcurrent(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	users := make([]storage.User, 8)
	for i := range users {
		users[i] = factory.User(t, db, nil)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(users))
	for i, u := range users {
		wg.Go(func() {
			_, errs[i] = db.CreateActivitySubscription(t.Context(), storage.ActivitySubscription{AppID: app.ID, EventType: "post.create", FilterUserID: u.ID}, 3)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, storage.ErrActivityLimit):
			t.Errorf("unexpected: %v", err)
		}
	}
	if n, _ := db.CountActivitySubscriptions(t.Context(), app.ID); ok != 3 || n != 3 {
		t.Fatalf("%d created, %d held; want 3", ok, n)
	}
}
