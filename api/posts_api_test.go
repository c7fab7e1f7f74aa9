package api_test

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

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// postsFixture is a bundle with an enterprise app beside the bundle's
// self-serve one, and a premium author.
type postsFixture struct {
	*bundle
	enterprise    storage.App
	enterpriseTok storage.AccessToken // the reader's token of the enterprise app
}

func newPostsFixture(t *testing.T) *postsFixture {
	t.Helper()
	b := setup(t, 100)
	ctx := t.Context()
	app, _ := newApp(t, b.db, "enterprise")
	app, err := b.db.SetAppTier(ctx, app.ID, storage.TierEnterprise)
	if err != nil {
		t.Fatalf("set tier: %v", err)
	}
	tok, err := b.db.EnsureAccessToken(ctx, app.ID, b.user.ID, storage.AccessReadWrite)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	return &postsFixture{bundle: b, enterprise: app, enterpriseTok: tok}
}

// callEnterprise sends a request signed by the enterprise app for the reader.
func (f *postsFixture) callEnterprise(t *testing.T, method, path string, body any) reply {
	t.Helper()
	var raw []byte
	if body != nil {
		raw = jsonBody(body)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, bytes.NewReader(raw))
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
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(out)}
	_ = json.Unmarshal(out, &r.body)
	return r
}

// create posts body as authz and returns the new post's id.
func (b *bundle) create(t *testing.T, authz string, body any) string {
	t.Helper()
	r := b.call(t, "POST", "/2/tweets", authz, "application/json", jsonBody(body))
	if r.status != 201 {
		t.Fatalf("create %v as %s: %d %s", body, authz, r.status, r.raw)
	}
	return r.body["data"].(map[string]any)["id"].(string)
}

func (b *bundle) get(t *testing.T, path, authz string) reply {
	t.Helper()
	r := b.call(t, "GET", path, authz, "", nil)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
	}
	return r
}

// obj walks a decoded JSON body: obj(body, "data", "0", "id").
func obj(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			fmt.Sscan(p, &i)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func metric(t *testing.T, b *bundle, id, name string) float64 {
	t.Helper()
	r := b.get(t, "/2/tweets/"+id+"?tweet.fields=public_metrics", b.bearer)
	n, _ := obj(r.body, "data", "public_metrics", name).(float64)
	return n
}

func TestPostLookupFieldsAndExpansions(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	id := b.create(t, "oauth:author", map[string]any{"text": "Hello @reader, see https://example.com/a #Go $GOOG and tell me what you think of this page"})
	r := b.get(t, "/2/tweets/"+id+"?tweet.fields=author_id,created_at,entities,public_metrics,lang,conversation_id,edit_controls,source,referenced_tweets"+
		"&expansions=author_id,entities.mentions.username&user.fields=public_metrics,created_at", b.bearer)
	d := r.body["data"].(map[string]any)
	if d["id"] != id || d["author_id"] != fmt.Sprint(b.author.ID) || d["conversation_id"] != id || d["lang"] != "en" || d["source"] != "first" {
		t.Errorf("data = %v", d)
	}
	if hist := obj(d, "edit_history_tweet_ids"); fmt.Sprint(hist) != "["+id+"]" {
		t.Errorf("edit_history_tweet_ids = %v, want [%s] (a default field)", hist, id)
	}
	if obj(d, "entities", "mentions", "0", "username") != "reader" || obj(d, "entities", "mentions", "0", "id") != fmt.Sprint(b.user.ID) ||
		obj(d, "entities", "hashtags", "0", "tag") != "Go" || obj(d, "entities", "cashtags", "0", "tag") != "GOOG" ||
		obj(d, "entities", "urls", "0", "expanded_url") != "https://example.com/a" {
		t.Errorf("entities = %v", d["entities"])
	}
	if obj(d, "entities", "mentions", "0", "start") != float64(6) || obj(d, "entities", "mentions", "0", "end") != float64(13) {
		t.Errorf("mention offsets = %v", obj(d, "entities", "mentions", "0"))
	}
	if obj(d, "public_metrics", "like_count") != float64(0) || obj(d, "edit_controls", "edits_remaining") != float64(5) {
		t.Errorf("metrics / edit controls = %v %v", d["public_metrics"], d["edit_controls"])
	}
	users, _ := obj(r.body, "includes", "users").([]any)
	var names []string
	for _, u := range users {
		names = append(names, u.(map[string]any)["username"].(string))
		if obj(u, "public_metrics", "tweet_count") == nil || obj(u, "created_at") == nil {
			t.Errorf("included user lacks asked fields: %v", u)
		}
	}
	if !slices.Equal(names, []string{"author", "reader"}) {
		t.Errorf("includes.users = %v, want author then reader", names)
	}
	// Defaults only: no extra field.
	plain := b.get(t, "/2/tweets/"+id, b.bearer)
	if len(plain.body["data"].(map[string]any)) != 3 || plain.body["includes"] != nil {
		t.Errorf("default lookup = %s, want id, text, edit_history_tweet_ids only", plain.raw)
	}
}

func TestPostLookupPartialErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	kept := b.create(t, "oauth:author", map[string]any{"text": "kept"})
	gone := b.create(t, "oauth:author", map[string]any{"text": "gone"})
	if r := b.call(t, "DELETE", "/2/tweets/"+gone, "oauth:author", "", nil); r.status != 200 {
		t.Fatalf("delete: %d", r.status)
	}
	shy := b.addUser(t, "shy", storage.AccessReadWrite)
	hidden := b.create(t, "oauth:shy", map[string]any{"text": "protected words"})
	if _, err := b.db.SetUserState(t.Context(), shy.ID, "protected", time.Now()); err != nil {
		t.Fatal(err)
	}
	r := b.get(t, "/2/tweets?ids="+strings.Join([]string{gone, kept, "42", hidden}, ","), b.bearer)
	data, _ := r.body["data"].([]any)
	if len(data) != 1 || obj(data, "0", "id") != kept {
		t.Errorf("data = %v, want only %s", data, kept)
	}
	errs, _ := r.body["errors"].([]any)
	want := []string{"resource-not-found " + gone, "resource-not-found 42", "not-authorized-for-resource " + hidden}
	var got []string
	for _, e := range errs {
		typ := obj(e, "type").(string)
		got = append(got, typ[strings.LastIndex(typ, "/")+1:]+" "+obj(e, "resource_id").(string))
		if obj(e, "parameter") != "ids" {
			t.Errorf("error %v does not name ids", e)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors = %v, want %v", got, want)
	}
	// The protected author sees their own post.
	if r := b.get(t, "/2/tweets/"+hidden, "oauth:shy"); obj(r.body, "data", "id") != hidden {
		t.Errorf("protected author's own lookup = %s", r.raw)
	}
	// A single unknown post is a 200 with only its error, as on the platform.
	if r := b.get(t, "/2/tweets/42", b.bearer); r.body["data"] != nil || obj(r.body, "errors", "0", "title") != "Not Found Error" {
		t.Errorf("GET unknown = %s", r.raw)
	}
}

func TestPostLookupRejects(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
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
			r := b.call(t, "GET", tc.path, b.bearer, "", nil)
			if r.status != 400 || !strings.HasSuffix(r.body["type"].(string), "invalid-request") {
				t.Fatalf("%d %s, want 400 invalid-request", r.status, r.raw)
			}
			if got := paramNames(r.body); !slices.Equal(got, tc.params) {
				t.Errorf("parameters = %v, want %v", got, tc.params)
			}
		})
	}
}

func TestRepliesQuotesAndTheirRules(t *testing.T) {
	t.Parallel()
	f := newPostsFixture(t)
	quiet := f.create(t, "oauth:author", map[string]any{"text": "no one summoned"})
	summon := f.create(t, "oauth:author", map[string]any{"text": "what do you think @reader?"})
	reply := func(parent string) map[string]any {
		return map[string]any{"text": "my reply", "reply": map[string]any{"in_reply_to_tweet_id": parent}}
	}
	// Self-serve: replying unsummoned is refused, summoned is allowed.
	r := f.call(t, "POST", "/2/tweets", "oauth:reader", "application/json", jsonBody(reply(quiet)))
	if r.status != 403 || !strings.HasSuffix(r.body["type"].(string), "not-authorized-for-resource") || r.body["resource_id"] != quiet {
		t.Errorf("unsummoned reply = %d %s", r.status, r.raw)
	}
	replied := f.create(t, "oauth:reader", reply(summon))
	got := f.get(t, "/2/tweets/"+replied+"?tweet.fields=conversation_id,in_reply_to_user_id,referenced_tweets", f.bearer).body["data"].(map[string]any)
	if got["conversation_id"] != summon || got["in_reply_to_user_id"] != fmt.Sprint(f.author.ID) || fmt.Sprint(got["referenced_tweets"]) != "[map[id:"+summon+" type:replied_to]]" {
		t.Errorf("reply = %v", got)
	}
	// A reply to the reply stays in the conversation; threads on one's own posts are allowed.
	thread := f.create(t, "oauth:reader", reply(replied))
	if c := f.get(t, "/2/tweets/"+thread+"?tweet.fields=conversation_id", f.bearer).body["data"].(map[string]any)["conversation_id"]; c != summon {
		t.Errorf("thread conversation = %v, want %s", c, summon)
	}
	if n := metric(t, f.bundle, summon, "reply_count"); n != 1 {
		t.Errorf("reply_count = %v, want 1", n)
	}
	// Enterprise apps are not restricted; quotes need one.
	if r := f.callEnterprise(t, "POST", "/2/tweets", reply(quiet)); r.status != 201 {
		t.Errorf("enterprise reply = %d %s", r.status, r.raw)
	}
	quote := map[string]any{"text": "quoting", "quote_tweet_id": quiet}
	if r := f.call(t, "POST", "/2/tweets", "oauth:reader", "application/json", jsonBody(quote)); r.status != 403 {
		t.Errorf("self-serve quote = %d %s, want 403", r.status, r.raw)
	}
	if r := f.callEnterprise(t, "POST", "/2/tweets", quote); r.status != 201 {
		t.Errorf("enterprise quote = %d %s", r.status, r.raw)
	}
	if n := metric(t, f.bundle, quiet, "quote_count"); n != 1 {
		t.Errorf("quote_count = %v, want 1", n)
	}
	// Bad references change nothing.
	for name, body := range map[string]any{
		"unknown parent":   reply("42"),
		"malformed parent": reply("x"),
		"unknown quote":    map[string]any{"text": "q", "quote_tweet_id": "42"},
		"two cashtags":     map[string]any{"text": "$AAPL $GOOG"},
	} {
		if r := f.call(t, "POST", "/2/tweets", "oauth:reader", "application/json", jsonBody(body)); r.status != 400 {
			t.Errorf("%s = %d %s, want 400", name, r.status, r.raw)
		}
	}
	if n := metric(t, f.bundle, quiet, "reply_count"); n != 1 {
		t.Errorf("reply_count after refusals = %v, want 1 (the enterprise reply)", n)
	}
}

func TestEditRules(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	first := b.create(t, "oauth:author", map[string]any{"text": "first"})
	edit := func(prev, text string) reply {
		return b.call(t, "POST", "/2/tweets", "oauth:author", "application/json",
			jsonBody(map[string]any{"text": text, "edit_options": map[string]any{"previous_post_id": prev}}))
	}
	if r := edit(first, "not premium"); r.status != 403 {
		t.Fatalf("edit by a non-premium author = %d %s", r.status, r.raw)
	}
	if err := b.db.SetUserFlag(t.Context(), b.author.ID, "premium", true); err != nil {
		t.Fatal(err)
	}
	chain := []string{first}
	for i := 1; i <= 5; i++ {
		r := edit(chain[len(chain)-1], fmt.Sprintf("edit %d", i))
		if r.status != 201 {
			t.Fatalf("edit %d = %d %s", i, r.status, r.raw)
		}
		chain = append(chain, obj(r.body, "data", "id").(string))
		if hist := fmt.Sprint(obj(r.body, "data", "edit_history_tweet_ids")); hist != fmt.Sprint(toAny(chain)) {
			t.Errorf("edit %d history = %s, want %v", i, hist, chain)
		}
	}
	if r := edit(chain[5], "sixth"); r.status != 400 || paramNames(r.body)[0] != "edit_options.previous_post_id" {
		t.Errorf("sixth edit = %d %s", r.status, r.raw)
	}
	if r := edit(first, "old version"); r.status != 400 {
		t.Errorf("edit of a superseded version = %d %s", r.status, r.raw)
	}
	if r := b.call(t, "POST", "/2/tweets", "oauth:reader", "application/json",
		jsonBody(map[string]any{"text": "x", "edit_options": map[string]any{"previous_post_id": chain[5]}})); r.status != 403 {
		t.Errorf("edit of another's post = %d %s", r.status, r.raw)
	}
	old := b.get(t, "/2/tweets/"+first+"?tweet.fields=edit_controls", b.bearer).body["data"].(map[string]any)
	if fmt.Sprint(old["edit_history_tweet_ids"]) != fmt.Sprint(toAny(chain)) || obj(old, "edit_controls", "is_edit_eligible") != false {
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
	b := setup(t, 100)
	id := b.create(t, "oauth:author", map[string]any{"text": "like me"})
	me := fmt.Sprint(b.user.ID)
	for range 2 {
		r := b.call(t, "POST", "/2/users/"+me+"/likes", "oauth:reader", "application/json", jsonBody(map[string]any{"tweet_id": id}))
		if r.status != 200 || obj(r.body, "data", "liked") != true {
			t.Fatalf("like = %d %s", r.status, r.raw)
		}
	}
	if n := metric(t, b, id, "like_count"); n != 1 {
		t.Errorf("like_count after two likes = %v, want 1", n)
	}
	if r := b.call(t, "DELETE", "/2/users/"+me+"/likes/"+id, "oauth:reader", "", nil); r.status != 200 || obj(r.body, "data", "liked") != false {
		t.Errorf("unlike = %d %s", r.status, r.raw)
	}
	if n := metric(t, b, id, "like_count"); n != 0 {
		t.Errorf("like_count after unlike = %v", n)
	}
	r := b.call(t, "POST", "/2/users/"+me+"/retweets", "oauth:reader", "application/json", jsonBody(map[string]any{"tweet_id": id}))
	if r.status != 200 || obj(r.body, "data", "retweeted") != true {
		t.Fatalf("repost = %d %s", r.status, r.raw)
	}
	rest := obj(r.body, "data", "rest_id").(string)
	repost := b.get(t, "/2/tweets/"+rest+"?tweet.fields=referenced_tweets&expansions=referenced_tweets.id", b.bearer)
	if obj(repost.body, "data", "text") != "RT @author: like me" || obj(repost.body, "data", "referenced_tweets", "0", "type") != "retweeted" ||
		obj(repost.body, "includes", "tweets", "0", "id") != id {
		t.Errorf("repost = %s", repost.raw)
	}
	if n := metric(t, b, id, "retweet_count"); n != 1 {
		t.Errorf("retweet_count = %v", n)
	}
	if r := b.call(t, "DELETE", "/2/users/"+me+"/retweets/"+id, "oauth:reader", "", nil); r.status != 200 || obj(r.body, "data", "retweeted") != false {
		t.Errorf("unrepost = %d %s", r.status, r.raw)
	}
	if n := metric(t, b, id, "retweet_count"); n != 0 {
		t.Errorf("retweet_count after unrepost = %v", n)
	}
	// Acting as someone else, or on a missing post, changes nothing.
	other := fmt.Sprint(b.author.ID)
	if r := b.call(t, "POST", "/2/users/"+other+"/likes", "oauth:reader", "application/json", jsonBody(map[string]any{"tweet_id": id})); r.status != 403 {
		t.Errorf("like as another user = %d", r.status)
	}
	if r := b.call(t, "POST", "/2/users/"+me+"/likes", "oauth:reader", "application/json", jsonBody(map[string]any{"tweet_id": "42"})); r.status != 400 {
		t.Errorf("like of a missing post = %d", r.status)
	}
	if r := b.call(t, "POST", "/2/users/"+me+"/likes", "oauth:reader", "application/json", jsonBody(map[string]any{})); r.status != 400 {
		t.Errorf("like without tweet_id = %d", r.status)
	}
	if r := b.call(t, "POST", "/2/users/"+me+"/likes", b.bearer, "application/json", jsonBody(map[string]any{"tweet_id": id})); r.status != 403 {
		t.Errorf("like with a bearer token = %d", r.status)
	}
}

func TestUserLookups(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	pinned := b.create(t, "oauth:author", map[string]any{"text": "pin me"})
	desc, pin := "writes things", int64(0)
	fmt.Sscan(pinned, &pin)
	if _, err := b.db.SetUserProfile(t.Context(), b.author.ID, profileChange(&desc, &pin)); err != nil {
		t.Fatal(err)
	}
	me := b.get(t, "/2/users/me?user.fields=description,public_metrics,pinned_tweet_id&expansions=pinned_tweet_id", "oauth:author")
	d := me.body["data"].(map[string]any)
	if d["username"] != "author" || d["description"] != desc || d["pinned_tweet_id"] != pinned ||
		obj(d, "public_metrics", "tweet_count") != float64(1) || obj(me.body, "includes", "tweets", "0", "id") != pinned {
		t.Errorf("/me = %s", me.raw)
	}
	byID := b.get(t, "/2/users/"+fmt.Sprint(b.user.ID), b.bearer)
	if obj(byID.body, "data", "username") != "reader" || len(byID.body["data"].(map[string]any)) != 3 {
		t.Errorf("by id = %s", byID.raw)
	}
	byName := b.get(t, "/2/users/by/username/AUTHOR", b.bearer)
	if obj(byName.body, "data", "id") != fmt.Sprint(b.author.ID) {
		t.Errorf("by username = %s", byName.raw)
	}
	missing := b.get(t, "/2/users?ids=42,"+fmt.Sprint(b.user.ID), b.bearer)
	if len(missing.body["data"].([]any)) != 1 || obj(missing.body, "errors", "0", "resource_id") != "42" {
		t.Errorf("ids with a missing one = %s", missing.raw)
	}
	if r := b.call(t, "GET", "/2/users/me", b.bearer, "", nil); r.status != 403 {
		t.Errorf("/me with a bearer token = %d", r.status)
	}
	if r := b.call(t, "GET", "/2/users/by/username/no-dash", b.bearer, "", nil); r.status != 400 {
		t.Errorf("bad username = %d", r.status)
	}
}

func profileChange(description *string, pinned *int64) postgres.ProfileChange {
	return postgres.ProfileChange{Description: description, PinnedPostID: pinned}
}

func TestPostTextAndMediaExpansion(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	photo := succeededMedia(t, b.db, b.author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"})
	id := b.create(t, "oauth:author", map[string]any{"text": "look", "media": map[string]any{"media_ids": []string{fmt.Sprint(photo.ID)}}})
	r := b.get(t, "/2/tweets/"+id+"?tweet.fields=attachments&expansions=attachments.media_keys&media.fields=width,height", b.bearer)
	if obj(r.body, "data", "attachments", "media_keys", "0") != photo.Key || obj(r.body, "includes", "media", "0", "media_key") != photo.Key ||
		obj(r.body, "includes", "media", "0", "type") != "photo" || obj(r.body, "includes", "media", "0", "width") != float64(64) {
		t.Errorf("media expansion = %s", r.raw)
	}
	// Weighted length: CJK counts 2, a URL 23 whatever its length.
	for text, status := range map[string]int{
		strings.Repeat("漢", 140): 201,
		strings.Repeat("漢", 141): 400,
		strings.Repeat("a", 256) + " https://example.com/" + strings.Repeat("p", 300): 201,
		strings.Repeat("a", 257) + " https://example.com/":                            400,
	} {
		if r := b.call(t, "POST", "/2/tweets", "oauth:author", "application/json", jsonBody(map[string]any{"text": text})); r.status != status {
			t.Errorf("text of %d runes = %d %s, want %d", len([]rune(text)), r.status, r.raw, status)
		}
	}
}

func TestEditWindowCloses(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	if err := b.db.SetUserFlag(t.Context(), b.author.ID, "premium", true); err != nil {
		t.Fatal(err)
	}
	old := factory.Post(t, b.db, &factory.PostOpts{Author: b.author, Text: "old", CreatedAt: time.Now().Add(-61 * time.Minute)})
	r := b.call(t, "POST", "/2/tweets", "oauth:author", "application/json",
		jsonBody(map[string]any{"text": "too late", "edit_options": map[string]any{"previous_post_id": fmt.Sprint(old.ID)}}))
	if r.status != 400 || !strings.Contains(r.raw, "edit window") || paramNames(r.body)[0] != "edit_options.previous_post_id" {
		t.Errorf("edit after the window = %d %s", r.status, r.raw)
	}
	if got := b.get(t, "/2/tweets/"+fmt.Sprint(old.ID), b.bearer); fmt.Sprint(obj(got.body, "data", "edit_history_tweet_ids")) != fmt.Sprintf("[%d]", old.ID) {
		t.Errorf("refused edit changed the chain: %s", got.raw)
	}
}

// TestRepostsFollowTheirOriginal: a repost shows its original's text, so
// it is shown only while the original is; expansions add only what was
// asked for.
func TestRepostsFollowTheirOriginal(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	id := b.create(t, "oauth:author", map[string]any{"text": "soon protected"})
	r := b.call(t, "POST", "/2/users/"+fmt.Sprint(b.user.ID)+"/retweets", "oauth:reader", "application/json", jsonBody(map[string]any{"tweet_id": id}))
	if r.status != 200 {
		t.Fatalf("repost: %d %s", r.status, r.raw)
	}
	rest := obj(r.body, "data", "rest_id").(string)
	authorOnly := b.get(t, "/2/tweets/"+rest+"?tweet.fields=referenced_tweets&expansions=referenced_tweets.id.author_id", b.bearer)
	if obj(authorOnly.body, "includes", "users", "0", "username") != "author" || obj(authorOnly.body, "includes", "tweets") != nil {
		t.Errorf("referenced_tweets.id.author_id alone = %s, want the author and no post", authorOnly.raw)
	}
	if _, err := b.db.SetUserState(t.Context(), b.author.ID, "protected", time.Now()); err != nil {
		t.Fatal(err)
	}
	hidden := b.get(t, "/2/tweets?ids="+rest, b.bearer)
	if hidden.body["data"] != nil || !strings.HasSuffix(obj(hidden.body, "errors", "0", "type").(string), "not-authorized-for-resource") {
		t.Errorf("repost of a protected author's post = %s", hidden.raw)
	}
	if own := b.get(t, "/2/tweets/"+rest, "oauth:author"); obj(own.body, "data", "id") != rest {
		t.Errorf("the protected author sees the repost of their post: %s", own.raw)
	}
	twice := b.get(t, "/2/users?ids="+fmt.Sprint(b.user.ID)+","+fmt.Sprint(b.user.ID), b.bearer)
	if n := len(twice.body["data"].([]any)); n != 1 {
		t.Errorf("a repeated user id is shown %d times", n)
	}
}
