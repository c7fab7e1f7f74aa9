package postgres_test

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// reload loads post id as stored now.
func reload(t *testing.T, db *postgres.DB, id int64) storage.Post {
	t.Helper()
	p, err := db.PostByID(t.Context(), id)
	if err != nil {
		t.Fatalf("PostByID(%d): %v", id, err)
	}
	return p
}

// wantMetrics checks the counters of post id as stored now.
func wantMetrics(t *testing.T, db *postgres.DB, what string, id int64, want storage.PostMetrics) {
	t.Helper()
	if got := reload(t, db, id).Metrics; got != want {
		t.Errorf("%s: metrics %+v, want %+v", what, got, want)
	}
}

// parallel runs f(i) for i in [0, n) at once and returns the errors.
func parallel(n int, f func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestCreatePostColumns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_cols"})
	entities := storage.Entities{
		URLs:     []storage.URLEntity{{Start: 0, End: 23, URL: "https://t.co/abc", ExpandedURL: "https://www.Example.com/a/", DisplayURL: "example.com/a"}},
		Mentions: []storage.MentionEntity{{Start: 24, End: 30, Username: "Bob", UserID: 42}, {Start: 31, End: 35, Username: "bob"}},
		Hashtags: []storage.TagEntity{{Start: 36, End: 40, Tag: "Go"}},
		Cashtags: []storage.TagEntity{{Start: 41, End: 46, Tag: "AVRY"}},
	}
	in := storage.Post{AuthorID: alice.ID, AppID: app.ID, Text: "https://t.co/abc @Bob @bob #Go $AVRY", Lang: "en", Source: app.Name,
		PlaceID: "01a9a39529b27f36", PossiblySensitive: true, MediaIDs: []int64{7, 8}, Entities: entities,
		InReplyToUserID: 99, ConversationID: 5, EditRootID: 6, Metrics: storage.PostMetrics{Likes: 3}}
	p, err := db.CreatePost(ctx, in)
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	want := in
	want.ID, want.CreatedAt = p.ID, p.CreatedAt
	want.ConversationID, want.EditRootID, want.EditHistory = p.ID, p.ID, []int64{p.ID}
	want.InReplyToUserID, want.Metrics = 0, storage.PostMetrics{} // not a reply; counters start at 0
	if !reflect.DeepEqual(p, want) {
		t.Errorf("CreatePost =\n%+v\nwant\n%+v", p, want)
	}
	if got := reload(t, db, p.ID); !reflect.DeepEqual(got, p) {
		t.Errorf("PostByID =\n%+v\nwant\n%+v", got, p)
	}
	// The terms are derived from the entities and stored, not returned.
	wantTerms := storage.PostTerms{Mentions: []string{"bob"}, Hashtags: []string{"go"}, Cashtags: []string{"avry"},
		URLTerms: []string{"www.example.com/a", "www.example.com", "example.com"}}
	if got := storagetest.StoredTerms(t, url, p.ID); !reflect.DeepEqual(got, wantTerms) {
		t.Errorf("stored terms = %+v, want %+v", got, wantTerms)
	}

	// Terms given are stored as given; a post without entities has none.
	terms := storage.PostTerms{Mentions: []string{"carol"}, URLTerms: []string{"aviary.dev"}}
	given, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "x", Entities: entities, Terms: terms})
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	wantTerms = storage.PostTerms{Mentions: []string{"carol"}, Hashtags: []string{}, Cashtags: []string{}, URLTerms: []string{"aviary.dev"}}
	if got := storagetest.StoredTerms(t, url, given.ID); !reflect.DeepEqual(got, wantTerms) {
		t.Errorf("stored terms given = %+v, want %+v", got, wantTerms)
	}
	if !given.Terms.Empty() || given.Lang != "und" || given.AppID != 0 || given.Source != "" {
		t.Errorf("CreatePost with terms = %+v", given)
	}
	plain := factory.Post(t, db, &factory.PostOpts{Author: alice})
	if !plain.Entities.Empty() || !storagetest.StoredTerms(t, url, plain.ID).Empty() || plain.PlaceID != "" || plain.PossiblySensitive || len(plain.MediaIDs) != 0 {
		t.Errorf("plain post = %+v", plain)
	}

	if _, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "rt", RepostOfID: p.ID}); err == nil {
		t.Error("CreatePost of a repost succeeded; want it refused (Repost makes reposts)")
	}
}

func TestPostsByIDs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	a := factory.Post(t, db, &factory.PostOpts{Author: alice})
	b := factory.Post(t, db, &factory.PostOpts{Author: alice, DeletedAt: &t0})
	c := factory.Post(t, db, &factory.PostOpts{Author: alice})
	c2 := factory.Edit(t, db, c, "second")
	c3 := factory.Edit(t, db, c2, "third")

	got, err := db.PostsByIDs(ctx, []int64{c2.ID, b.ID, c3.ID + 1000, a.ID, c.ID, c2.ID})
	if err != nil {
		t.Fatalf("PostsByIDs: %v", err)
	}
	var order []int64
	for _, p := range got {
		order = append(order, p.ID)
	}
	if want := []int64{c2.ID, b.ID, a.ID, c.ID}; !slices.Equal(order, want) {
		t.Fatalf("PostsByIDs order %v, want %v (first places, unknown left out, deleted kept)", order, want)
	}
	chain := []int64{c.ID, c2.ID, c3.ID}
	for _, p := range got {
		want := []int64{p.ID}
		if p.EditRootID == c.ID {
			want = chain
		}
		if !slices.Equal(p.EditHistory, want) {
			t.Errorf("post %d history %v, want %v", p.ID, p.EditHistory, want)
		}
	}
	if got[1].DeletedAt == nil {
		t.Error("deleted post came back live")
	}
	if p := reload(t, db, c.ID); !slices.Equal(p.EditHistory, chain) || p.SupersededAt == nil {
		t.Errorf("PostByID(first version) = history %v superseded %v", p.EditHistory, p.SupersededAt)
	}
	if none, err := db.PostsByIDs(ctx, nil); err != nil || len(none) != 0 {
		t.Errorf("PostsByIDs(nil) = %v, %v", none, err)
	}
}

func TestReplies(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	bob := factory.User(t, db, nil)
	root := factory.Post(t, db, &factory.PostOpts{Author: alice})
	reply, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, Text: "reply", InReplyToPostID: root.ID, InReplyToUserID: 12345})
	if err != nil {
		t.Fatalf("CreatePost reply: %v", err)
	}
	if reply.ConversationID != root.ID || reply.InReplyToPostID != root.ID || reply.InReplyToUserID != alice.ID || reply.EditRootID != reply.ID {
		t.Errorf("reply = conversation %d parent %d parent author %d root %d; want %d %d %d %d",
			reply.ConversationID, reply.InReplyToPostID, reply.InReplyToUserID, reply.EditRootID, root.ID, root.ID, alice.ID, reply.ID)
	}
	deeper := factory.Post(t, db, &factory.PostOpts{Author: alice, InReplyTo: reply})
	if deeper.ConversationID != root.ID || deeper.InReplyToPostID != reply.ID || deeper.InReplyToUserID != bob.ID {
		t.Errorf("reply to a reply = conversation %d parent %d author %d; want %d %d %d",
			deeper.ConversationID, deeper.InReplyToPostID, deeper.InReplyToUserID, root.ID, reply.ID, bob.ID)
	}
	wantMetrics(t, db, "root", root.ID, storage.PostMetrics{Replies: 1})
	wantMetrics(t, db, "reply", reply.ID, storage.PostMetrics{Replies: 1})
	wantMetrics(t, db, "reply to the reply", deeper.ID, storage.PostMetrics{})

	// 20 concurrent replies all count.
	errs := parallel(20, func(i int) error {
		_, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, Text: fmt.Sprint("r", i), InReplyToPostID: deeper.ID})
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent reply %d: %v", i, err)
		}
	}
	wantMetrics(t, db, "after 20 concurrent replies", deeper.ID, storage.PostMetrics{Replies: 20})

	// A reply to a superseded version counts on the chain's latest version.
	edited := factory.Edit(t, db, root, "root, edited")
	factory.Post(t, db, &factory.PostOpts{Author: bob, InReplyTo: root})
	wantMetrics(t, db, "latest version after a reply to the first", edited.ID, storage.PostMetrics{Replies: 2})

	gone := factory.Post(t, db, &factory.PostOpts{Author: alice, DeletedAt: &t0})
	for _, tt := range []struct {
		name   string
		parent int64
	}{{"deleted parent", gone.ID}, {"unknown parent", gone.ID + 1000}} {
		_, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, Text: "late", InReplyToPostID: tt.parent})
		wantErrIs(t, tt.name, err, storage.ErrNotFound)
	}
	metrics, err := db.UserMetrics(ctx, []int64{bob.ID})
	if err != nil || metrics[bob.ID].Posts != 22 {
		t.Errorf("bob's posts = %+v, %v; want 22 (refused replies stored nothing)", metrics[bob.ID], err)
	}
	wantMetrics(t, db, "deleted parent", gone.ID, storage.PostMetrics{})
}

func TestQuotes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	quoted := factory.Post(t, db, &factory.PostOpts{Author: alice})
	parent := factory.Post(t, db, &factory.PostOpts{Author: alice})
	q := factory.Post(t, db, &factory.PostOpts{QuoteOf: quoted})
	if q.QuoteOfID != quoted.ID || q.ConversationID != q.ID || q.InReplyToPostID != 0 {
		t.Errorf("quote = %+v", q)
	}
	both := factory.Post(t, db, &factory.PostOpts{QuoteOf: quoted, InReplyTo: parent})
	if both.QuoteOfID != quoted.ID || both.InReplyToPostID != parent.ID || both.ConversationID != parent.ID {
		t.Errorf("quoting reply = %+v", both)
	}
	wantMetrics(t, db, "quoted", quoted.ID, storage.PostMetrics{Quotes: 2})
	wantMetrics(t, db, "parent", parent.ID, storage.PostMetrics{Replies: 1})

	gone := factory.Post(t, db, &factory.PostOpts{Author: alice, DeletedAt: &t0})
	_, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "q", QuoteOfID: gone.ID})
	wantErrIs(t, "quote of a deleted post", err, storage.ErrNotFound)
	// A refused quote leaves the live parent's counter alone.
	_, err = db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "q", QuoteOfID: gone.ID + 1000, InReplyToPostID: parent.ID})
	wantErrIs(t, "quote of an unknown post", err, storage.ErrNotFound)
	wantMetrics(t, db, "parent after a refused quoting reply", parent.ID, storage.PostMetrics{Replies: 1})
}

func TestDeletePostCounters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	original := factory.Post(t, db, &factory.PostOpts{Author: alice})
	reply := factory.Post(t, db, &factory.PostOpts{InReplyTo: original})
	quote := factory.Post(t, db, &factory.PostOpts{QuoteOf: original})
	repost := factory.Post(t, db, &factory.PostOpts{RepostOf: original})
	factory.Post(t, db, &factory.PostOpts{InReplyTo: original})
	wantMetrics(t, db, "before", original.ID, storage.PostMetrics{Replies: 2, Quotes: 1, Reposts: 1})

	for _, tt := range []struct {
		name string
		post storage.Post
		want storage.PostMetrics
	}{
		{"reply", reply, storage.PostMetrics{Replies: 1, Quotes: 1, Reposts: 1}},
		{"quote", quote, storage.PostMetrics{Replies: 1, Reposts: 1}},
		{"repost", repost, storage.PostMetrics{Replies: 1}},
	} {
		deleted, err := db.DeletePost(ctx, tt.post.ID, t0)
		if err != nil {
			t.Fatalf("DeletePost %s: %v", tt.name, err)
		}
		checkStamp(t, tt.name+" deleted_at", deleted.DeletedAt, &t0)
		wantMetrics(t, db, "after deleting the "+tt.name, original.ID, tt.want)
		_, err = db.DeletePost(ctx, tt.post.ID, t0)
		wantErrIs(t, "deleting the "+tt.name+" twice", err, storage.ErrNotFound)
		wantMetrics(t, db, "after deleting the "+tt.name+" twice", original.ID, tt.want)
	}

	// Deleting any version of an edited post deletes them all; a reply
	// counts once per chain.
	edited := factory.Post(t, db, &factory.PostOpts{Author: alice, InReplyTo: original})
	v2 := factory.Edit(t, db, edited, "v2")
	v3 := factory.Edit(t, db, v2, "v3")
	wantMetrics(t, db, "after an edited reply", original.ID, storage.PostMetrics{Replies: 2})
	deleted, err := db.DeletePost(ctx, v2.ID, t0)
	if err != nil || deleted.ID != v2.ID || !slices.Equal(deleted.EditHistory, []int64{edited.ID, v2.ID, v3.ID}) {
		t.Fatalf("DeletePost(v2) = %+v, %v", deleted, err)
	}
	for _, id := range []int64{edited.ID, v2.ID, v3.ID} {
		checkStamp(t, "version deleted_at", reload(t, db, id).DeletedAt, &t0)
	}
	wantMetrics(t, db, "after deleting the edited reply", original.ID, storage.PostMetrics{Replies: 1})
	_, err = db.DeletePost(ctx, v3.ID, t0)
	wantErrIs(t, "deleting a deleted chain's latest version", err, storage.ErrNotFound)
}

// Deleting a post deletes the live reposts of its chain (of every
// version), in the same transaction, and only those.
func TestDeletePostDeletesReposts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	bob, carol, dave, erin := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	original := factory.Post(t, db, &factory.PostOpts{Author: alice})
	bobs := factory.Post(t, db, &factory.PostOpts{Author: bob, RepostOf: original}) // names the first version
	v2 := factory.Edit(t, db, original, "v2")
	carols := factory.Post(t, db, &factory.PostOpts{Author: carol, RepostOf: original}) // names v2
	daves := factory.Post(t, db, &factory.PostOpts{Author: dave, RepostOf: v2})
	if done, err := db.Unrepost(ctx, dave.ID, v2.ID); err != nil || !done {
		t.Fatalf("Unrepost = %v, %v", done, err)
	}
	undone := reload(t, db, daves.ID).DeletedAt // now(), not t0
	if undone == nil {
		t.Fatal("dave's undone repost is live")
	}
	other := factory.Post(t, db, &factory.PostOpts{Author: alice})
	erins := factory.Post(t, db, &factory.PostOpts{Author: erin, RepostOf: other})
	if carols.RepostOfID != v2.ID || bobs.RepostOfID != original.ID {
		t.Fatalf("reposts name %d and %d, want %d and %d", bobs.RepostOfID, carols.RepostOfID, original.ID, v2.ID)
	}

	if _, err := db.DeletePost(ctx, original.ID, t0); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	for _, rt := range []storage.Post{bobs, carols} {
		checkStamp(t, fmt.Sprintf("repost %d deleted_at", rt.ID), reload(t, db, rt.ID).DeletedAt, &t0)
	}
	checkStamp(t, "the undone repost's deleted_at", reload(t, db, daves.ID).DeletedAt, undone)
	checkStamp(t, "another post's repost deleted_at", reload(t, db, erins.ID).DeletedAt, nil)
	metrics, err := db.UserMetrics(ctx, []int64{bob.ID, carol.ID, erin.ID})
	if err != nil {
		t.Fatal(err)
	}
	if metrics[bob.ID].Posts != 0 || metrics[carol.ID].Posts != 0 || metrics[erin.ID].Posts != 1 {
		t.Errorf("post counts after the delete = %+v, want bob 0, carol 0, erin 1", metrics)
	}
	// Nothing is left to undo, and the original cannot be reposted again.
	if done, err := db.Unrepost(ctx, bob.ID, original.ID); err != nil || done {
		t.Errorf("Unrepost of a deleted post's repost = %v, %v; want false", done, err)
	}
	_, err = db.Repost(ctx, dave.ID, 0, v2.ID)
	wantErrIs(t, "Repost of a deleted post", err, storage.ErrNotFound)
	// Deleting a repost itself still works on its own.
	if _, err := db.DeletePost(ctx, erins.ID, t0); err != nil {
		t.Errorf("DeletePost of a repost: %v", err)
	}
	wantMetrics(t, db, "reposted post after its repost is deleted", other.ID, storage.PostMetrics{})
}

func TestEditPost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, nil)
	bob := factory.User(t, db, nil)
	parent := factory.Post(t, db, &factory.PostOpts{Author: bob})
	quoted := factory.Post(t, db, &factory.PostOpts{Author: bob})

	first, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "v1", InReplyToPostID: parent.ID, QuoteOfID: quoted.ID,
		PlaceID: "place", Lang: "en", MediaIDs: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	fan := factory.User(t, db, nil)
	if liked, err := db.Like(ctx, fan.ID, first.ID); err != nil || !liked {
		t.Fatalf("Like = %v, %v", liked, err)
	}
	factory.Post(t, db, &factory.PostOpts{InReplyTo: first})

	now := first.CreatedAt.Add(time.Minute)
	entities := storage.Entities{Hashtags: []storage.TagEntity{{Start: 0, End: 3, Tag: "V2"}}}
	v2, err := db.EditPost(ctx, first.ID, storage.Post{AuthorID: alice.ID, AppID: app.ID, Source: app.Name, Text: "#v2", Lang: "fr",
		Entities: entities, MediaIDs: []int64{2, 3}, InReplyToPostID: 777, QuoteOfID: 888, PlaceID: "elsewhere"}, now)
	if err != nil {
		t.Fatalf("EditPost: %v", err)
	}
	if v2.EditRootID != first.ID || v2.ConversationID != parent.ID || v2.InReplyToPostID != parent.ID || v2.InReplyToUserID != bob.ID ||
		v2.QuoteOfID != quoted.ID || v2.PlaceID != "place" || v2.AuthorID != alice.ID || v2.AppID != app.ID || v2.Source != app.Name {
		t.Errorf("edit = %+v; want the first version's references and place", v2)
	}
	if v2.Text != "#v2" || v2.Lang != "fr" || !slices.Equal(v2.MediaIDs, []int64{2, 3}) ||
		!slices.Equal(storagetest.StoredTerms(t, url, v2.ID).Hashtags, []string{"v2"}) ||
		!reflect.DeepEqual(v2.Entities, entities) || !v2.CreatedAt.Equal(now) || v2.SupersededAt != nil {
		t.Errorf("edit = %+v; want the new text, lang, media, entities and terms, created now", v2)
	}
	if want := (storage.PostMetrics{Likes: 1, Replies: 1}); v2.Metrics != want {
		t.Errorf("edit metrics %+v, want the chain's %+v", v2.Metrics, want)
	}
	if !slices.Equal(v2.EditHistory, []int64{first.ID, v2.ID}) {
		t.Errorf("edit history %v", v2.EditHistory)
	}
	old := reload(t, db, first.ID)
	checkStamp(t, "superseded_at", old.SupersededAt, &now)
	wantMetrics(t, db, "parent after an edited reply", parent.ID, storage.PostMetrics{Replies: 1})
	wantMetrics(t, db, "quoted after an edited quote", quoted.ID, storage.PostMetrics{Quotes: 1})

	// Likes stay with the chain: the fan's like of v1 counts on v2, and
	// liking v2 again records nothing; a new like of v1 counts on v2.
	if liked, err := db.Like(ctx, fan.ID, v2.ID); err != nil || liked {
		t.Errorf("liking the new version of a liked post = %v, %v; want false", liked, err)
	}
	other := factory.User(t, db, nil)
	if liked, err := db.Like(ctx, other.ID, first.ID); err != nil || !liked {
		t.Errorf("liking the first version = %v, %v", liked, err)
	}
	wantMetrics(t, db, "latest after likes", v2.ID, storage.PostMetrics{Likes: 2, Replies: 1})
	wantMetrics(t, db, "superseded after likes", first.ID, storage.PostMetrics{Likes: 1, Replies: 1})
	if done, err := db.Unlike(ctx, fan.ID, v2.ID); err != nil || !done {
		t.Errorf("unliking through the new version = %v, %v", done, err)
	}
	wantMetrics(t, db, "latest after unlike", v2.ID, storage.PostMetrics{Likes: 1, Replies: 1})

	// The chain up to the fifth edit, then refusals.
	chain := []int64{first.ID, v2.ID}
	latest := v2
	for i := 3; i <= 6; i++ {
		latest, err = db.EditPost(ctx, latest.ID, storage.Post{AuthorID: alice.ID, Text: fmt.Sprint("v", i)}, now.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("edit %d: %v", i-1, err)
		}
		chain = append(chain, latest.ID)
	}
	if !slices.Equal(latest.EditHistory, chain) || len(chain) != storage.MaxEdits+1 {
		t.Errorf("history %v, want %v (%d edits)", latest.EditHistory, chain, storage.MaxEdits)
	}
	for _, id := range chain {
		if p := reload(t, db, id); !slices.Equal(p.EditHistory, chain) {
			t.Errorf("version %d history %v, want %v", id, p.EditHistory, chain)
		}
	}

	fresh := factory.Post(t, db, &factory.PostOpts{Author: alice})
	old2h := factory.Post(t, db, &factory.PostOpts{Author: alice, CreatedAt: time.Now().Add(-2 * time.Hour)})
	gone := factory.Post(t, db, &factory.PostOpts{Author: alice, DeletedAt: &t0})
	repost := factory.Post(t, db, &factory.PostOpts{Author: alice, RepostOf: parent})
	edited := factory.Edit(t, db, fresh, "fresh, edited")
	tests := []struct {
		name     string
		previous storage.Post
		author   int64
		now      time.Time
		want     storage.EditRefusal
	}{
		{"sixth edit", latest, alice.ID, now.Add(10 * time.Minute), storage.EditRefusedLimit},
		{"not the latest version", fresh, alice.ID, time.Now(), storage.EditRefusedNotLatest},
		{"another user's post", edited, bob.ID, time.Now(), storage.EditRefusedAuthor},
		{"after the window", old2h, alice.ID, time.Now(), storage.EditRefusedWindow},
		{"at the window's end", fresh, alice.ID, fresh.CreatedAt.Add(storage.EditWindow), storage.EditRefusedNotLatest},
		{"window of the first version", edited, alice.ID, fresh.CreatedAt.Add(storage.EditWindow), storage.EditRefusedWindow},
		{"deleted", gone, alice.ID, time.Now(), storage.EditRefusedDeleted},
		{"repost", repost, alice.ID, time.Now(), storage.EditRefusedRepost},
	}
	for _, tt := range tests {
		before := reload(t, db, tt.previous.ID)
		_, err := db.EditPost(ctx, tt.previous.ID, storage.Post{AuthorID: tt.author, Text: "nope"}, tt.now)
		var refusal storage.EditRefusal
		if !errors.As(err, &refusal) || refusal != tt.want || !errors.Is(err, storage.ErrConflict) {
			t.Errorf("%s: error %v, want the refusal %q (a conflict)", tt.name, err, tt.want)
		}
		if after := reload(t, db, tt.previous.ID); !slices.Equal(after.EditHistory, before.EditHistory) {
			t.Errorf("%s: history %v became %v", tt.name, before.EditHistory, after.EditHistory)
		}
	}
	if _, err := db.EditPost(ctx, edited.ID, storage.Post{AuthorID: alice.ID, Text: "last minute"}, fresh.CreatedAt.Add(storage.EditWindow-time.Microsecond)); err != nil {
		t.Errorf("edit just before the window's end: %v", err)
	}
	_, err = db.EditPost(ctx, gone.ID+1000, storage.Post{AuthorID: alice.ID, Text: "?"}, time.Now())
	wantErrIs(t, "edit of an unknown post", err, storage.ErrNotFound)

	metrics, err := db.UserMetrics(ctx, []int64{alice.ID})
	// first's chain, fresh's chain, old2h, the repost (gone is deleted).
	if err != nil || metrics[alice.ID].Posts != 4 {
		t.Errorf("alice's metrics %+v, %v; want 4 posts (one per chain)", metrics[alice.ID], err)
	}
}

func TestEditPostConcurrently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	p := factory.Post(t, db, nil)
	const n = 10
	made := make([]storage.Post, n)
	errs := parallel(n, func(i int) error {
		var err error
		made[i], err = db.EditPost(ctx, p.ID, storage.Post{AuthorID: p.AuthorID, Text: fmt.Sprint("edit ", i)}, time.Now())
		return err
	})
	var winners []storage.Post
	for i, err := range errs {
		switch {
		case err == nil:
			winners = append(winners, made[i])
		case !errors.Is(err, storage.EditRefusedNotLatest):
			t.Errorf("edit %d: %v, want success or %q", i, err, storage.EditRefusedNotLatest)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d edits won, want exactly 1", len(winners))
	}
	if got := reload(t, db, p.ID); !slices.Equal(got.EditHistory, []int64{p.ID, winners[0].ID}) {
		t.Errorf("history %v, want the original and the one winner %d", got.EditHistory, winners[0].ID)
	}
}

func TestRepost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "Alice_RT"})
	bob := factory.User(t, db, nil)
	original := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "héllo #Go", Lang: "fr", PossiblySensitive: true,
		Entities: storage.Entities{Hashtags: []storage.TagEntity{{Start: 6, End: 9, Tag: "Go"}}}})

	rt, err := db.Repost(ctx, bob.ID, app.ID, original.ID)
	if err != nil {
		t.Fatalf("Repost: %v", err)
	}
	wantEntities := storage.Entities{Mentions: []storage.MentionEntity{{Start: 3, End: 12, Username: "Alice_RT", UserID: alice.ID}}}
	if rt.Text != "RT @Alice_RT: héllo #Go" || rt.RepostOfID != original.ID || rt.AuthorID != bob.ID || rt.AppID != app.ID ||
		rt.Source != app.Name || rt.Lang != "fr" || !rt.PossiblySensitive || rt.ConversationID != rt.ID || rt.EditRootID != rt.ID ||
		!reflect.DeepEqual(rt.Entities, wantEntities) || !slices.Equal(rt.EditHistory, []int64{rt.ID}) || !rt.IsRepost() {
		t.Errorf("Repost = %+v", rt)
	}
	if stored := storagetest.StoredTerms(t, url, rt.ID); !stored.Empty() {
		t.Errorf("repost terms %+v, want none (operators match the original)", stored)
	}
	if again, err := db.Repost(ctx, bob.ID, 0, original.ID); err != nil || again.ID != rt.ID {
		t.Errorf("second Repost = %d, %v; want the same repost %d", again.ID, err, rt.ID)
	}
	if viaRT, err := db.Repost(ctx, bob.ID, 0, rt.ID); err != nil || viaRT.ID != rt.ID {
		t.Errorf("Repost of the repost = %d, %v; want the same repost %d", viaRT.ID, err, rt.ID)
	}
	carol := factory.User(t, db, nil)
	carols, err := db.Repost(ctx, carol.ID, 0, rt.ID)
	if err != nil || carols.RepostOfID != original.ID || carols.AppID != 0 || carols.Source != "" {
		t.Errorf("Repost of a repost = %+v, %v; want a repost of the original", carols, err)
	}
	wantMetrics(t, db, "original", original.ID, storage.PostMetrics{Reposts: 2})
	wantMetrics(t, db, "repost", rt.ID, storage.PostMetrics{})

	// Unrepost, then again.
	for i, want := range []bool{true, false} {
		if done, err := db.Unrepost(ctx, carol.ID, original.ID); err != nil || done != want {
			t.Errorf("Unrepost #%d = %v, %v; want %v", i+1, done, err, want)
		}
	}
	if p := reload(t, db, carols.ID); p.DeletedAt == nil {
		t.Error("undone repost is live")
	}
	wantMetrics(t, db, "original after unrepost", original.ID, storage.PostMetrics{Reposts: 1})
	if done, err := db.Unrepost(ctx, carol.ID, original.ID+1000); err != nil || done {
		t.Errorf("Unrepost of an unknown post = %v, %v", done, err)
	}
	// Reposting again makes a new repost.
	back, err := db.Repost(ctx, carol.ID, 0, original.ID)
	if err != nil || back.ID == carols.ID {
		t.Errorf("Repost after Unrepost = %d, %v; want a new repost", back.ID, err)
	}
	// Through the repost's id too.
	if done, err := db.Unrepost(ctx, carol.ID, rt.ID); err != nil || !done {
		t.Errorf("Unrepost through a repost's id = %v, %v", done, err)
	}

	// After an edit, the chain is reposted once, naming its latest version.
	v2 := factory.Edit(t, db, original, "hello, edited")
	if again, err := db.Repost(ctx, bob.ID, 0, v2.ID); err != nil || again.ID != rt.ID {
		t.Errorf("Repost of the edited version = %d, %v; want bob's repost %d", again.ID, err, rt.ID)
	}
	dave := factory.User(t, db, nil)
	if d, err := db.Repost(ctx, dave.ID, 0, original.ID); err != nil || d.RepostOfID != v2.ID || d.Text != "RT @Alice_RT: hello, edited" {
		t.Errorf("Repost of a superseded version = %+v, %v; want a repost of the latest %d", d, err, v2.ID)
	}
	wantMetrics(t, db, "latest version", v2.ID, storage.PostMetrics{Reposts: 2})

	gone := factory.Post(t, db, &factory.PostOpts{DeletedAt: &t0})
	for _, tt := range []struct {
		name string
		id   int64
	}{{"deleted", gone.ID}, {"unknown", gone.ID + 1000}} {
		_, err := db.Repost(ctx, bob.ID, 0, tt.id)
		wantErrIs(t, "Repost of a "+tt.name+" post", err, storage.ErrNotFound)
	}
}

func TestRepostConcurrently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	original := factory.Post(t, db, nil)
	bob := factory.User(t, db, nil)
	const n = 20
	made := make([]storage.Post, n)
	errs := parallel(n, func(i int) error {
		var err error
		made[i], err = db.Repost(ctx, bob.ID, 0, original.ID)
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Repost %d: %v", i, err)
		}
		if made[i].ID != made[0].ID {
			t.Errorf("Repost %d = %d, Repost 0 = %d", i, made[i].ID, made[0].ID)
		}
	}
	wantMetrics(t, db, "original", original.ID, storage.PostMetrics{Reposts: 1})
	if m, err := db.UserMetrics(ctx, []int64{bob.ID}); err != nil || m[bob.ID].Posts != 1 {
		t.Errorf("bob's posts = %+v, %v; want 1 repost", m[bob.ID], err)
	}

	// Concurrent undo: one wins.
	errs = parallel(n, func(int) error {
		done, err := db.Unrepost(ctx, bob.ID, original.ID)
		if err == nil && !done {
			return errNotDone
		}
		return err
	})
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, errNotDone):
			t.Errorf("Unrepost: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d Unreposts undid something, want 1", wins)
	}
	wantMetrics(t, db, "original after undo", original.ID, storage.PostMetrics{})
}

var errNotDone = errors.New("nothing done")

func TestLikes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	post := factory.Post(t, db, nil)
	alice := factory.User(t, db, nil)

	for i, want := range []bool{true, false} {
		if liked, err := db.Like(ctx, alice.ID, post.ID); err != nil || liked != want {
			t.Errorf("Like #%d = %v, %v; want %v", i+1, liked, err, want)
		}
	}
	wantMetrics(t, db, "after one like", post.ID, storage.PostMetrics{Likes: 1})
	for i, want := range []bool{true, false} {
		if done, err := db.Unlike(ctx, alice.ID, post.ID); err != nil || done != want {
			t.Errorf("Unlike #%d = %v, %v; want %v", i+1, done, err, want)
		}
	}
	wantMetrics(t, db, "after unlike", post.ID, storage.PostMetrics{})

	// 20 users at once, and one user 20 times at once.
	const n = 20
	users := make([]storage.User, n)
	for i := range users {
		users[i] = factory.User(t, db, nil)
	}
	errs := parallel(2*n, func(i int) error {
		if i < n {
			_, err := db.Like(ctx, users[i].ID, post.ID)
			return err
		}
		_, err := db.Like(ctx, alice.ID, post.ID)
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Like %d: %v", i, err)
		}
	}
	wantMetrics(t, db, "after concurrent likes", post.ID, storage.PostMetrics{Likes: n + 1})
	errs = parallel(2*n, func(i int) error {
		if i < n/2 {
			_, err := db.Unlike(ctx, users[i].ID, post.ID)
			return err
		}
		_, err := db.Unlike(ctx, alice.ID, post.ID)
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Unlike %d: %v", i, err)
		}
	}
	wantMetrics(t, db, "after concurrent unlikes", post.ID, storage.PostMetrics{Likes: n / 2})
	metrics, err := db.UserMetrics(ctx, []int64{users[0].ID, users[n-1].ID})
	if err != nil || metrics[users[0].ID].Likes != 0 || metrics[users[n-1].ID].Likes != 1 {
		t.Errorf("UserMetrics = %+v, %v", metrics, err)
	}

	// A like of a repost likes its original.
	rt := factory.Post(t, db, &factory.PostOpts{RepostOf: post})
	if liked, err := db.Like(ctx, alice.ID, rt.ID); err != nil || !liked {
		t.Errorf("Like of a repost = %v, %v", liked, err)
	}
	wantMetrics(t, db, "original after a like of its repost", post.ID, storage.PostMetrics{Likes: n/2 + 1, Reposts: 1})

	gone := factory.Post(t, db, &factory.PostOpts{DeletedAt: &t0})
	for _, tt := range []struct {
		name string
		id   int64
	}{{"deleted", gone.ID}, {"unknown", gone.ID + 1000}} {
		_, err := db.Like(ctx, alice.ID, tt.id)
		wantErrIs(t, "Like of a "+tt.name+" post", err, storage.ErrNotFound)
		if done, err := db.Unlike(ctx, alice.ID, tt.id); err != nil || done {
			t.Errorf("Unlike of a %s post = %v, %v", tt.name, done, err)
		}
	}
	// Deleting a liked post keeps the like (and its count) for compliance.
	if _, err := db.DeletePost(ctx, post.ID, t0); err != nil {
		t.Fatal(err)
	}
	if done, err := db.Unlike(ctx, alice.ID, post.ID); err != nil || !done {
		t.Errorf("Unlike of a deleted liked post = %v, %v; want true", done, err)
	}
}

func TestUserMetrics(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	bob := factory.User(t, db, nil)
	idle := factory.User(t, db, nil)
	p1 := factory.Post(t, db, &factory.PostOpts{Author: alice})
	factory.Post(t, db, &factory.PostOpts{Author: alice, DeletedAt: &t0})
	factory.Edit(t, db, factory.Edit(t, db, p1, "v2"), "v3")
	bobs := factory.Post(t, db, &factory.PostOpts{Author: bob, LikedBy: []storage.User{alice}})
	factory.Post(t, db, &factory.PostOpts{Author: alice, RepostOf: bobs})
	factory.Post(t, db, &factory.PostOpts{Author: bob, LikedBy: []storage.User{alice, bob}})

	got, err := db.UserMetrics(ctx, []int64{alice.ID, bob.ID, idle.ID, idle.ID + 1000})
	if err != nil {
		t.Fatalf("UserMetrics: %v", err)
	}
	want := map[int64]storage.UserMetrics{
		alice.ID: {Posts: 2, Likes: 2}, // p1's chain and the repost
		bob.ID:   {Posts: 2, Likes: 1},
		idle.ID:  {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UserMetrics = %+v, want %+v", got, want)
	}
	if empty, err := db.UserMetrics(ctx, nil); err != nil || len(empty) != 0 {
		t.Errorf("UserMetrics(nil) = %v, %v", empty, err)
	}
}

// A user's post count reads only the partial index of live, latest posts
// (posts_author_live, 0014): an index-only scan, not every post of the
// user from the heap.
func TestUserMetricsPlan(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, pool := storagetest.NewDBWithPool(t)
	prolific, quiet := factory.User(t, db, nil), factory.User(t, db, nil)
	// 3,000 posts of one author (a tenth deleted, a tenth superseded) and
	// 30 of another.
	for _, a := range []struct {
		id int64
		n  int
	}{{prolific.ID, 3000}, {quiet.ID, 30}} {
		_, err := pool.Exec(ctx, `INSERT INTO posts (id, author_id, text, conversation_id, edit_root_id, deleted_at, superseded_at)
			SELECT s.id, $1, 'post ' || s.i, s.id, s.id,
				CASE WHEN s.i % 10 = 1 THEN now() END, CASE WHEN s.i % 10 = 2 THEN now() END
			FROM (SELECT i, aviary_next_id() AS id FROM generate_series(1, $2::int) AS i) s`, a.id, a.n)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE posts`); err != nil {
		t.Fatal(err)
	}
	got, err := db.UserMetrics(ctx, []int64{prolific.ID, quiet.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got[prolific.ID].Posts != 2400 || got[quiet.ID].Posts != 24 {
		t.Errorf("post counts %+v, want 2400 and 24", got)
	}
	for _, ids := range [][]int64{{prolific.ID}, {quiet.ID}, {prolific.ID, quiet.ID}} {
		rows, err := pool.Query(ctx, "EXPLAIN "+postgres.UserMetricsSQL, ids)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "Index Only Scan using posts_author_live on posts") {
			t.Errorf("users %v: the post count is not an index-only scan of posts_author_live:\n%s", ids, plan)
		}
	}
}

func TestUsersByUsernames(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, &factory.UserOpts{Username: "Alice", Profile: storage.Profile{Description: "hi", Verified: true}})
	bob := factory.User(t, db, &factory.UserOpts{Username: "bob"})
	factory.User(t, db, &factory.UserOpts{Username: "carol"})
	got, err := db.UsersByUsernames(ctx, []string{"ALICE", "Bob", "nobody", "alice"})
	if err != nil {
		t.Fatalf("UsersByUsernames: %v", err)
	}
	slices.SortFunc(got, func(a, b storage.User) int { return cmp.Compare(a.ID, b.ID) })
	if len(got) != 2 || got[0] != alice || got[1] != bob {
		t.Errorf("UsersByUsernames = %+v; want alice and bob as stored", got)
	}
	if none, err := db.UsersByUsernames(ctx, nil); err != nil || len(none) != 0 {
		t.Errorf("UsersByUsernames(nil) = %v, %v", none, err)
	}
}

func TestUserProfile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	if alice.Profile != (storage.Profile{}) {
		t.Errorf("new user's profile = %+v, want empty", alice.Profile)
	}
	own := factory.Post(t, db, &factory.PostOpts{Author: alice})
	others := factory.Post(t, db, nil)
	gone := factory.Post(t, db, &factory.PostOpts{Author: alice, DeletedAt: &t0})
	str := func(s string) *string { return &s }
	id := func(n int64) *int64 { return &n }

	u, err := db.SetUserProfile(ctx, alice.ID, postgres.ProfileChange{Description: str("Birds."), Location: str("Lisbon"),
		URL: str("https://aviary.dev"), ProfileImageURL: str("https://img/a.png"), CountryCode: str("pt"), PinnedPostID: id(own.ID)})
	if err != nil {
		t.Fatalf("SetUserProfile: %v", err)
	}
	want := storage.Profile{Description: "Birds.", Location: "Lisbon", URL: "https://aviary.dev", ProfileImageURL: "https://img/a.png",
		CountryCode: "PT", PinnedPostID: own.ID}
	if u.Profile != want {
		t.Errorf("profile = %+v, want %+v", u.Profile, want)
	}
	if err := db.SetUserFlag(ctx, alice.ID, postgres.UserFlagPremium, true); err != nil {
		t.Fatal(err)
	}
	want.Premium = true
	// Only the given fields change; "" clears a text; 0 unpins.
	u, err = db.SetUserProfile(ctx, alice.ID, postgres.ProfileChange{Location: str(""), PinnedPostID: id(0)})
	if err != nil {
		t.Fatalf("SetUserProfile: %v", err)
	}
	want.Location, want.PinnedPostID = "", 0
	if u.Profile != want {
		t.Errorf("profile = %+v, want %+v", u.Profile, want)
	}
	// Every user lookup reads the profile.
	byName, _ := db.UserByUsername(ctx, alice.Username)
	byID, _ := db.UserByID(ctx, alice.ID)
	list, _ := db.UsersByIDs(ctx, []int64{alice.ID})
	names, _ := db.UsersByUsernames(ctx, []string{alice.Username})
	for _, got := range []storage.User{byName, byID, list[0], names[0]} {
		if got != u {
			t.Errorf("looked up %+v, want %+v", got, u)
		}
	}

	for _, tt := range []struct {
		name   string
		change postgres.ProfileChange
		want   error
	}{
		{"another user's post", postgres.ProfileChange{PinnedPostID: id(others.ID)}, storage.ErrConflict},
		{"a deleted post", postgres.ProfileChange{PinnedPostID: id(gone.ID)}, storage.ErrConflict},
		{"an unknown post", postgres.ProfileChange{PinnedPostID: id(gone.ID + 1000)}, storage.ErrConflict},
		{"a bad country", postgres.ProfileChange{CountryCode: str("PRT")}, nil},
	} {
		_, err := db.SetUserProfile(ctx, alice.ID, tt.change)
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("SetUserProfile with %s: %v, want an error (%v)", tt.name, err, tt.want)
		}
	}
	_, err = db.SetUserProfile(ctx, alice.ID+1000, postgres.ProfileChange{Description: str("x")})
	wantErrIs(t, "SetUserProfile of an unknown user", err, storage.ErrNotFound)
	if again, _ := db.UserByID(ctx, alice.ID); again != u {
		t.Errorf("refused changes changed the user: %+v", again)
	}
}

func TestAppTier(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	if app.Tier != storage.TierSelfServe {
		t.Errorf("new app tier %q, want %q", app.Tier, storage.TierSelfServe)
	}
	bearer := factory.BearerToken(t, db, app)
	up, err := db.SetAppTier(ctx, app.ID, storage.TierEnterprise)
	if err != nil || up.Tier != storage.TierEnterprise || up.ID != app.ID {
		t.Fatalf("SetAppTier = %+v, %v", up, err)
	}
	loads := []func() (storage.App, error){
		func() (storage.App, error) { return db.AppByID(ctx, app.ID) },
		func() (storage.App, error) { return db.AppByName(ctx, app.Name) },
		func() (storage.App, error) { return db.AppByConsumerKey(ctx, app.ConsumerKey) },
		func() (storage.App, error) { return db.AppByBearerToken(ctx, bearer.Token) },
	}
	for i, load := range loads {
		if got, err := load(); err != nil || got != up {
			t.Errorf("lookup %d = %+v, %v; want %+v", i, got, err, up)
		}
	}
	if _, err := db.SetAppTier(ctx, app.ID, "gold"); err == nil {
		t.Error("SetAppTier with an unknown tier succeeded")
	}
	_, err = db.SetAppTier(ctx, app.ID+1000, storage.TierSelfServe)
	wantErrIs(t, "SetAppTier of an unknown app", err, storage.ErrNotFound)
	_, err = db.AppByID(ctx, app.ID+1000)
	wantErrIs(t, "AppByID unknown", err, storage.ErrNotFound)
	if ent := factory.App(t, db, &factory.AppOpts{Tier: storage.TierEnterprise}); ent.Tier != storage.TierEnterprise {
		t.Errorf("factory app tier %q", ent.Tier)
	}
}

// TestChainCountersUnderEdits runs likes, replies and quotes of a post
// while it is edited: every one counts on the final latest version (none
// is lost to an edit copying the counters).
func TestChainCountersUnderEdits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	root := factory.Post(t, db, nil)
	const likes, replies, quotes = 12, 8, 4
	users := make([]storage.User, likes)
	for i := range users {
		users[i] = factory.User(t, db, nil)
	}
	errs := parallel(likes+replies+quotes+storage.MaxEdits, func(i int) error {
		switch {
		case i < likes:
			_, err := db.Like(ctx, users[i].ID, root.ID)
			return err
		case i < likes+replies:
			_, err := db.CreatePost(ctx, storage.Post{AuthorID: users[0].ID, Text: "re", InReplyToPostID: root.ID})
			return err
		case i < likes+replies+quotes:
			_, err := db.CreatePost(ctx, storage.Post{AuthorID: users[1].ID, Text: "q", QuoteOfID: root.ID})
			return err
		}
		for {
			p, err := db.PostByID(ctx, root.ID)
			if err != nil {
				return err
			}
			latest := p.EditHistory[len(p.EditHistory)-1]
			_, err = db.EditPost(ctx, latest, storage.Post{AuthorID: root.AuthorID, Text: fmt.Sprint("edit ", i)}, time.Now())
			if !errors.Is(err, storage.EditRefusedNotLatest) {
				return err
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	p := reload(t, db, root.ID)
	if len(p.EditHistory) != storage.MaxEdits+1 {
		t.Fatalf("history %v, want %d versions", p.EditHistory, storage.MaxEdits+1)
	}
	wantMetrics(t, db, "latest version", p.EditHistory[storage.MaxEdits], storage.PostMetrics{Likes: likes, Replies: replies, Quotes: quotes})
}

// TestEditPostRewritesReposts: a repost shows its chain's text, so an edit
// rewrites the live reposts (and only those).
func TestEditPostRewritesReposts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_ed"})
	bob, carol := factory.User(t, db, nil), factory.User(t, db, nil)
	original := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "before edit"})
	kept, err := db.Repost(ctx, bob.ID, 0, original.ID)
	if err != nil {
		t.Fatal(err)
	}
	undone, err := db.Repost(ctx, carol.ID, 0, original.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Unrepost(ctx, carol.ID, original.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EditPost(ctx, original.ID, storage.Post{AuthorID: alice.ID, Text: "after edit"}, time.Now()); err != nil {
		t.Fatalf("EditPost: %v", err)
	}
	got, err := db.PostsByIDs(ctx, []int64{kept.ID, undone.ID})
	if err != nil || len(got) != 2 {
		t.Fatalf("PostsByIDs = %v, %v", got, err)
	}
	if got[0].Text != "RT @alice_ed: after edit" || got[1].Text != "RT @alice_ed: before edit" {
		t.Errorf("repost texts = %q, %q; want the live one rewritten, the undone one kept", got[0].Text, got[1].Text)
	}
}
