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
	// Lang defaults to "und"; Source, PlaceID and PossiblySensitive to
	// none.
	Lang              string
	Source            string
	PlaceID           string
	PossiblySensitive bool
	// MediaIDs are attached media ids, stored as given (not checked).
	MediaIDs []int64
	// Entities are stored as given (not checked against Text); Terms
	// default to the ones CreatePost derives from Entities.
	Entities storage.Entities
	Terms    storage.PostTerms
	// InReplyTo and QuoteOf make the post a reply to, and a quote of, those
	// posts (the zero Post: none); their counters rise as CreatePost makes
	// them.
	InReplyTo storage.Post
	QuoteOf   storage.Post
	// RepostOf makes the post a repost of that post by Author, through
	// Repost: Text, the references, entities and the other post fields are
	// then ignored.
	RepostOf storage.Post
	// LikedBy like the post, then Likes new users do, through Like.
	LikedBy []storage.User
	Likes   int
	// Metrics, when set, overwrites the post's counters with SQL, with no
	// likes, replies, quotes or reposts behind them (for ranking tests).
	Metrics *storage.PostMetrics
	// CreatedAt defaults to the time of creation; another time is set with
	// SQL. The post's id is allocated at creation all the same, so ids stay
	// in creation order, not in CreatedAt order.
	CreatedAt time.Time
	// DeletedAt deletes the post at that time, through DeletePost; nil
	// leaves it live.
	DeletedAt *time.Time
}

// Post stores a post as opts describe it and returns it as stored (with
// its edit history).
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
	var p storage.Post
	var err error
	if opts.RepostOf.ID != 0 {
		p, err = db.Repost(ctx, author.ID, opts.App.ID, opts.RepostOf.ID)
	} else {
		text := opts.Text
		if text == "" {
			text = "post " + suffix()
		}
		p, err = db.CreatePost(ctx, storage.Post{AuthorID: author.ID, AppID: opts.App.ID, Text: text,
			PaidPartnership: opts.PaidPartnership, Lang: opts.Lang, Source: opts.Source, PlaceID: opts.PlaceID,
			PossiblySensitive: opts.PossiblySensitive, MediaIDs: opts.MediaIDs, Entities: opts.Entities, Terms: opts.Terms,
			InReplyToPostID: opts.InReplyTo.ID, QuoteOfID: opts.QuoteOf.ID})
	}
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	likers := opts.LikedBy
	for range opts.Likes {
		likers = append(likers, User(t, db, nil))
	}
	for _, u := range likers {
		if _, err := db.Like(ctx, u.ID, p.ID); err != nil {
			t.Fatalf("factory: %v", err)
		}
	}
	if m := opts.Metrics; m != nil {
		execOne(t, db, fmt.Sprintf("set counters of post %d", p.ID),
			`UPDATE posts SET like_count = $2, repost_count = $3, reply_count = $4, quote_count = $5 WHERE id = $1`,
			p.ID, m.Likes, m.Reposts, m.Replies, m.Quotes)
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

// Edit stores text as the next version of prev (its author's latest
// version) through EditPost at the present time, keeping prev's app, lang
// and the rest, and returns the new version with its edit history.
func Edit(t testing.TB, db *postgres.DB, prev storage.Post, text string) storage.Post {
	t.Helper()
	next := prev
	next.Text, next.Entities, next.Terms = text, storage.Entities{}, storage.PostTerms{}
	p, err := db.EditPost(t.Context(), prev.ID, next, now())
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	return p
}
