package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// The official SDK, which names the fields of posts post.fields.
const (
	xdkPackage = "@xdevplatform/xdk"
	xdkVersion = "0.6.6"
)

// aviaryInputAndPluginJS reads a script's input and defines aviary, the
// twitter-api-v2 plugin pointing the library's fixed https://api.x.com/2/
// prefix at Aviary (before the request is signed).
const aviaryInputAndPluginJS = `const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const prefix = 'https://api.x.com/2/';
const aviary = {
  onBeforeRequestConfig({ params }) {
    if (!params.url.startsWith(prefix)) throw new Error('unexpected URL ' + params.url);
    params.url = cfg.base + '/2/' + params.url.slice(prefix.length);
  },
};
`

// fieldsScript reads posts and users with the official SDK
// @xdevplatform/xdk (which sends post.fields, never tweet.fields, and
// turns the answer's snake_case keys into camelCase) and with
// twitter-api-v2, whose includes helper joins data and includes by the
// links expansions bring. Both are given only Aviary's base URL (the
// twitter-api-v2 plugin rewrites its fixed https://api.x.com/2/ prefix).
const fieldsScript = `'use strict';
const { Client, ApiError } = require('@xdevplatform/xdk');
const { TwitterApi, TwitterV2IncludesHelper } = require('twitter-api-v2');
` + aviaryInputAndPluginJS + `const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function failure(promise) {
  try {
    await promise;
    return { error: 'no error' };
  } catch (e) {
    return e instanceof ApiError ? { status: e.status, data: e.data } : { error: String(e) };
  }
}

async function main() {
  const out = {};
  const xdk = new Client({ baseUrl: cfg.base, bearerToken: cfg.bearer });
  out.byIds = await xdk.posts.getByIds([cfg.question, cfg.reply], { postFields: ['author_id', 'created_at'] });
  const deadline = Date.now() + 30000;
  do {
    out.search = await xdk.posts.searchRecent('birding', { postFields: ['author_id'] });
    if (out.search.data && out.search.data.length >= 2) break;
    await sleep(300);
  } while (Date.now() < deadline);
  out.linked = await xdk.posts.getById(cfg.reply, { expansions: ['author_id', 'in_reply_to_user_id', 'referenced_tweets.id'] });
  out.user = await xdk.users.getById(cfg.demoId, { expansions: ['pinned_tweet_id'], postFields: ['created_at'] });
  out.badField = await failure(xdk.posts.getById(cfg.question, { postFields: ['author_id', 'secret'] }));

  const app = new TwitterApi(cfg.bearer, { plugins: [aviary] });
  const res = await app.v2.singleTweet(cfg.reply, {
    expansions: ['author_id', 'referenced_tweets.id', 'referenced_tweets.id.author_id', 'in_reply_to_user_id', 'entities.mentions.username'],
  });
  const inc = new TwitterV2IncludesHelper(res);
  const parent = inc.repliedTo(res.data);
  const pinnedRes = await app.v2.user(cfg.demoId, { expansions: ['pinned_tweet_id'] });
  const pinned = new TwitterV2IncludesHelper(pinnedRes).pinnedTweet(pinnedRes.data);
  out.helper = {
    data: res.data,
    author: (inc.author(res.data) || {}).username,
    repliedTo: (parent || {}).id,
    repliedToAuthor: (inc.repliedToAuthor(res.data) || {}).username,
    parentAuthor: parent ? (inc.author(parent) || {}).username : undefined,
    mentioned: ((res.data.entities || {}).mentions || []).map((m) => (inc.users.find((u) => u.username === m.username) || {}).id),
    pinned: (pinned || {}).id,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiError ? JSON.stringify({ status: e.status, data: e.data }) : e);
  process.exit(1);
});
`

// fieldsResult is what fieldsScript prints (xdk's answers in camelCase).
type fieldsResult struct {
	ByIds struct {
		Data []struct{ ID, AuthorID, CreatedAt string } `json:"data"`
	} `json:"byIds"`
	Search struct {
		Data []struct{ ID, AuthorID, CreatedAt string } `json:"data"`
	} `json:"search"`
	Linked struct {
		Data struct {
			ID, AuthorID, InReplyToUserID string
			ReferencedTweets              []struct{ Type, ID string }
		} `json:"data"`
		Includes struct {
			Users  []struct{ ID, Username string } `json:"users"`
			Tweets []struct{ ID string }           `json:"tweets"`
		} `json:"includes"`
	} `json:"linked"`
	User struct {
		Data     struct{ ID, PinnedTweetID string } `json:"data"`
		Includes struct {
			Tweets []struct{ ID, CreatedAt string } `json:"tweets"`
		} `json:"includes"`
	} `json:"user"`
	BadField struct {
		Status int            `json:"status"`
		Data   map[string]any `json:"data"`
		Error  string         `json:"error"`
	} `json:"badField"`
	Helper struct {
		Data                                                     map[string]any `json:"data"`
		Author, RepliedTo, RepliedToAuthor, ParentAuthor, Pinned string
		Mentioned                                                []string
	} `json:"helper"`
}

// TestPostFieldsAndExpansionLinksNodeClients drives post lookup, search
// and user lookup with @xdevplatform/xdk 0.6.6, which names the fields of
// posts post.fields, and checks its camelCase answers carry what was asked
// (authorId, createdAt); then twitter-api-v2 1.29.1's includes helper
// joins a reply to its author, its parent, the parent's author, the user
// it answers and a user's pinned post through the links expansions bring
// into data and includes.tweets, no tweet.fields given.
func TestPostFieldsAndExpansionLinksNodeClients(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", tls: tlsFiles, env: []string{clientTestTimeout}})
	demo := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	friend := s.userToken("friend")
	question := fmt.Sprint(s.post(demo, "Which birds visit your garden, @friend? #birding"))
	resp := s.signed(friend, http.MethodPost, "/2/tweets", map[string]any{"text": "Mostly robins, @" + s.creds.Username + " #birding",
		"reply": map[string]any{"in_reply_to_tweet_id": question}})
	if resp.Status != http.StatusCreated {
		t.Fatalf("reply: %d %s", resp.Status, resp.Raw)
	}
	reply := resp.Body["data"].(map[string]any)["id"].(string)
	s.run("admin", "user", "profile", s.creds.Username, "--pinned", question)
	me := s.signed(friend, http.MethodGet, "/2/users/me", nil)
	if me.Status != http.StatusOK {
		t.Fatalf("users/me: %d %s", me.Status, me.Raw)
	}
	friendID := me.Body["data"].(map[string]any)["id"].(string)

	modules := npmPackage(t, xdkPackage, xdkVersion) + string(os.PathListSeparator) + twitterAPIV2(t)
	input := map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "question": question, "reply": reply, "demoId": s.creds.UserID}
	var res fieldsResult
	runNodeScript(t, s, modules, fieldsScript, input, &res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)

	// xdk: post.fields asked for author_id and created_at.
	authors := map[string]string{question: s.creds.UserID, reply: friendID}
	if len(res.ByIds.Data) != 2 {
		t.Fatalf("posts.getByIds = %+v", res.ByIds)
	}
	for _, p := range res.ByIds.Data {
		if p.AuthorID != authors[p.ID] || p.CreatedAt == "" {
			t.Errorf("posts.getByIds post %+v, want authorId %s and createdAt", p, authors[p.ID])
		}
	}
	if len(res.Search.Data) != 2 {
		t.Fatalf("posts.searchRecent = %+v, want both posts", res.Search)
	}
	for _, p := range res.Search.Data {
		if p.AuthorID != authors[p.ID] || p.CreatedAt != "" {
			t.Errorf("posts.searchRecent post %+v, want authorId %s only", p, authors[p.ID])
		}
	}
	// xdk: the expansions' links, no fields asked.
	l := res.Linked
	if l.Data.AuthorID != friendID || l.Data.InReplyToUserID != s.creds.UserID || len(l.Data.ReferencedTweets) != 1 ||
		l.Data.ReferencedTweets[0].ID != question || len(l.Includes.Tweets) != 1 || l.Includes.Tweets[0].ID != question || len(l.Includes.Users) != 2 {
		t.Errorf("posts.getById with expansions = %+v", l)
	}
	if u := res.User; u.Data.PinnedTweetID != question || len(u.Includes.Tweets) != 1 || u.Includes.Tweets[0].ID != question || u.Includes.Tweets[0].CreatedAt == "" {
		t.Errorf("users.getById with pinned_tweet_id and post.fields = %+v", u)
	}
	// xdk surfaces the 400 naming post.fields, the parameter it sent.
	if b := res.BadField; b.Status != 400 || !strings.Contains(fmt.Sprint(b.Data["errors"]), "post.fields:[secret]") ||
		!strings.Contains(fmt.Sprint(b.Data["errors"]), "`post.fields`") {
		t.Errorf("bad post.fields value = %+v", b)
	}
	// twitter-api-v2's includes helper joins through the links.
	h := res.Helper
	if h.Author != "friend" || h.RepliedTo != question || h.RepliedToAuthor != s.creds.Username || h.ParentAuthor != s.creds.Username {
		t.Errorf("includes helper: %+v", h)
	}
	if len(h.Mentioned) != 1 || h.Mentioned[0] != s.creds.UserID {
		t.Errorf("mentions joined to includes.users = %v (data %v)", h.Mentioned, h.Data)
	}
	if h.Pinned != question {
		t.Errorf("includes.pinnedTweet = %q, want %s", h.Pinned, question)
	}
}
