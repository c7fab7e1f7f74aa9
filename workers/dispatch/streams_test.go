package dispatch_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/dispatch"
)

func postEvent(t *testing.T, seq int64, p events.Post) events.Event {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return events.Event{Seq: seq, Type: events.PostCreate, AppID: p.AppID, SubjectID: p.ID, Payload: raw, CreatedAt: time.Now()}
}

func TestStreamMatcherPublishesMatches(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	rc, prefix := storagetest.RedisPrefix(t)
	b := bus.New(rc, prefix)
	ctx := t.Context()
	one, two := factory.App(t, db, nil), factory.App(t, db, nil)
	add := func(appID int64, values ...string) []storage.StreamRule {
		t.Helper()
		var rules []storage.NewStreamRule
		for _, v := range values {
			rules = append(rules, storage.NewStreamRule{Value: v, Tag: "tag:" + v})
		}
		got, err := db.AddStreamRules(ctx, storage.StreamRuleAdd{AppID: appID, Rules: rules, Max: 100})
		if err != nil {
			t.Fatal(err)
		}
		return got.Created
	}
	cat := add(one.ID, "cat", "from:alice")[0]
	m := dispatch.NewStreamMatcher(db, b, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if m.Name() == "" {
		t.Error("no name")
	}

	batch := []events.Event{
		postEvent(t, 1, events.Post{ID: 100, AuthorUsername: "bob", Text: "a cat"}),
		postEvent(t, 2, events.Post{ID: 101, AuthorUsername: "bob", Text: "a dog"}),
		{Seq: 3, Type: events.PostDelete, SubjectID: 100, Payload: []byte(`{"id":100}`)},
		{Seq: 4, Type: events.PostCreate, SubjectID: 102, Payload: []byte(`not json`)},
	}
	if err := m.Handle(ctx, batch); err != nil {
		t.Fatalf("handle: %v", err)
	}
	got, err := b.ReadMatches(ctx, bus.StartID, 10*time.Millisecond, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Match.Seq != 1 || got[0].Match.PostID != 100 ||
		!slices.Equal(got[0].Match.Rules, []events.RuleHit{{AppID: one.ID, RuleID: cat.ID, Tag: "tag:cat"}}) {
		t.Fatalf("matches = %+v", got)
	}
	last := got[0].StreamID

	// A rule added since: the next batch reloads the set and matches both apps.
	dog := add(two.ID, "dog")[0]
	batch = []events.Event{postEvent(t, 5, events.Post{ID: 103, AuthorUsername: "alice", Text: "cat and dog"})}
	if err := m.Handle(ctx, batch); err != nil {
		t.Fatalf("handle: %v", err)
	}
	got, err = b.ReadMatches(ctx, last, 10*time.Millisecond, 100)
	if err != nil || len(got) != 1 {
		t.Fatalf("matches = %+v, %v", got, err)
	}
	hits := got[0].Match.Rules
	if got[0].Match.Seq != 5 || len(hits) != 3 || hits[0].AppID != one.ID || hits[2] != (events.RuleHit{AppID: two.ID, RuleID: dog.ID, Tag: "tag:dog"}) {
		t.Errorf("hits = %+v", hits)
	}
	if m.Loads() != 2 {
		t.Errorf("loads = %d, want 2", m.Loads())
	}
	// An unchanged version keeps the set; nothing matching publishes nothing.
	if err := m.Handle(ctx, []events.Event{postEvent(t, 6, events.Post{ID: 104, Text: "nothing"})}); err != nil {
		t.Fatal(err)
	}
	if m.Loads() != 2 {
		t.Errorf("loads = %d after an unchanged version, want 2", m.Loads())
	}
	if got, _ := b.ReadMatches(ctx, got[0].StreamID, 10*time.Millisecond, 100); len(got) != 0 {
		t.Errorf("published for no match: %+v", got)
	}
}

// With Redis gone, Handle fails so the dispatcher retries the batch.
func TestStreamMatcherFailsWithoutRedis(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	if _, err := db.AddStreamRules(t.Context(), storage.StreamRuleAdd{AppID: app.ID, Rules: []storage.NewStreamRule{{Value: "cat"}}}); err != nil {
		t.Fatal(err)
	}
	m := dispatch.NewStreamMatcher(db, bus.New(storagetest.DeadRedis(t), "x:"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := m.Handle(t.Context(), []events.Event{postEvent(t, 1, events.Post{ID: 1, Text: "cat"})}); err == nil {
		t.Error("handle succeeded with Redis down")
	}
}

// TestStreamChain runs the whole chain on real backends: a rule stored
// through the store, a post created through the store (its post.create
// event appended in the same transaction), the Dispatcher reading the log
// and handing it to the StreamMatcher, and the Match read back from the bus
// with the rule's id and tag. A post no rule matches publishes nothing.
func TestStreamChain(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	rc, prefix := storagetest.RedisPrefix(t)
	b := bus.New(rc, prefix)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_chain"})
	added, err := db.AddStreamRules(ctx, storage.StreamRuleAdd{AppID: app.ID, Max: 10,
		Rules: []storage.NewStreamRule{{Value: `"blue heron" from:alice_chain`, Tag: "herons"}}})
	if err != nil || len(added.Created) != 1 {
		t.Fatalf("add rule: %+v, %v", added, err)
	}
	rule := added.Created[0]
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	start(t, &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Logger: log, Cursor: "chain",
		Sinks: []dispatch.Sink{dispatch.NewStreamMatcher(db, b, log)}})

	miss, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, AppID: app.ID, Text: "a heron, blue"})
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	hit, err := db.CreatePost(ctx, storage.Post{AuthorID: alice.ID, AppID: app.ID, Text: "A Blue Heron at dawn"})
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	var got []bus.Delivery
	eventually(t, "the match on the bus", func() bool {
		got, err = b.ReadMatches(ctx, bus.StartID, 10*time.Millisecond, 10)
		return err == nil && len(got) > 0
	})
	seqs := allSeqs(t, db)
	want := events.Match{Seq: seqs[len(seqs)-1], PostID: hit.ID, Rules: []events.RuleHit{{AppID: app.ID, RuleID: rule.ID, Tag: "herons"}}}
	if len(got) != 1 || got[0].Match.Seq != want.Seq || got[0].Match.PostID != want.PostID || !slices.Equal(got[0].Match.Rules, want.Rules) {
		t.Fatalf("bus carries %+v, want only %+v (post %d matches no rule)", got, want, miss.ID)
	}
}
