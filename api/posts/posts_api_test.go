package posts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// postsFixture is a bundle with an enterprise app beside the bundle's
// self-serve one, and a premium author.
type postsFixture struct {
	*apitest.Bundle
	enterprise    storage.App
	enterpriseTok storage.AccessToken // the reader's token of the enterprise app
}

func newPostsFixture(t *testing.T) *postsFixture {
	t.Helper()
	b := apitest.Setup(t, 100)
	ctx := t.Context()
	app, _ := apitest.NewApp(t, b.DB, "enterprise")
	app, err := b.DB.SetAppTier(ctx, app.ID, storage.TierEnterprise)
	if err != nil {
		t.Fatalf("set tier: %v", err)
	}
	tok, err := b.DB.EnsureAccessToken(ctx, app.ID, b.User.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	return &postsFixture{Bundle: b, enterprise: app, enterpriseTok: tok}
}

// callEnterprise sends a request signed by the enterprise app for the reader.
func (f *postsFixture) callEnterprise(t *testing.T, method, path string, body any) apitest.Reply {
	t.Helper()
	var raw []byte
	if body != nil {
		raw = apitest.JSONBody(body)
	}
	req, err := http.NewRequest(method, f.Srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := auth.SignRequest(req, "", f.enterprise.ConsumerKey, f.enterprise.ConsumerSecret, f.enterpriseTok.Token, f.enterpriseTok.Secret, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := apitest.Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(out)}
	_ = json.Unmarshal(out, &r.Body)
	return r
}

func metric(t *testing.T, b *apitest.Bundle, id, name string) float64 {
	t.Helper()
	r := b.Get(t, "/2/tweets/"+id+"?tweet.fields=public_metrics", b.Bearer)
	n, _ := apitest.Obj(r.Body, "data", "public_metrics", name).(float64)
	return n
}

func TestPostLookupFieldsAndExpansions(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	id := b.Create(t, "oauth:author", map[string]any{"text": "Hello @reader, see https://example.com/a #Go $GOOG and tell me what you think of this page"})
	r := b.Get(t, "/2/tweets/"+id+"?tweet.fields=author_id,created_at,entities,public_metrics,lang,conversation_id,edit_controls,source,referenced_tweets"+
		"&expansions=author_id,entities.mentions.username&user.fields=public_metrics,created_at", b.Bearer)
	d := r.Body["data"].(map[string]any)
	if d["id"] != id || d["author_id"] != fmt.Sprint(b.Author.ID) || d["conversation_id"] != id || d["lang"] != "en" || d["source"] != "first" {
		t.Errorf("data = %v", d)
	}
	if hist := apitest.Obj(d, "edit_history_tweet_ids"); fmt.Sprint(hist) != "["+id+"]" {
		t.Errorf("edit_history_tweet_ids = %v, want [%s] (a default field)", hist, id)
	}
	if apitest.Obj(d, "entities", "mentions", "0", "username") != "reader" || apitest.Obj(d, "entities", "mentions", "0", "id") != fmt.Sprint(b.User.ID) ||
		apitest.Obj(d, "entities", "hashtags", "0", "tag") != "Go" || apitest.Obj(d, "entities", "cashtags", "0", "tag") != "GOOG" ||
		apitest.Obj(d, "entities", "urls", "0", "expanded_url") != "https://example.com/a" {
		t.Errorf("entities = %v", d["entities"])
	}
	if apitest.Obj(d, "entities", "mentions", "0", "start") != float64(6) || apitest.Obj(d, "entities", "mentions", "0", "end") != float64(13) {
		t.Errorf("mention offsets = %v", apitest.Obj(d, "entities", "mentions", "0"))
	}
	if apitest.Obj(d, "public_metrics", "like_count") != float64(0) || apitest.Obj(d, "edit_controls", "edits_remaining") != float64(5) {
		t.Errorf("metrics / edit controls = %v %v", d["public_metrics"], d["edit_controls"])
	}
	users, _ := apitest.Obj(r.Body, "includes", "users").([]any)
	var names []string
	for _, u := range users {
		names = append(names, u.(map[string]any)["username"].(string))
		if apitest.Obj(u, "public_metrics", "tweet_count") == nil || apitest.Obj(u, "created_at") == nil {
			t.Errorf("included user lacks asked fields: %v", u)
		}
	}
	if !slices.Equal(names, []string{"author", "reader"}) {
		t.Errorf("includes.users = %v, want author then reader", names)
	}
	// Defaults only: no extra field.
	plain := b.Get(t, "/2/tweets/"+id, b.Bearer)
	if len(plain.Body["data"].(map[string]any)) != 3 || plain.Body["includes"] != nil {
		t.Errorf("default lookup = %s, want id, text, edit_history_tweet_ids only", plain.Raw)
	}
}

func TestPostLookupPartialErrors(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	kept := b.Create(t, "oauth:author", map[string]any{"text": "kept"})
	gone := b.Create(t, "oauth:author", map[string]any{"text": "gone"})
	if r := b.Call(t, "DELETE", "/2/tweets/"+gone, "oauth:author", "", nil); r.Status != 200 {
		t.Fatalf("delete: %d", r.Status)
	}
	shy := b.AddUser(t, "shy", storage.AccessReadWrite)
	hidden := b.Create(t, "oauth:shy", map[string]any{"text": "protected words"})
	if _, err := b.DB.SetUserState(t.Context(), shy.ID, "protected", time.Now()); err != nil {
		t.Fatal(err)
	}
	r := b.Get(t, "/2/tweets?ids="+strings.Join([]string{gone, kept, "42", hidden}, ","), b.Bearer)
	data, _ := r.Body["data"].([]any)
	if len(data) != 1 || apitest.Obj(data, "0", "id") != kept {
		t.Errorf("data = %v, want only %s", data, kept)
	}
	errs, _ := r.Body["errors"].([]any)
	want := []string{"resource-not-found " + gone, "resource-not-found 42", "not-authorized-for-resource " + hidden}
	var got []string
	for _, e := range errs {
		typ := apitest.Obj(e, "type").(string)
		got = append(got, typ[strings.LastIndex(typ, "/")+1:]+" "+apitest.Obj(e, "resource_id").(string))
		if apitest.Obj(e, "parameter") != "ids" {
			t.Errorf("error %v does not name ids", e)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors = %v, want %v", got, want)
	}
	// The protected author sees their own post.
	if r := b.Get(t, "/2/tweets/"+hidden, "oauth:shy"); apitest.Obj(r.Body, "data", "id") != hidden {
		t.Errorf("protected author's own lookup = %s", r.Raw)
	}
	// A single unknown post is a 200 with only its error, as on the platform.
	if r := b.Get(t, "/2/tweets/42", b.Bearer); r.Body["data"] != nil || apitest.Obj(r.Body, "errors", "0", "title") != "Not Found Error" {
		t.Errorf("GET unknown = %s", r.Raw)
	}
}

func TestPostLookupRejects(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	many := strings.TrimSuffix(strings.Repeat("1,", 101), ",")
	tests := []struct {
		name, path string
		params     []string
	}{
		{"no ids", "/2/tweets", []string{"ids"}},
		{"101 ids", "/2/tweets?ids=" + many, []string{"ids"}},
		{"malformed id", "/2/tweets?ids=1,x2", []string{"ids"}},
		{"empty item", "/2/tweets?ids=1,,2", []string{"ids"}},
		{"unknown field and expansion", "/2/tweets/1?tweet.fields=id,secret&expansions=author_id,nope", []string{"expansions", "tweet.fields"}},
		{"unknown user field", "/2/tweets/1?user.fields=password", []string{"user.fields"}},
		{"empty expansions", "/2/tweets/1?expansions=", []string{"expansions"}},
		{"unknown parameter", "/2/tweets/1?max_results=5", []string{"max_results"}},
		{"malformed path id", "/2/tweets/12a", []string{"id"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Call(t, "GET", tc.path, b.Bearer, "", nil)
			if r.Status != 400 || !strings.HasSuffix(r.Body["type"].(string), "invalid-request") {
				t.Fatalf("%d %s, want 400 invalid-request", r.Status, r.Raw)
			}
			if got := apitest.ParamNames(r.Body); !slices.Equal(got, tc.params) {
				t.Errorf("parameters = %v, want %v", got, tc.params)
			}
		})
	}
}

func TestRepliesQuotesAndTheirRules(t *testing.T) {
	t.Parallel()
	f := newPostsFixture(t)
	quiet := f.Create(t, "oauth:author", map[string]any{"text": "no one summoned"})
	summon := f.Create(t, "oauth:author", map[string]any{"text": "what do you think @reader?"})
	reply := func(parent string) map[string]any {
		return map[string]any{"text": "my reply", "reply": map[string]any{"in_reply_to_tweet_id": parent}}
	}
	// Self-serve: replying unsummoned is refused, summoned is allowed.
	r := f.Call(t, "POST", "/2/tweets", "oauth:reader", "application/json", apitest.JSONBody(reply(quiet)))
	if r.Status != 403 || !strings.HasSuffix(r.Body["type"].(string), "not-authorized-for-resource") || r.Body["resource_id"] != quiet {
		t.Errorf("unsummoned reply = %d %s", r.Status, r.Raw)
	}
	replied := f.Create(t, "oauth:reader", reply(summon))
	got := f.Get(t, "/2/tweets/"+replied+"?tweet.fields=conversation_id,in_reply_to_user_id,referenced_tweets", f.Bearer).Body["data"].(map[string]any)
	if got["conversation_id"] != summon || got["in_reply_to_user_id"] != fmt.Sprint(f.Author.ID) || fmt.Sprint(got["referenced_tweets"]) != "[map[id:"+summon+" type:replied_to]]" {
		t.Errorf("reply = %v", got)
	}
	// A reply to the reply stays in the conversation; threads on one's own posts are allowed.
	thread := f.Create(t, "oauth:reader", reply(replied))
	if c := f.Get(t, "/2/tweets/"+thread+"?tweet.fields=conversation_id", f.Bearer).Body["data"].(map[string]any)["conversation_id"]; c != summon {
		t.Errorf("thread conversation = %v, want %s", c, summon)
	}
	if n := metric(t, f.Bundle, summon, "reply_count"); n != 1 {
		t.Errorf("reply_count = %v, want 1", n)
	}
	// Enterprise apps are not restricted; quotes need one.
	if r := f.callEnterprise(t, "POST", "/2/tweets", reply(quiet)); r.Status != 201 {
		t.Errorf("enterprise reply = %d %s", r.Status, r.Raw)
	}
	quote := map[string]any{"text": "quoting", "quote_tweet_id": quiet}
	if r := f.Call(t, "POST", "/2/tweets", "oauth:reader", "application/json", apitest.JSONBody(quote)); r.Status != 403 {
		t.Errorf("self-serve quote = %d %s, want 403", r.Status, r.Raw)
	}
	if r := f.callEnterprise(t, "POST", "/2/tweets", quote); r.Status != 201 {
		t.Errorf("enterprise quote = %d %s", r.Status, r.Raw)
	}
	if n := metric(t, f.Bundle, quiet, "quote_count"); n != 1 {
		t.Errorf("quote_count = %v, want 1", n)
	}
	// Bad references change nothing.
	for name, body := range map[string]any{
		"unknown parent":   reply("42"),
		"malformed parent": reply("x"),
		"unknown quote":    map[string]any{"text": "q", "quote_tweet_id": "42"},
		"two cashtags":     map[string]any{"text": "$AAPL $GOOG"},
	} {
		if r := f.Call(t, "POST", "/2/tweets", "oauth:reader", "application/json", apitest.JSONBody(body)); r.Status != 400 {
			t.Errorf("%s = %d %s, want 400", name, r.Status, r.Raw)
		}
	}
	if n := metric(t, f.Bundle, quiet, "reply_count"); n != 1 {
		t.Errorf("reply_count after refusals = %v, want 1 (the enterprise reply)", n)
	}
}

func TestEditRules(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	first := b.Create(t, "oauth:author", map[string]any{"text": "first"})
	edit := func(prev, text string) apitest.Reply {
		return b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json",
			apitest.JSONBody(map[string]any{"text": text, "edit_options": map[string]any{"previous_post_id": prev}}))
	}
	if r := edit(first, "not premium"); r.Status != 403 {
		t.Fatalf("edit by a non-premium author = %d %s", r.Status, r.Raw)
	}
	if err := b.DB.SetUserFlag(t.Context(), b.Author.ID, "premium", true); err != nil {
		t.Fatal(err)
	}
	chain := []string{first}
	for i := 1; i <= 5; i++ {
		r := edit(chain[len(chain)-1], fmt.Sprintf("edit %d", i))
		if r.Status != 201 {
			t.Fatalf("edit %d = %d %s", i, r.Status, r.Raw)
		}
		chain = append(chain, apitest.Obj(r.Body, "data", "id").(string))
		if hist := fmt.Sprint(apitest.Obj(r.Body, "data", "edit_history_tweet_ids")); hist != fmt.Sprint(toAny(chain)) {
			t.Errorf("edit %d history = %s, want %v", i, hist, chain)
		}
	}
	if r := edit(chain[5], "sixth"); r.Status != 400 || apitest.ParamNames(r.Body)[0] != "edit_options.previous_post_id" {
		t.Errorf("sixth edit = %d %s", r.Status, r.Raw)
	}
	if r := edit(first, "old version"); r.Status != 400 {
		t.Errorf("edit of a superseded version = %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "POST", "/2/tweets", "oauth:reader", "application/json",
		apitest.JSONBody(map[string]any{"text": "x", "edit_options": map[string]any{"previous_post_id": chain[5]}})); r.Status != 403 {
		t.Errorf("edit of another's post = %d %s", r.Status, r.Raw)
	}
	old := b.Get(t, "/2/tweets/"+first+"?tweet.fields=edit_controls", b.Bearer).Body["data"].(map[string]any)
	if fmt.Sprint(old["edit_history_tweet_ids"]) != fmt.Sprint(toAny(chain)) || apitest.Obj(old, "edit_controls", "is_edit_eligible") != false {
		t.Errorf("first version = %v", old)
	}
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func TestLikesAndReposts(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	id := b.Create(t, "oauth:author", map[string]any{"text": "like me"})
	me := fmt.Sprint(b.User.ID)
	for range 2 {
		r := b.Call(t, "POST", "/2/users/"+me+"/likes", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{"tweet_id": id}))
		if r.Status != 200 || apitest.Obj(r.Body, "data", "liked") != true {
			t.Fatalf("like = %d %s", r.Status, r.Raw)
		}
	}
	if n := metric(t, b, id, "like_count"); n != 1 {
		t.Errorf("like_count after two likes = %v, want 1", n)
	}
	if r := b.Call(t, "DELETE", "/2/users/"+me+"/likes/"+id, "oauth:reader", "", nil); r.Status != 200 || apitest.Obj(r.Body, "data", "liked") != false {
		t.Errorf("unlike = %d %s", r.Status, r.Raw)
	}
	if n := metric(t, b, id, "like_count"); n != 0 {
		t.Errorf("like_count after unlike = %v", n)
	}
	r := b.Call(t, "POST", "/2/users/"+me+"/retweets", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{"tweet_id": id}))
	if r.Status != 200 || apitest.Obj(r.Body, "data", "retweeted") != true {
		t.Fatalf("repost = %d %s", r.Status, r.Raw)
	}
	rest := apitest.Obj(r.Body, "data", "rest_id").(string)
	repost := b.Get(t, "/2/tweets/"+rest+"?tweet.fields=referenced_tweets&expansions=referenced_tweets.id", b.Bearer)
	if apitest.Obj(repost.Body, "data", "text") != "RT @author: like me" || apitest.Obj(repost.Body, "data", "referenced_tweets", "0", "type") != "retweeted" ||
		apitest.Obj(repost.Body, "includes", "tweets", "0", "id") != id {
		t.Errorf("repost = %s", repost.Raw)
	}
	if n := metric(t, b, id, "retweet_count"); n != 1 {
		t.Errorf("retweet_count = %v", n)
	}
	if r := b.Call(t, "DELETE", "/2/users/"+me+"/retweets/"+id, "oauth:reader", "", nil); r.Status != 200 || apitest.Obj(r.Body, "data", "retweeted") != false {
		t.Errorf("unrepost = %d %s", r.Status, r.Raw)
	}
	if n := metric(t, b, id, "retweet_count"); n != 0 {
		t.Errorf("retweet_count after unrepost = %v", n)
	}
	// Acting as someone else, or on a missing post, changes nothing.
	other := fmt.Sprint(b.Author.ID)
	if r := b.Call(t, "POST", "/2/users/"+other+"/likes", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{"tweet_id": id})); r.Status != 403 {
		t.Errorf("like as another user = %d", r.Status)
	}
	if r := b.Call(t, "POST", "/2/users/"+me+"/likes", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{"tweet_id": "42"})); r.Status != 400 {
		t.Errorf("like of a missing post = %d", r.Status)
	}
	if r := b.Call(t, "POST", "/2/users/"+me+"/likes", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{})); r.Status != 400 {
		t.Errorf("like without tweet_id = %d", r.Status)
	}
	if r := b.Call(t, "POST", "/2/users/"+me+"/likes", b.Bearer, "application/json", apitest.JSONBody(map[string]any{"tweet_id": id})); r.Status != 403 {
		t.Errorf("like with a bearer token = %d", r.Status)
	}
}

func profileChange(description *string, pinned *int64) postgres.ProfileChange {
	return postgres.ProfileChange{Description: description, PinnedPostID: pinned}
}

func TestPostTextAndMediaExpansion(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	photo := apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"})
	id := b.Create(t, "oauth:author", map[string]any{"text": "look", "media": map[string]any{"media_ids": []string{fmt.Sprint(photo.ID)}}})
	r := b.Get(t, "/2/tweets/"+id+"?tweet.fields=attachments&expansions=attachments.media_keys&media.fields=width,height", b.Bearer)
	if apitest.Obj(r.Body, "data", "attachments", "media_keys", "0") != photo.Key || apitest.Obj(r.Body, "includes", "media", "0", "media_key") != photo.Key ||
		apitest.Obj(r.Body, "includes", "media", "0", "type") != "photo" || apitest.Obj(r.Body, "includes", "media", "0", "width") != float64(64) {
		t.Errorf("media expansion = %s", r.Raw)
	}
	// Weighted length: CJK counts 2, a URL 23 whatever its length.
	for text, status := range map[string]int{
		strings.Repeat("漢", 140): 201,
		strings.Repeat("漢", 141): 400,
		strings.Repeat("a", 256) + " https://example.com/" + strings.Repeat("p", 300): 201,
		strings.Repeat("a", 257) + " https://example.com/":                            400,
	} {
		if r := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": text})); r.Status != status {
			t.Errorf("text of %d runes = %d %s, want %d", len([]rune(text)), r.Status, r.Raw, status)
		}
	}
}

func TestEditWindowCloses(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	if err := b.DB.SetUserFlag(t.Context(), b.Author.ID, "premium", true); err != nil {
		t.Fatal(err)
	}
	old := factory.Post(t, b.DB, &factory.PostOpts{Author: b.Author, Text: "old", CreatedAt: time.Now().Add(-61 * time.Minute)})
	r := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json",
		apitest.JSONBody(map[string]any{"text": "too late", "edit_options": map[string]any{"previous_post_id": fmt.Sprint(old.ID)}}))
	if r.Status != 400 || !strings.Contains(r.Raw, "edit window") || apitest.ParamNames(r.Body)[0] != "edit_options.previous_post_id" {
		t.Errorf("edit after the window = %d %s", r.Status, r.Raw)
	}
	if got := b.Get(t, "/2/tweets/"+fmt.Sprint(old.ID), b.Bearer); fmt.Sprint(apitest.Obj(got.Body, "data", "edit_history_tweet_ids")) != fmt.Sprintf("[%d]", old.ID) {
		t.Errorf("refused edit changed the chain: %s", got.Raw)
	}
}

// TestRepostsFollowTheirOriginal: a repost shows its original's text, so
// it is shown only while the original is; expansions add only what was
// asked for.
func TestRepostsFollowTheirOriginal(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	id := b.Create(t, "oauth:author", map[string]any{"text": "soon protected"})
	r := b.Call(t, "POST", "/2/users/"+fmt.Sprint(b.User.ID)+"/retweets", "oauth:reader", "application/json", apitest.JSONBody(map[string]any{"tweet_id": id}))
	if r.Status != 200 {
		t.Fatalf("repost: %d %s", r.Status, r.Raw)
	}
	rest := apitest.Obj(r.Body, "data", "rest_id").(string)
	authorOnly := b.Get(t, "/2/tweets/"+rest+"?tweet.fields=referenced_tweets&expansions=referenced_tweets.id.author_id", b.Bearer)
	if apitest.Obj(authorOnly.Body, "includes", "users", "0", "username") != "author" || apitest.Obj(authorOnly.Body, "includes", "tweets") != nil {
		t.Errorf("referenced_tweets.id.author_id alone = %s, want the author and no post", authorOnly.Raw)
	}
	if _, err := b.DB.SetUserState(t.Context(), b.Author.ID, "protected", time.Now()); err != nil {
		t.Fatal(err)
	}
	hidden := b.Get(t, "/2/tweets?ids="+rest, b.Bearer)
	if hidden.Body["data"] != nil || !strings.HasSuffix(apitest.Obj(hidden.Body, "errors", "0", "type").(string), "not-authorized-for-resource") {
		t.Errorf("repost of a protected author's post = %s", hidden.Raw)
	}
	if own := b.Get(t, "/2/tweets/"+rest, "oauth:author"); apitest.Obj(own.Body, "data", "id") != rest {
		t.Errorf("the protected author sees the repost of their post: %s", own.Raw)
	}
	twice := b.Get(t, "/2/users?ids="+fmt.Sprint(b.User.ID)+","+fmt.Sprint(b.User.ID), b.Bearer)
	if n := len(twice.Body["data"].([]any)); n != 1 {
		t.Errorf("a repeated user id is shown %d times", n)
	}
}
