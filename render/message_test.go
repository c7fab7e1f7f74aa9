package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestWithMatchingRules: the rules follow the post's members as its last
// one, in the order given, tags only when set; body is left as it was.
func TestWithMatchingRules(t *testing.T) {
	body := []byte(`{"data":{"id":"7","text":"hi"}}`)
	tests := []struct {
		name  string
		rules []events.RuleHit
		want  string
	}{
		{"two rules", []events.RuleHit{{AppID: 1, RuleID: 20, Tag: "cats"}, {AppID: 1, RuleID: 3}},
			`{"data":{"id":"7","text":"hi"},"matching_rules":[{"id":"20","tag":"cats"},{"id":"3"}]}`},
		{"no rule", nil, `{"data":{"id":"7","text":"hi"},"matching_rules":[]}`},
		{"tag needing escapes", []events.RuleHit{{RuleID: 1, Tag: `a"<b>`}},
			`{"data":{"id":"7","text":"hi"},"matching_rules":[{"id":"1","tag":"a\"\u003cb\u003e"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render.WithMatchingRules(body, tc.rules)
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
			if !json.Valid(got) || string(body) != `{"data":{"id":"7","text":"hi"}}` {
				t.Errorf("invalid JSON %s, or body changed to %s", got, body)
			}
		})
	}
	for _, bad := range []string{"", "}", `["x"]`, `{"data":{}}` + "\r\n"} {
		if got, err := render.WithMatchingRules([]byte(bad), nil); err == nil {
			t.Errorf("%q: got %s, want an error", bad, got)
		}
	}
}

// TestParseTweetQuery: a stored query reads back into the options it was
// made from; names it may not hold are reported in one plain error.
func TestParseTweetQuery(t *testing.T) {
	o, err := render.ParseTweetQuery("expansions=author_id,referenced_posts&post.fields=lang&tweet.fields=created_at&user.fields=created_at")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"id", "text", "lang", "created_at", "author_id", "referenced_tweets"} {
		if !o.Tweet.Has(f) {
			t.Errorf("tweet field %s not shown", f)
		}
	}
	if !o.User.Has("created_at") || !o.User.Has("username") || !o.Media.Has("media_key") || o.Tweet.Has("source") {
		t.Errorf("options %+v", o)
	}
	if !o.Expands(render.ExpandAuthor) || !o.Expands(render.ExpandReferenced) || len(o.Expand) != 2 {
		t.Errorf("expansions %v", o.Expand)
	}
	if o, err := render.ParseTweetQuery(""); err != nil || !o.Tweet.Has("edit_history_tweet_ids") || len(o.Expand) != 0 {
		t.Errorf("empty query: %+v, %v", o, err)
	}
	for _, tc := range []struct{ query, want string }{
		{"tweet.fields=lang,secret", "tweet.fields: unknown names secret"},
		{"expansions=nope", "expansions: unknown names nope"},
		{"backfill_minutes=2", "unknown parameter backfill_minutes"},
		{"tweet.fields=lang&tweet.fields=source", "parameter tweet.fields given 2 times"},
		{"user.fields=", "user.fields: unknown names "},
		{"tweet.fields=%zz", "invalid URL escape"},
	} {
		if _, err := render.ParseTweetQuery(tc.query); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want it to say %q", tc.query, err, tc.want)
		}
	}
}

// TestCanonicalQuery: parameter names sorted, lists in the order sent,
// each name once, parameters that are not fields or expansions left out.
func TestCanonicalQuery(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", ""},
		{"tweet.fields=lang,created_at&expansions=author_id", "expansions=author_id&tweet.fields=lang,created_at"},
		{"user.fields=name,name,id&post.fields=lang&backfill_minutes=3", "post.fields=lang&user.fields=name,id"},
		{"place.fields=id&poll.fields=options&media.fields=url&expansions=geo.place_id,author_id,geo.place_id",
			"expansions=geo.place_id,author_id&media.fields=url&place.fields=id&poll.fields=options"},
	}
	for _, tc := range tests {
		values, err := url.ParseQuery(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		got := render.CanonicalQuery(values)
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.raw, got, tc.want)
		}
		if _, err := render.ParseTweetQuery(got); err != nil {
			t.Errorf("%q: the canonical query does not read back: %v", tc.raw, err)
		}
	}
}

// TestMessages: a link's post is rendered for the public with its stored
// query and rules; a post the public may not see, or that does not exist,
// is no message.
func TestMessages(t *testing.T) {
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	now := time.Now()
	author := factory.User(t, db, &factory.UserOpts{Username: "render_author"})
	post := factory.Post(t, db, &factory.PostOpts{Author: author, Text: "hello @nobody", Lang: "en"})
	locked := factory.User(t, db, &factory.UserOpts{ProtectedAt: &now})
	hidden := factory.Post(t, db, &factory.PostOpts{Author: locked})
	gone := factory.Post(t, db, &factory.PostOpts{Author: author, DeletedAt: &now})
	repost := factory.Post(t, db, &factory.PostOpts{Author: author, RepostOf: hidden})

	m := render.Messages{Hydrator: &render.Hydrator{Store: db}}
	rules := []events.RuleHit{{AppID: 9, RuleID: 41, Tag: "greetings"}}
	got, err := m.Render(ctx, post.ID, "expansions=author_id&tweet.fields=lang", rules)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"data":{"id":"%d","text":"hello @nobody","edit_history_tweet_ids":["%d"],"author_id":"%d","lang":"en"},`+
		`"includes":{"users":[{"id":"%d","name":"Name of render_author","username":"render_author"}]},"matching_rules":[{"id":"41","tag":"greetings"}]}`,
		post.ID, post.ID, author.ID, author.ID)
	if string(got) != want {
		t.Errorf("message\n got %s\nwant %s", got, want)
	}

	// The same bytes as the stream's two steps.
	o, err := render.ParseTweetQuery("expansions=author_id&tweet.fields=lang")
	if err != nil {
		t.Fatal(err)
	}
	body, err := m.Hydrator.PostMessage(ctx, post.ID, o)
	if err != nil {
		t.Fatal(err)
	}
	line, err := render.WithMatchingRules(body, rules)
	if err != nil || !bytes.Equal(line, got) {
		t.Errorf("PostMessage + WithMatchingRules = %s, %v; Render %s", line, err, got)
	}

	for name, id := range map[string]int64{"protected author": hidden.ID, "deleted": gone.ID,
		"repost of a protected post": repost.ID, "unknown": post.ID + 1_000_000} {
		if got, err := m.Render(ctx, id, "", rules); err != nil || got != nil {
			t.Errorf("%s: %s, %v; want no message", name, got, err)
		}
	}
	if _, err := m.Render(ctx, post.ID, "tweet.fields=secret", rules); err == nil {
		t.Error("a query that does not parse rendered")
	}
}
