package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// twitterAPIV2NewsScript posts with twitter-api-v2 (user context), then
// reads the news with its generic v2.get (app-only bearer), as an
// application on a library release without news helpers does; the plugin
// points the library's https://api.x.com/2/ prefix at Aviary, as in
// twitterAPIV2Script.
const twitterAPIV2NewsScript = twitterAPIV2Prelude + `
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// withdraw deletes the post the story quotes, reads the story until it is
// rebuilt without it (every read recorded), then deletes the other posts
// and reads it at once and after a few refreshes.
async function withdraw(user, app, out, story) {
  const fields = { 'news.fields': 'name,summary,hook,contexts,cluster_posts_results' };
  out.quoted = cfg.texts.findIndex((t) => story.summary.includes(t));
  if (out.quoted < 0) return;
  await user.v2.deleteTweet(out.posted[out.quoted]);
  out.afterDelete = [];
  const until = Date.now() + 60000;
  do {
    const r = await app.v2.get('news/' + story.id, fields);
    out.afterDelete.push(r);
    if (r.data) break;
    await sleep(300);
  } while (Date.now() < until);
  out.searchAfterDelete = await app.v2.get('news/search', Object.assign({ query: 'eclipse', max_age_hours: 2 }, fields));
  for (const [i, id] of out.posted.entries()) {
    if (i !== out.quoted) await user.v2.deleteTweet(id);
  }
  out.lookupAfterAll = await app.v2.get('news/' + story.id, fields);
  await sleep(4000); // several refreshes (AVIARY_NEWS_INTERVAL=1s)
  out.lookupLater = await app.v2.get('news/' + story.id, fields);
  out.searchLater = await app.v2.get('news/search', { query: 'eclipse', max_age_hours: 2 });
}

async function main() {
  const user = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [aviary] });
  const app = new TwitterApi(cfg.bearer, { plugins: [aviary] });
  const out = { posted: [] };
  for (const text of cfg.texts) {
    out.posted.push((await user.v2.tweet(text)).data.id);
  }
  // The worker aggregates the posts, then its news refresh finds the spike.
  const deadline = Date.now() + 90000;
  do {
    out.search = await app.v2.get('news/search', { query: 'eclipse', max_age_hours: 2,
      'news.fields': 'name,summary,contexts,cluster_posts_results,keywords,last_updated_at_ms' });
    if (out.search.data && out.search.data.length) break;
    await new Promise((r) => setTimeout(r, 500));
  } while (Date.now() < deadline);
  if (out.search.data && out.search.data.length) {
    out.lookup = await app.v2.get('news/' + out.search.data[0].id, { 'news.fields': 'id,name,updated_at' });
    await withdraw(user, app, out, out.search.data[0]);
  }
  out.none = await app.v2.get('news/search', { query: 'nothingspikeshere' });
  try {
    await app.v2.get('news/search', { query: 'eclipse', max_results: 500 });
    out.badError = 'no error';
  } catch (e) {
    out.badError = e instanceof ApiResponseError ? { code: e.code, data: e.data } : String(e);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

type twitterAPIV2NewsResult struct {
	Posted            []string         `json:"posted"`
	Search            map[string]any   `json:"search"`
	Lookup            map[string]any   `json:"lookup"`
	Quoted            int              `json:"quoted"`
	AfterDelete       []map[string]any `json:"afterDelete"`
	SearchAfterDelete map[string]any   `json:"searchAfterDelete"`
	LookupAfterAll    map[string]any   `json:"lookupAfterAll"`
	LookupLater       map[string]any   `json:"lookupLater"`
	SearchLater       map[string]any   `json:"searchLater"`
	None              map[string]any   `json:"none"`
	BadError          struct {
		Code int            `json:"code"`
		Data map[string]any `json:"data"`
	} `json:"badError"`
}

// TestNewsTwitterAPIV2Client posts six posts about an eclipse with the npm
// client twitter-api-v2 (base URL only changed), lets the worker process
// aggregate them and build its story, and reads it back through the
// library: search with fields, lookup by id, a query matching nothing and
// an out-of-range max_results surfaced as the library's ApiResponseError.
// Then it deletes the post the story quotes: from that moment no read shows
// its text, and the story comes back rebuilt from the other posts; once
// every post is deleted the story is gone from search and by id for good.
func TestNewsTwitterAPIV2Client(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles,
		env: []string{clientTestTimeout, "AVIARY_NEWS_INTERVAL=1s", "AVIARY_INSIGHTS_PAIR_SAMPLE=1"}})
	texts := []string{
		"The total #eclipse is starting over the valley",
		"Eclipse glasses on, the sky goes dark #eclipse",
		"Watching the eclipse from the rooftop with friends",
		"Never seen an eclipse like this one #eclipse",
		"Eclipse totality lasted almost three minutes",
		"Best eclipse photos so far from the valley #eclipse",
	}
	input := map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "texts": texts}
	var res twitterAPIV2NewsResult
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2NewsScript, input, &res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)

	if len(res.Posted) != len(texts) {
		t.Fatalf("posted %v", res.Posted)
	}
	stories, _ := res.Search["data"].([]any)
	if len(stories) != 1 {
		t.Fatalf("news search = %v, want the eclipse story", res.Search)
	}
	story := stories[0].(map[string]any)
	keywords, _ := story["keywords"].(map[string]any)
	if keywords["eclipse"] == nil && keywords["#eclipse"] == nil {
		t.Errorf("story keywords %v lack eclipse", story["keywords"])
	}
	posted := map[string]bool{}
	for _, id := range res.Posted {
		posted[id] = true
	}
	cluster, _ := story["cluster_posts_results"].([]any)
	if len(cluster) != len(texts) {
		t.Errorf("cluster_posts_results %v, want the %d posts", cluster, len(texts))
	}
	for _, c := range cluster {
		if id, _ := c.(map[string]any)["post_id"].(string); !posted[id] {
			t.Errorf("cluster post %v is not one of the posts made", c)
		}
	}
	if story["name"] == "" || story["summary"] == "" || story["last_updated_at_ms"] == nil || story["contexts"] == nil {
		t.Errorf("story fields: %v", story)
	}
	if meta, _ := res.Search["meta"].(map[string]any); meta["result_count"] != float64(1) {
		t.Errorf("search meta %v", res.Search["meta"])
	}
	looked, _ := res.Lookup["data"].(map[string]any)
	// The default fields always come, with those asked for (updated_at).
	if looked["id"] != story["id"] || looked["name"] != story["name"] || looked["updated_at"] == nil || looked["cluster_posts_results"] != nil {
		t.Errorf("lookup = %v, want the story's default fields and updated_at", res.Lookup)
	}
	if meta, _ := res.None["meta"].(map[string]any); meta["result_count"] != float64(0) {
		t.Errorf("search without a match = %v", res.None)
	}
	if res.BadError.Code != 400 {
		t.Errorf("max_results=500 surfaced as %+v, want a 400 ApiResponseError", res.BadError)
	}
	checkNewsWithdrawal(t, res, texts)
}

// checkNewsWithdrawal checks the reads after the story's posts were deleted.
func checkNewsWithdrawal(t *testing.T, res twitterAPIV2NewsResult, texts []string) {
	t.Helper()
	if res.Quoted < 0 || res.Quoted >= len(texts) || len(res.AfterDelete) == 0 {
		t.Fatalf("no quoted post deleted: quoted %d, reads %d", res.Quoted, len(res.AfterDelete))
	}
	deleted, quoted := res.Posted[res.Quoted], texts[res.Quoted]
	shows := func(v any) bool {
		b, _ := json.Marshal(v)
		return strings.Contains(string(b), quoted) || strings.Contains(string(b), `"`+deleted+`"`)
	}
	for i, r := range res.AfterDelete {
		if shows(r["data"]) {
			t.Errorf("read %d after the delete still shows the deleted post: %v", i, r)
		}
	}
	rebuilt, _ := res.AfterDelete[len(res.AfterDelete)-1]["data"].(map[string]any)
	if cluster, _ := rebuilt["cluster_posts_results"].([]any); len(cluster) != len(texts)-1 || rebuilt["name"] == "" {
		t.Errorf("story not rebuilt from the %d posts left: %v", len(texts)-1, res.AfterDelete[len(res.AfterDelete)-1])
	}
	if shows(res.SearchAfterDelete["data"]) {
		t.Errorf("search after the delete shows the deleted post: %v", res.SearchAfterDelete)
	}
	for name, r := range map[string]map[string]any{"at once": res.LookupAfterAll, "later": res.LookupLater} {
		errs, _ := r["errors"].([]any)
		if r["data"] != nil || len(errs) != 1 || !strings.HasSuffix(fmt.Sprint(errs[0].(map[string]any)["type"]), "resource-not-found") {
			t.Errorf("lookup %s after every post was deleted = %v, want only a not-found error", name, r)
		}
	}
	if meta, _ := res.SearchLater["meta"].(map[string]any); meta["result_count"] != float64(0) {
		t.Errorf("search after every post was deleted = %v", res.SearchLater)
	}
}
