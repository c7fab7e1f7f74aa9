package postgres_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// eventsAfter reads every event after seq.
func eventsAfter(t *testing.T, db *postgres.DB, after int64) []events.Event {
	t.Helper()
	evs, err := db.EventsAfter(t.Context(), after, 10_000)
	if err != nil {
		t.Fatalf("EventsAfter(%d): %v", after, err)
	}
	return evs
}

func head(t *testing.T, db *postgres.DB) int64 {
	t.Helper()
	h, err := db.EventHead(t.Context())
	if err != nil {
		t.Fatalf("EventHead: %v", err)
	}
	return h
}

// describe is an event as type:subject.
func describe(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprintf("%s:%d", e.Type, e.SubjectID)
	}
	return out
}

func decodePost(t *testing.T, e events.Event) events.Post {
	t.Helper()
	var p events.Post
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatalf("decode payload of event %d: %v", e.Seq, err)
	}
	return p
}

func TestPostWritesAppendEvents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_ev"})
	bob := factory.User(t, db, &factory.UserOpts{Username: "bob_ev"})

	start := head(t, db)
	root := factory.Post(t, db, &factory.PostOpts{Author: alice, App: app, Text: "hello #Go $AVRY",
		Entities: storage.Entities{Hashtags: []storage.TagEntity{{Start: 6, End: 9, Tag: "Go"}}, Cashtags: []storage.TagEntity{{Start: 10, End: 15, Tag: "AVRY"}}}})
	reply, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, AppID: app.ID, Text: "@alice_ev hi", InReplyToPostID: root.ID,
		Entities: storage.Entities{Mentions: []storage.MentionEntity{{Start: 0, End: 9, Username: "Alice_Ev", UserID: alice.ID}}}})
	if err != nil {
		t.Fatalf("CreatePost reply: %v", err)
	}
	edited, err := db.EditPost(ctx, root.ID, storage.Post{AuthorID: alice.ID, AppID: app.ID, Text: "hello again"}, time.Now())
	if err != nil {
		t.Fatalf("EditPost: %v", err)
	}
	repost, err := db.Repost(ctx, bob.ID, app.ID, edited.ID)
	if err != nil {
		t.Fatalf("Repost: %v", err)
	}
	if _, err := db.Repost(ctx, bob.ID, app.ID, edited.ID); err != nil { // idempotent: no second event
		t.Fatalf("Repost again: %v", err)
	}
	if ok, err := db.Unrepost(ctx, bob.ID, edited.ID); err != nil || !ok {
		t.Fatalf("Unrepost = %v, %v", ok, err)
	}
	repost2, err := db.Repost(ctx, bob.ID, app.ID, edited.ID)
	if err != nil {
		t.Fatalf("Repost 2: %v", err)
	}
	if _, err := db.DeletePost(ctx, edited.ID, time.Now()); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}

	evs := eventsAfter(t, db, start)
	want := []string{
		fmt.Sprintf("post.create:%d", root.ID), fmt.Sprintf("post.create:%d", reply.ID), fmt.Sprintf("post.create:%d", edited.ID),
		fmt.Sprintf("post.create:%d", repost.ID), fmt.Sprintf("post.delete:%d", repost.ID), fmt.Sprintf("post.create:%d", repost2.ID),
		// DeletePost: every version of the chain, then its live reposts.
		fmt.Sprintf("post.delete:%d", root.ID), fmt.Sprintf("post.delete:%d", edited.ID), fmt.Sprintf("post.delete:%d", repost2.ID),
	}
	if got := describe(evs); !slices.Equal(got, want) {
		t.Fatalf("events =\n%v\nwant\n%v", got, want)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Errorf("seq %d after %d", evs[i].Seq, evs[i-1].Seq)
		}
	}
	if h := head(t, db); h != evs[len(evs)-1].Seq {
		t.Errorf("EventHead = %d, want %d", h, evs[len(evs)-1].Seq)
	}

	first := decodePost(t, evs[0])
	if first.AuthorUsername != "alice_ev" || first.Text != "hello #Go $AVRY" || !slices.Equal(first.Hashtags, []string{"go"}) ||
		!slices.Equal(first.Cashtags, []string{"avry"}) || first.ConversationID != root.ID || first.AppID != app.ID {
		t.Errorf("create payload = %+v", first)
	}
	if e := evs[0]; e.AppID != app.ID || e.UserID != alice.ID || e.CreatedAt.IsZero() {
		t.Errorf("create event = %+v", e)
	}
	r := decodePost(t, evs[1])
	if r.InReplyToPostID != root.ID || r.InReplyToUserID != alice.ID || r.InReplyToUsername != "alice_ev" ||
		r.AuthorUsername != "bob_ev" || !slices.Equal(r.Mentions, []string{"alice_ev"}) || r.ConversationID != root.ID {
		t.Errorf("reply payload = %+v", r)
	}
	if e := decodePost(t, evs[2]); e.EditOfID != root.ID || e.Text != "hello again" || e.ID != edited.ID {
		t.Errorf("edit payload = %+v", e)
	}
	if rp := decodePost(t, evs[3]); rp.RepostOfID != edited.ID || rp.AuthorUsername != "bob_ev" || rp.Text != "RT @alice_ev: hello again" {
		t.Errorf("repost payload = %+v", rp)
	}
	var del events.PostDeleted
	if err := json.Unmarshal(evs[8].Payload, &del); err != nil || del.ID != repost2.ID || del.AuthorID != bob.ID || del.DeletedAt.IsZero() {
		t.Errorf("delete payload = %+v (%v)", del, err)
	}
}

func TestRefusedPostWritesAppendNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	bob := factory.User(t, db, nil)
	gone := factory.Post(t, db, &factory.PostOpts{Author: alice})
	if _, err := db.DeletePost(ctx, gone.ID, time.Now()); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	old := factory.Post(t, db, &factory.PostOpts{Author: alice})
	before := head(t, db)

	cases := []struct {
		name string
		do   func() error
	}{
		{"reply to a deleted post", func() error {
			_, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, Text: "x", InReplyToPostID: gone.ID})
			return err
		}},
		{"quote of a deleted post", func() error {
			_, err := db.CreatePost(ctx, storage.Post{AuthorID: bob.ID, Text: "x", QuoteOfID: gone.ID})
			return err
		}},
		{"edit of another's post", func() error {
			_, err := db.EditPost(ctx, old.ID, storage.Post{AuthorID: bob.ID, Text: "x"}, time.Now())
			return err
		}},
		{"edit after the window", func() error {
			_, err := db.EditPost(ctx, old.ID, storage.Post{AuthorID: alice.ID, Text: "x"}, time.Now().Add(storage.EditWindow))
			return err
		}},
		{"delete of a deleted post", func() error {
			_, err := db.DeletePost(ctx, gone.ID, time.Now())
			return err
		}},
		{"repost of a deleted post", func() error {
			_, err := db.Repost(ctx, bob.ID, 0, gone.ID)
			return err
		}},
		{"unrepost of nothing", func() error {
			if ok, err := db.Unrepost(ctx, bob.ID, old.ID); err != nil || ok {
				return fmt.Errorf("unrepost = %v, %v", ok, err)
			}
			return errors.New("refused")
		}},
	}
	for _, c := range cases {
		if err := c.do(); err == nil {
			t.Errorf("%s: succeeded, want refused", c.name)
		}
	}
	if evs := eventsAfter(t, db, before); len(evs) != 0 {
		t.Errorf("refused writes appended %v", describe(evs))
	}
}

// A transaction that appended and rolled back leaves no event (and the
// next committed event still follows the earlier ones).
func TestRolledBackAppendLeavesNoEvent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	before := head(t, db)
	// A trigger that fails after the insert of a post, as any later
	// failure of the writing transaction would.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE CONSTRAINT TRIGGER fail_events AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW EXECUTE FUNCTION fail_events()`); err != nil {
		t.Fatalf("create trigger: %v", err)
	}
	if _, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, Text: "doomed"}); err == nil {
		t.Fatal("CreatePost succeeded with a failing commit")
	}
	if _, err := conn.Exec(ctx, `DROP TRIGGER fail_events ON events`); err != nil {
		t.Fatalf("drop trigger: %v", err)
	}
	if evs := eventsAfter(t, db, before); len(evs) != 0 {
		t.Errorf("rolled-back write left %v", describe(evs))
	}
	p := factory.Post(t, db, &factory.PostOpts{Author: alice})
	evs := eventsAfter(t, db, before)
	if len(evs) != 1 || evs[0].SubjectID != p.ID {
		t.Errorf("after the rollback: %v", describe(evs))
	}
}

// Seq follows commit order: a reader following the log with EventsAfter
// from the last Seq it saw, while many writers commit, misses nothing (an
// event committed later with a lower Seq would be skipped).
func TestEventSeqFollowsCommitOrder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	const writers, each = 16, 25
	authors := make([]storage.User, writers)
	for i := range authors {
		authors[i] = factory.User(t, db, nil)
	}
	root := factory.Post(t, db, &factory.PostOpts{Author: authors[0]})
	start := head(t, db)

	var done atomic.Bool
	seen := make(chan []int64, 1)
	go func() {
		var got []int64
		last := start
		for {
			finished := done.Load() // read before the batch: the last pass sees every commit
			evs, err := db.EventsAfter(ctx, last, 100)
			if err != nil {
				t.Errorf("EventsAfter: %v", err)
				break
			}
			for _, e := range evs {
				got = append(got, e.Seq)
				last = e.Seq
			}
			if finished && len(evs) == 0 {
				break
			}
		}
		seen <- got
	}()
	errs := parallel(writers, func(i int) error {
		for j := range each {
			var err error
			if j%2 == 0 {
				_, err = db.CreatePost(ctx, storage.Post{AuthorID: authors[i].ID, Text: "w"})
			} else { // replies contend on the parent's chain lock too
				_, err = db.CreatePost(ctx, storage.Post{AuthorID: authors[i].ID, Text: "r", InReplyToPostID: root.ID})
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	done.Store(true)
	for _, err := range errs {
		if err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	got := <-seen
	var all []int64
	for _, e := range eventsAfter(t, db, start) {
		all = append(all, e.Seq)
	}
	if len(all) != writers*each {
		t.Fatalf("%d events, want %d", len(all), writers*each)
	}
	if !slices.Equal(got, all) {
		t.Errorf("the follower saw %d events, the log holds %d: an event committed after a higher seq was visible", len(got), len(all))
	}
}

func TestEventCursorLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	const ttl = time.Minute
	seq, ok, err := db.ClaimEventCursor(ctx, "c", "a", ttl)
	if err != nil || !ok || seq != 0 {
		t.Fatalf("first claim = %d, %v, %v", seq, ok, err)
	}
	if _, ok, err := db.ClaimEventCursor(ctx, "c", "b", ttl); err != nil || ok {
		t.Fatalf("claim held by another = %v, %v; want refused", ok, err)
	}
	if ok, err := db.CommitEventCursor(ctx, "c", "b", 5, ttl); err != nil || ok {
		t.Fatalf("commit by a non-holder = %v, %v; want refused", ok, err)
	}
	if ok, err := db.CommitEventCursor(ctx, "c", "a", 7, ttl); err != nil || !ok {
		t.Fatalf("commit by the holder = %v, %v", ok, err)
	}
	if ok, err := db.CommitEventCursor(ctx, "c", "a", 3, ttl); err != nil || !ok {
		t.Fatalf("commit back = %v, %v", ok, err)
	}
	if got, err := db.EventCursor(ctx, "c"); err != nil || got != 7 {
		t.Errorf("cursor = %d, %v; want 7 (never moves back)", got, err)
	}
	if ok, err := db.RenewEventCursor(ctx, "c", "a", ttl); err != nil || !ok {
		t.Errorf("renew = %v, %v", ok, err)
	}
	if err := db.ReleaseEventCursor(ctx, "c", "a"); err != nil {
		t.Fatalf("release: %v", err)
	}
	seq, ok, err = db.ClaimEventCursor(ctx, "c", "b", 50*time.Millisecond)
	if err != nil || !ok || seq != 7 {
		t.Fatalf("claim after release = %d, %v, %v", seq, ok, err)
	}
	time.Sleep(100 * time.Millisecond) // b's lease expires
	if ok, err := db.CommitEventCursor(ctx, "c", "b", 9, ttl); err != nil || ok {
		t.Errorf("commit on an expired lease = %v, %v; want refused", ok, err)
	}
	if ok, err := db.RenewEventCursor(ctx, "c", "b", ttl); err != nil || ok {
		t.Errorf("renew of an expired lease = %v, %v; want refused", ok, err)
	}
	if seq, ok, err := db.ClaimEventCursor(ctx, "c", "a", ttl); err != nil || !ok || seq != 7 {
		t.Errorf("claim of an expired lease = %d, %v, %v", seq, ok, err)
	}
}

func TestEventRetentionAndSince(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	var posts []storage.Post
	for range 5 {
		posts = append(posts, factory.Post(t, db, &factory.PostOpts{Author: alice}))
	}
	evs := eventsAfter(t, db, 0)
	if len(evs) != 5 {
		t.Fatalf("%d events, want 5", len(evs))
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	// The first three are 8 days old; the newest too, which retention keeps.
	if _, err := conn.Exec(ctx, `UPDATE events SET created_at = now() - interval '8 days' WHERE seq <= $1 OR seq = $2`,
		evs[2].Seq, evs[4].Seq); err != nil {
		t.Fatalf("age events: %v", err)
	}
	since, err := db.EventsSince(ctx, time.Now().Add(-time.Hour), 0, 100)
	if err != nil || len(since) != 1 || since[0].Seq != evs[3].Seq {
		t.Errorf("EventsSince(1h) = %v, %v; want event %d", describe(since), err, evs[3].Seq)
	}
	n, err := db.DeleteEventsOlderThan(ctx, 7*24*time.Hour, 2)
	if err != nil || n != 3 {
		t.Fatalf("DeleteEventsOlderThan = %d, %v; want 3", n, err)
	}
	left := eventsAfter(t, db, 0)
	if got := describe(left); !slices.Equal(got, describe(evs[3:])) {
		t.Errorf("left %v, want %v", got, describe(evs[3:]))
	}
	if h := head(t, db); h != evs[4].Seq {
		t.Errorf("head after retention = %d, want %d", h, evs[4].Seq)
	}
}
