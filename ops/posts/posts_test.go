package posts_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	postops "github.com/aviary-dev/aviary/ops/posts"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func TestComposeAndCreate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "Alice_Ops"})
	bob := factory.User(t, db, nil)
	head, err := db.EventHead(ctx)
	if err != nil {
		t.Fatalf("EventHead: %v", err)
	}

	draft := postops.Compose(bob.ID, app.ID, app.Name, "Hello @alice_ops and @nobody_here_x #Go")
	if draft.Lang == "" || len(draft.Entities.Mentions) != 2 || len(draft.Entities.Hashtags) != 1 || draft.Source != app.Name {
		t.Fatalf("Compose = %+v", draft)
	}
	if err := postops.ResolveMentions(ctx, db, &draft.Entities); err != nil {
		t.Fatalf("ResolveMentions: %v", err)
	}
	if got := []int64{draft.Entities.Mentions[0].UserID, draft.Entities.Mentions[1].UserID}; !slices.Equal(got, []int64{alice.ID, 0}) {
		t.Errorf("mention ids = %v, want [%d 0]", got, alice.ID)
	}
	post, err := postops.Create(ctx, db, draft)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	evs, err := db.EventsAfter(ctx, head, 10)
	if err != nil || len(evs) != 1 || evs[0].Type != events.PostCreate || evs[0].SubjectID != post.ID || evs[0].AppID != app.ID {
		t.Errorf("events after Create = %+v, %v", evs, err)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	bob := factory.User(t, db, nil)
	post := factory.Post(t, db, &factory.PostOpts{Author: alice})
	now := time.Now()
	cases := []struct {
		name         string
		user, postID int64
		want         error
	}{
		{"another user's post", bob.ID, post.ID, postops.ErrNotAuthor},
		{"an unknown post", alice.ID, 1, storage.ErrNotFound},
		{"the author's post", alice.ID, post.ID, nil},
		{"a deleted post", alice.ID, post.ID, storage.ErrNotFound},
	}
	for _, c := range cases {
		head, _ := db.EventHead(ctx)
		got, err := postops.Delete(ctx, db, c.user, c.postID, now)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: Delete error %v, want %v", c.name, err, c.want)
		}
		evs, _ := db.EventsAfter(ctx, head, 10)
		switch {
		case c.want == nil && (got.DeletedAt == nil || len(evs) != 1 || evs[0].Type != events.PostDelete):
			t.Errorf("%s: deleted %+v with events %+v", c.name, got, evs)
		case c.want != nil && len(evs) != 0:
			t.Errorf("%s: refused, yet appended %+v", c.name, evs)
		}
	}
}
