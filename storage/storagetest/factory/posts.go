package factory

import (
	"fmt"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// PostOpts are the options of Post; the zero value of a field means its
// default.
type PostOpts struct {
	// Author defaults to a new user (see User).
	Author storage.User
	// App is the app the post was made with; the zero App means none.
	App storage.App
	// Text defaults to "post <random>".
	Text            string
	PaidPartnership bool
	// CreatedAt defaults to the time of creation; another time is set with
	// SQL. The post's id is allocated at creation all the same, so ids stay
	// in creation order, not in CreatedAt order.
	CreatedAt time.Time
	// DeletedAt deletes the post at that time, through DeletePost; nil
	// leaves it live.
	DeletedAt *time.Time
}

// Post stores a post as opts describe it.
func Post(t testing.TB, db *postgres.DB, opts *PostOpts) storage.Post {
	t.Helper()
	if opts == nil {
		opts = &PostOpts{}
	}
	ctx := t.Context()
	author := opts.Author
	if author.ID == 0 {
		author = User(t, db, nil)
	}
	text := opts.Text
	if text == "" {
		text = "post " + suffix()
	}
	p, err := db.CreatePost(ctx, storage.Post{AuthorID: author.ID, AppID: opts.App.ID, Text: text, PaidPartnership: opts.PaidPartnership})
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if !opts.CreatedAt.IsZero() {
		execOne(t, db, fmt.Sprintf("set created_at of post %d", p.ID),
			`UPDATE posts SET created_at = $2 WHERE id = $1`, p.ID, opts.CreatedAt)
	}
	if opts.DeletedAt != nil {
		if _, err := db.DeletePost(ctx, p.ID, *opts.DeletedAt); err != nil {
			t.Fatalf("factory: %v", err)
		}
	}
	if p, err = db.PostByID(ctx, p.ID); err != nil {
		t.Fatalf("factory: %v", err)
	}
	return p
}
