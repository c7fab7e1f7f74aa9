package posts_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apitest"
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
	b := apitest.Setup(t, 100)
	id := b.Create(t, "oauth:author", map[string]any{"text": "post fields are here"})
	author := fmt.Sprint(b.Author.ID)

	one := b.Get(t, "/2/tweets/"+id+"?post.fields=author_id,created_at", b.Bearer)
	if apitest.Obj(one.Body, "data", "author_id") != author || apitest.Obj(one.Body, "data", "created_at") == nil || apitest.Obj(one.Body, "data", "lang") != nil {
		t.Errorf("GET /2/tweets/{id}?post.fields = %d %s", one.Status, one.Raw)
	}
	many := b.Get(t, "/2/tweets?ids="+id+"&post.fields=lang&tweet.fields=source,lang", b.Bearer)
	if d := apitest.Obj(many.Body, "data", "0"); apitest.Obj(d, "lang") != "en" || apitest.Obj(d, "source") == nil || apitest.Obj(d, "author_id") != nil {
		t.Errorf("both names = %d %s, want lang and source", many.Status, many.Raw)
	}
	pin(t, b, b.Author.ID, id)
	me := b.Get(t, "/2/users/me?expansions=pinned_tweet_id&post.fields=created_at", "oauth:author")
	if apitest.Obj(me.Body, "includes", "tweets", "0", "id") != id || apitest.Obj(me.Body, "includes", "tweets", "0", "created_at") == nil {
		t.Errorf("users/me with post.fields = %d %s", me.Status, me.Raw)
	}
	apitest.WaitSettled()
	found := b.Get(t, "/2/tweets/search/recent?query=fields&post.fields=author_id", b.Bearer)
	if apitest.Obj(found.Body, "data", "0", "id") != id || apitest.Obj(found.Body, "data", "0", "author_id") != author {
		t.Errorf("search with post.fields = %d %s", found.Status, found.Raw)
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
			r := b.Call(t, "GET", tc.path, map[bool]string{true: "oauth:author", false: b.Bearer}[strings.HasPrefix(tc.path, "/2/users/me")], "", nil)
			if r.Status != 400 || !strings.HasSuffix(fmt.Sprint(r.Body["type"]), "invalid-request") {
				t.Fatalf("%d %s, want 400 invalid-request", r.Status, r.Raw)
			}
			names := apitest.ParamNames(r.Body)
			slices.Sort(names)
			if strings.Join(names, ",") != tc.params {
				t.Errorf("parameters = %v, want %s", names, tc.params)
			}
			for _, e := range r.Body["errors"].([]any) {
				msg := fmt.Sprint(apitest.Obj(e, "message"))
				for name := range apitest.Obj(e, "parameters").(map[string]any) {
					if !strings.Contains(msg, name) {
						t.Errorf("message %q does not name %s", msg, name)
					}
				}
			}
		})
	}
	// The official SDK's error: the value it sent, under post.fields.
	bad := b.Call(t, "GET", "/2/tweets/"+id+"?post.fields=secret", b.Bearer, "", nil)
	if fmt.Sprint(apitest.Obj(bad.Body, "errors", "0", "parameters", "post.fields")) != "[secret]" ||
		!strings.Contains(fmt.Sprint(apitest.Obj(bad.Body, "errors", "0", "message")), "`post.fields`") {
		t.Errorf("bad post.fields = %s", bad.Raw)
	}
}

// TestExpansionLinks: every expansion brings the field linking the post
// (in data and in includes.tweets) or user to what it added to includes,
// although the fields parameters did not ask for it, so a client can join
// them.
func TestExpansionLinks(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	photo := apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"})
	parent := b.Create(t, "oauth:reader", map[string]any{"text": "@author parent post", "geo": map[string]any{"place_id": "5a110d312052166f"}})
	id := b.Create(t, "oauth:author", map[string]any{"text": "@reader look #tag",
		"reply": map[string]any{"in_reply_to_tweet_id": parent},
		"media": map[string]any{"media_ids": []string{fmt.Sprint(photo.ID)}},
		"geo":   map[string]any{"place_id": "01a9a39529b27f36"}})
	author, reader := fmt.Sprint(b.Author.ID), fmt.Sprint(b.User.ID)

	r := b.Get(t, "/2/tweets/"+id+"?expansions=author_id,referenced_tweets.id,referenced_tweets.id.author_id,in_reply_to_user_id,"+
		"attachments.media_keys,attachments.poll_ids,geo.place_id,entities.mentions.username,edit_history_tweet_ids", b.Bearer)
	d := r.Body["data"].(map[string]any)
	if d["author_id"] != author || d["in_reply_to_user_id"] != reader || apitest.Obj(d, "attachments", "media_keys", "0") != photo.Key ||
		apitest.Obj(d, "geo", "place_id") != "01a9a39529b27f36" || apitest.Obj(d, "entities", "mentions", "0", "username") != "reader" ||
		fmt.Sprint(d["edit_history_tweet_ids"]) != "["+id+"]" {
		t.Errorf("data = %v, want every link", d)
	}
	if apitest.Obj(d, "entities", "hashtags") != nil || d["created_at"] != nil || d["lang"] != nil {
		t.Errorf("data = %v: more than the links", d)
	}
	if apitest.Obj(d, "referenced_tweets", "0", "type") != "replied_to" || apitest.Obj(d, "referenced_tweets", "0", "id") != parent {
		t.Errorf("referenced_tweets = %v", d["referenced_tweets"])
	}
	// Join data and includes by those links.
	users := map[string]bool{}
	for _, u := range apitest.Obj(r.Body, "includes", "users").([]any) {
		users[apitest.Obj(u, "id").(string)] = true
	}
	tweets := map[string]map[string]any{}
	for _, p := range apitest.Obj(r.Body, "includes", "tweets").([]any) {
		tweets[apitest.Obj(p, "id").(string)] = p.(map[string]any)
	}
	if !users[author] || !users[reader] || tweets[parent] == nil ||
		apitest.Obj(r.Body, "includes", "media", "0", "media_key") != photo.Key {
		t.Errorf("includes = %v", r.Body["includes"])
	}
	// Included posts carry the links too: their authors (referenced_tweets.id.author_id), their place, their mentions.
	if q := tweets[parent]; q["author_id"] != reader || apitest.Obj(q, "geo", "place_id") != "5a110d312052166f" ||
		apitest.Obj(q, "entities", "mentions", "0", "username") != "author" {
		t.Errorf("included parent post = %v, want its author_id, geo and mentions", q)
	}

	// One expansion, one link.
	alone := b.Get(t, "/2/tweets?ids="+id+"&expansions=author_id", b.Bearer)
	if a := apitest.Obj(alone.Body, "data", "0").(map[string]any); a["author_id"] != author || a["referenced_tweets"] != nil || a["attachments"] != nil {
		t.Errorf("expansions=author_id data = %v", a)
	}
	// The description's spellings link the same way.
	desc := b.Get(t, "/2/tweets/"+id+"?expansions=referenced_posts&post.fields=lang", b.Bearer)
	if apitest.Obj(desc.Body, "data", "referenced_tweets", "0", "id") == nil || apitest.Obj(desc.Body, "data", "lang") == nil {
		t.Errorf("expansions=referenced_posts = %s", desc.Raw)
	}
	// Users: pinned_tweet_id brings the user's pinned_tweet_id.
	pin(t, b, b.Author.ID, id)
	u := b.Get(t, "/2/users/"+author+"?expansions=pinned_tweet_id", b.Bearer)
	if apitest.Obj(u.Body, "data", "pinned_tweet_id") != id || apitest.Obj(u.Body, "includes", "tweets", "0", "id") != id {
		t.Errorf("user with expansions=pinned_tweet_id = %s", u.Raw)
	}
	// Search answers the same.
	apitest.WaitSettled()
	s := b.Get(t, "/2/tweets/search/recent?query=look&expansions=author_id,attachments.media_keys", b.Bearer)
	if apitest.Obj(s.Body, "data", "0", "author_id") != author || apitest.Obj(s.Body, "data", "0", "attachments", "media_keys", "0") != photo.Key {
		t.Errorf("search with expansions = %s", s.Raw)
	}
}

// pin makes post the pinned post of user.
func pin(t *testing.T, b *apitest.Bundle, user int64, post string) {
	t.Helper()
	id := apitest.PostIDOf(t, post)
	if _, err := b.DB.SetUserProfile(t.Context(), user, profileChange(nil, &id)); err != nil {
		t.Fatal(err)
	}
}
