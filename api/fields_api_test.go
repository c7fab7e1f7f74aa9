package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestPostFieldsParameter: post.fields, the description's name of
// tweet.fields, is read on every endpoint answering with posts (lookups,
// search, the pinned posts of user lookups); given both names, the post
// shows their union; a bad value is an invalid-request naming the
// parameter the client sent.
func TestPostFieldsParameter(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	id := b.create(t, "oauth:author", map[string]any{"text": "post fields are here"})
	author := fmt.Sprint(b.author.ID)

	one := b.get(t, "/2/tweets/"+id+"?post.fields=author_id,created_at", b.bearer)
	if obj(one.body, "data", "author_id") != author || obj(one.body, "data", "created_at") == nil || obj(one.body, "data", "lang") != nil {
		t.Errorf("GET /2/tweets/{id}?post.fields = %d %s", one.status, one.raw)
	}
	many := b.get(t, "/2/tweets?ids="+id+"&post.fields=lang&tweet.fields=source,lang", b.bearer)
	if d := obj(many.body, "data", "0"); obj(d, "lang") != "en" || obj(d, "source") == nil || obj(d, "author_id") != nil {
		t.Errorf("both names = %d %s, want lang and source", many.status, many.raw)
	}
	pin(t, b, b.author.ID, id)
	me := b.get(t, "/2/users/me?expansions=pinned_tweet_id&post.fields=created_at", "oauth:author")
	if obj(me.body, "includes", "tweets", "0", "id") != id || obj(me.body, "includes", "tweets", "0", "created_at") == nil {
		t.Errorf("users/me with post.fields = %d %s", me.status, me.raw)
	}
	waitSettled()
	found := b.get(t, "/2/tweets/search/recent?query=fields&post.fields=author_id", b.bearer)
	if obj(found.body, "data", "0", "id") != id || obj(found.body, "data", "0", "author_id") != author {
		t.Errorf("search with post.fields = %d %s", found.status, found.raw)
	}

	for _, tc := range []struct{ name, path, params string }{
		{"post.fields", "/2/tweets/" + id + "?post.fields=author_id,secret", "post.fields"},
		{"tweet.fields", "/2/tweets?ids=" + id + "&tweet.fields=secret", "tweet.fields"},
		{"both, one bad", "/2/tweets/" + id + "?tweet.fields=lang&post.fields=secret", "post.fields"},
		{"both bad", "/2/tweets/search/recent?query=a&tweet.fields=hidden&post.fields=secret", "post.fields,tweet.fields"},
		{"empty", "/2/users/me?post.fields=", "post.fields"},
		{"repeated", "/2/tweets/" + id + "?post.fields=lang&post.fields=source", "post.fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.call(t, "GET", tc.path, map[bool]string{true: "oauth:author", false: b.bearer}[strings.HasPrefix(tc.path, "/2/users/me")], "", nil)
			if r.status != 400 || !strings.HasSuffix(fmt.Sprint(r.body["type"]), "invalid-request") {
				t.Fatalf("%d %s, want 400 invalid-request", r.status, r.raw)
			}
			names := paramNames(r.body)
			slices.Sort(names)
			if strings.Join(names, ",") != tc.params {
				t.Errorf("parameters = %v, want %s", names, tc.params)
			}
			for _, e := range r.body["errors"].([]any) {
				msg := fmt.Sprint(obj(e, "message"))
				for name := range obj(e, "parameters").(map[string]any) {
					if !strings.Contains(msg, name) {
						t.Errorf("message %q does not name %s", msg, name)
					}
				}
			}
		})
	}
	// The official SDK's error: the value it sent, under post.fields.
	bad := b.call(t, "GET", "/2/tweets/"+id+"?post.fields=secret", b.bearer, "", nil)
	if fmt.Sprint(obj(bad.body, "errors", "0", "parameters", "post.fields")) != "[secret]" ||
		!strings.Contains(fmt.Sprint(obj(bad.body, "errors", "0", "message")), "`post.fields`") {
		t.Errorf("bad post.fields = %s", bad.raw)
	}
}

// TestExpansionLinks: every expansion brings the field linking the post
// (in data and in includes.tweets) or user to what it added to includes,
// although the fields parameters did not ask for it, so a client can join
// them.
func TestExpansionLinks(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	photo := succeededMedia(t, b.db, b.author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"})
	parent := b.create(t, "oauth:reader", map[string]any{"text": "@author parent post", "geo": map[string]any{"place_id": "5a110d312052166f"}})
	id := b.create(t, "oauth:author", map[string]any{"text": "@reader look #tag",
		"reply": map[string]any{"in_reply_to_tweet_id": parent},
		"media": map[string]any{"media_ids": []string{fmt.Sprint(photo.ID)}},
		"geo":   map[string]any{"place_id": "01a9a39529b27f36"}})
	author, reader := fmt.Sprint(b.author.ID), fmt.Sprint(b.user.ID)

	r := b.get(t, "/2/tweets/"+id+"?expansions=author_id,referenced_tweets.id,referenced_tweets.id.author_id,in_reply_to_user_id,"+
		"attachments.media_keys,attachments.poll_ids,geo.place_id,entities.mentions.username,edit_history_tweet_ids", b.bearer)
	d := r.body["data"].(map[string]any)
	if d["author_id"] != author || d["in_reply_to_user_id"] != reader || obj(d, "attachments", "media_keys", "0") != photo.Key ||
		obj(d, "geo", "place_id") != "01a9a39529b27f36" || obj(d, "entities", "mentions", "0", "username") != "reader" ||
		fmt.Sprint(d["edit_history_tweet_ids"]) != "["+id+"]" {
		t.Errorf("data = %v, want every link", d)
	}
	if obj(d, "entities", "hashtags") != nil || d["created_at"] != nil || d["lang"] != nil {
		t.Errorf("data = %v: more than the links", d)
	}
	if obj(d, "referenced_tweets", "0", "type") != "replied_to" || obj(d, "referenced_tweets", "0", "id") != parent {
		t.Errorf("referenced_tweets = %v", d["referenced_tweets"])
	}
	// Join data and includes by those links.
	users := map[string]bool{}
	for _, u := range obj(r.body, "includes", "users").([]any) {
		users[obj(u, "id").(string)] = true
	}
	tweets := map[string]map[string]any{}
	for _, p := range obj(r.body, "includes", "tweets").([]any) {
		tweets[obj(p, "id").(string)] = p.(map[string]any)
	}
	if !users[author] || !users[reader] || tweets[parent] == nil ||
		obj(r.body, "includes", "media", "0", "media_key") != photo.Key {
		t.Errorf("includes = %v", r.body["includes"])
	}
	// Included posts carry the links too: their authors (referenced_tweets.id.author_id), their place, their mentions.
	if q := tweets[parent]; q["author_id"] != reader || obj(q, "geo", "place_id") != "5a110d312052166f" ||
		obj(q, "entities", "mentions", "0", "username") != "author" {
		t.Errorf("included parent post = %v, want its author_id, geo and mentions", q)
	}

	// One expansion, one link.
	alone := b.get(t, "/2/tweets?ids="+id+"&expansions=author_id", b.bearer)
	if a := obj(alone.body, "data", "0").(map[string]any); a["author_id"] != author || a["referenced_tweets"] != nil || a["attachments"] != nil {
		t.Errorf("expansions=author_id data = %v", a)
	}
	// The description's spellings link the same way.
	desc := b.get(t, "/2/tweets/"+id+"?expansions=referenced_posts&post.fields=lang", b.bearer)
	if obj(desc.body, "data", "referenced_tweets", "0", "id") == nil || obj(desc.body, "data", "lang") == nil {
		t.Errorf("expansions=referenced_posts = %s", desc.raw)
	}
	// Users: pinned_tweet_id brings the user's pinned_tweet_id.
	pin(t, b, b.author.ID, id)
	u := b.get(t, "/2/users/"+author+"?expansions=pinned_tweet_id", b.bearer)
	if obj(u.body, "data", "pinned_tweet_id") != id || obj(u.body, "includes", "tweets", "0", "id") != id {
		t.Errorf("user with expansions=pinned_tweet_id = %s", u.raw)
	}
	// Search answers the same.
	waitSettled()
	s := b.get(t, "/2/tweets/search/recent?query=look&expansions=author_id,attachments.media_keys", b.bearer)
	if obj(s.body, "data", "0", "author_id") != author || obj(s.body, "data", "0", "attachments", "media_keys", "0") != photo.Key {
		t.Errorf("search with expansions = %s", s.raw)
	}
}

// pin makes post the pinned post of user.
func pin(t *testing.T, b *bundle, user int64, post string) {
	t.Helper()
	id := postIDOf(t, post)
	if _, err := b.db.SetUserProfile(t.Context(), user, profileChange(nil, &id)); err != nil {
		t.Fatal(err)
	}
}
