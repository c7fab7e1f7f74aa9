package webhooks_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/webhooks"
)

// testRenderer is a test double of the renderer only (the real one is
// render.Messages): a deterministic JSON body of the post id, the link's
// query and the rules; posts in hidden are not shown (nil). PostgreSQL is
// real.
type testRenderer struct{ hidden map[int64]bool }

func (r testRenderer) Render(_ context.Context, postID int64, query string, rules []events.RuleHit) ([]byte, error) {
	if r.hidden[postID] {
		return nil, nil
	}
	return json.Marshal(map[string]any{"post": postID, "query": query, "rules": rules})
}

type sentBody struct {
	Post  int64            `json:"post"`
	Query string           `json:"query"`
	Rules []events.RuleHit `json:"rules"`
}

// TestLinkSink: the sink records exactly the matching posts of each
// link's app, rendered with the link's query and that app's rules, skips
// posts created before the link and posts not shown, and adds nothing
// when the batch is offered again.
func TestLinkSink(t *testing.T) {
	t.Parallel()
	db, url := storagetest.NewDB(t)
	pool := storagetest.BarePool(t, url)
	ctx := t.Context()
	a, b, c := factory.App(t, db, nil), factory.App(t, db, nil), factory.App(t, db, nil)
	for app, value := range map[int64]string{a.ID: "hello", b.ID: "world", c.ID: "hello"} {
		if _, err := db.AddStreamRules(ctx, storage.StreamRuleAdd{AppID: app, Rules: []storage.NewStreamRule{{Value: value, Tag: "t"}}}); err != nil {
			t.Fatal(err)
		}
	}
	hook := func(app storage.App, path string) int64 {
		w, err := db.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: "https://receiver.example/" + path, CheckedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}
	link := func(hook, app int64, query string, at time.Time) {
		if _, err := pool.Exec(ctx, `INSERT INTO webhook_stream_links (webhook_id, app_id, query, created_at) VALUES ($1, $2, $3, $4)`,
			hook, app, query, at); err != nil {
			t.Fatalf("link: %v", err)
		}
	}
	a1, a2, b1 := hook(a, "a1"), hook(a, "a2"), hook(b, "b1")
	gone := hook(a, "gone")
	link(a1, a.ID, "", time.Now().Add(-time.Hour))
	link(a2, a.ID, "tweet.fields=created_at", time.Now().Add(-time.Hour))
	link(gone, a.ID, "", time.Now().Add(-time.Hour))
	if err := db.DeleteWebhook(ctx, a.ID, gone); err != nil {
		t.Fatal(err)
	}
	author := factory.User(t, db, nil)
	p1 := factory.Post(t, db, &factory.PostOpts{Author: author, Text: "hello world"})
	time.Sleep(10 * time.Millisecond)
	link(b1, b.ID, "", time.Now()) // after p1's event
	p2 := factory.Post(t, db, &factory.PostOpts{Author: author, Text: "hello there"})
	p3 := factory.Post(t, db, &factory.PostOpts{Author: author, Text: "the world"})
	factory.Post(t, db, &factory.PostOpts{Author: author, Text: "nothing to see"})
	p5 := factory.Post(t, db, &factory.PostOpts{Author: author, Text: "hello hidden"})
	batch, err := db.EventsAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	sink := webhooks.NewLinkSink(db, db, testRenderer{hidden: map[int64]bool{p5.ID: true}}, nil)
	for range 2 { // the second offer adds nothing
		if err := sink.Handle(ctx, batch); err != nil {
			t.Fatalf("Handle: %v", err)
		}
	}
	got := map[int64][]sentBody{}
	rows, err := pool.Query(ctx, `SELECT webhook_id, body, event_seq FROM webhook_deliveries ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	seqOf := map[int64]int64{}
	for _, e := range batch {
		seqOf[e.SubjectID] = e.Seq
	}
	for rows.Next() {
		var hook, seq int64
		var body []byte
		var s sentBody
		if err := rows.Scan(&hook, &body, &seq); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &s); err != nil {
			t.Fatal(err)
		}
		if seqOf[s.Post] != seq {
			t.Errorf("delivery of post %d has event %d, want %d", s.Post, seq, seqOf[s.Post])
		}
		got[hook] = append(got[hook], s)
	}
	posts := func(bs []sentBody) []int64 {
		var out []int64
		for _, b := range bs {
			out = append(out, b.Post)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		hook  int64
		app   int64
		query string
		want  []int64
	}{
		{"a1", a1, a.ID, "", []int64{p1.ID, p2.ID}},
		{"a2", a2, a.ID, "tweet.fields=created_at", []int64{p1.ID, p2.ID}},
		{"b1 (linked after p1)", b1, b.ID, "", []int64{p3.ID}},
	} {
		if p := posts(got[tc.hook]); !slices.Equal(p, tc.want) {
			t.Errorf("%s: posts %v, want %v", tc.name, p, tc.want)
		}
		for _, s := range got[tc.hook] {
			if s.Query != tc.query || len(s.Rules) != 1 || s.Rules[0].AppID != tc.app {
				t.Errorf("%s: body %+v: want query %q and the rule of app %d only", tc.name, s, tc.query, tc.app)
			}
		}
	}
	if len(got) != 3 {
		t.Errorf("deliveries to %d webhooks, want 3 (none to a deleted webhook): %v", len(got), got)
	}
}
