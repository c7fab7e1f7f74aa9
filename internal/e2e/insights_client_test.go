package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	twitter "github.com/g8rswimmer/go-twitter/v2"
)

// twitterAdsGetPrelude is the start of the insights scripts: the
// twitter-ads host constants pointed at Aviary, call(api, path, params)
// (a GET) and client() (API version 12, production).
const twitterAdsGetPrelude = `'use strict';
const constants = require('twitter-ads/lib/constants');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
constants.API_HOST = cfg.base + '/';
const TwitterAdsAPI = require('twitter-ads');

function call(api, path, params) {
  return new Promise((resolve) => {
    api.get(path, params, (err, resp, body) => {
      if (err) resolve({ status: resp ? resp.statusCode : 0, error: err.allErrors || String(err), body: body });
      else resolve({ status: resp.statusCode, body: body });
    });
  });
}

function client() {
  return new TwitterAdsAPI({ consumer_key: cfg.appKey, consumer_secret: cfg.appSecret,
    access_token: cfg.accessToken, access_token_secret: cfg.accessSecret, sandbox: false, api_version: '12' });
}

`

// twitterAdsInsightsScript asks keyword insights with the npm twitter-ads
// client (host constants pointed at Aviary, as in twitterAdsScript): one
// query per country and one bad query.
const twitterAdsInsightsScript = twitterAdsGetPrelude + `async function main() {
  const ads = client();
  const base = { granularity: 'HOUR', keywords: 'robins', start_time: cfg.start, end_time: cfg.end };
  const out = {};
  out.us = await call(ads, 'insights/keywords/search', Object.assign({ location: 'US' }, base));
  out.jp = await call(ads, 'insights/keywords/search', Object.assign({ location: 'JP' }, base));
  out.world = await call(ads, 'insights/keywords/search', Object.assign({ negative_keywords: 'kyoto' }, base));
  out.bad = await call(ads, 'insights/keywords/search', { keywords: 'robins', start_time: cfg.start });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

type insightsResult struct {
	US, JP, World, Bad adsCall
}

// TestKeywordInsightsFromPosts makes posts with go-twitter (in the US by
// the author's profile, in Japan by a place), deletes one, lets the worker
// process aggregate them, and asks keyword insights with the npm
// twitter-ads client: volumes per country, related keywords, a bad query.
func TestKeywordInsightsFromPosts(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{clientTestTimeout, "AVIARY_INSIGHTS_PAIR_SAMPLE=1"}})
	s.run("admin", "user", "profile", s.creds.Username, "--country", "US")
	s.run("admin", "place", "set", "kyoto-1", "JP", "Kyoto")
	demo := &twitter.Client{Authorizer: oauth1Auth{t: t, s: s, baseURL: s.baseURL,
		token: userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}}, Client: &http.Client{Timeout: 30 * time.Second}, Host: s.baseURL}

	createPost(t, demo, "Robins in the garden this morning #birding")
	createPost(t, demo, "Finches and robins at the feeder #birding")
	createPost(t, demo, "A quiet day in the garden")
	gone := createPost(t, demo, "Robins everywhere, robins nesting")
	if _, err := demo.CreateTweet(t.Context(), twitter.CreateTweetRequest{Text: "Robins by the river in Kyoto #birding",
		Geo: &twitter.CreateTweetGeo{PlaceID: "kyoto-1"}}); err != nil {
		t.Fatalf("post with a place: %v", err)
	}
	if _, err := demo.DeleteTweet(t.Context(), gone); err != nil {
		t.Fatalf("delete: %v", err)
	}

	hour := time.Now().UTC().Truncate(time.Hour)
	start, end := hour.Add(-2*time.Hour), hour.Add(time.Hour)
	// The worker applies the change log within seconds.
	waitVolume(t, s, start, end, "US", 2)

	modules := npmPackage(t, twitterAdsPackage, twitterAdsVersion)
	input := map[string]any{"base": s.baseURL, "start": start.Format(time.RFC3339), "end": end.Format(time.RFC3339)}
	var res insightsResult
	runNodeScript(t, s, modules, twitterAdsInsightsScript, input, &res)

	us := res.US.data(t, "US insights")
	if got := volumes(us); len(got) != 3 || got[2] != 2 || got[0]+got[1] != 0 {
		t.Errorf("US tweet_volume = %v, want [0 0 2] (the deleted post and the Kyoto one left out)", got)
	}
	related := stringList(us["related_keywords"])
	for _, want := range []string{"#birding", "garden", "finches"} {
		if !slices.Contains(related, want) {
			t.Errorf("US related_keywords %v lack %q", related, want)
		}
	}
	for _, never := range []string{"robins", "the", "in", "nesting"} {
		if slices.Contains(related, never) {
			t.Errorf("US related_keywords %v hold %q (the keyword, a stopword or a deleted post's word)", related, never)
		}
	}
	if got := volumes(res.JP.data(t, "JP insights")); len(got) != 3 || got[2] != 1 {
		t.Errorf("JP tweet_volume = %v, want the Kyoto post in the last hour", got)
	}
	world := res.World.data(t, "worldwide insights")
	if got := volumes(world); len(got) != 3 || got[2] != 2 {
		t.Errorf("worldwide tweet_volume with negative keyword kyoto = %v, want 2 in the last hour", got)
	}
	if slices.Contains(stringList(world["related_keywords"]), "kyoto") {
		t.Errorf("a negative keyword offered as related: %v", world["related_keywords"])
	}
	res.Bad.errorCode(t, "missing granularity", 400, "MISSING_PARAMETER")
}

// waitVolume polls keyword insights for robins until the last bucket
// counts want posts.
func waitVolume(t *testing.T, s *stack, start, end time.Time, location string, want float64) {
	t.Helper()
	q := url.Values{"granularity": {"HOUR"}, "keywords": {"robins"}, "location": {location},
		"start_time": {start.Format(time.RFC3339)}, "end_time": {end.Format(time.RFC3339)}}
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		r := s.signedAt(s.demoToken(), s.baseURL, http.MethodGet, "/12/insights/keywords/search?"+q.Encode(), nil, "")
		last = fmt.Sprintf("%d %s", r.Status, r.Raw)
		if data, ok := r.Body["data"].(map[string]any); r.Status == http.StatusOK && ok {
			if v := volumes(data); len(v) > 0 && v[len(v)-1] == want {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("keyword insights never counted %v posts in %s; last answer: %s", want, location, last)
}

func volumes(data map[string]any) []float64 {
	raw, _ := data["tweet_volume"].([]any)
	out := make([]float64, len(raw))
	for i, v := range raw {
		out[i], _ = v.(float64)
	}
	return out
}

func stringList(v any) []string {
	raw, _ := v.([]any)
	out := make([]string, len(raw))
	for i, s := range raw {
		out[i], _ = s.(string)
	}
	return out
}

// twitterAdsCurrentHourScript asks keyword insights for a keyword just
// posted with the npm twitter-ads client and without end_time (so the
// window ends now), polling as a client does until the post counts (the
// worker applies new posts to the aggregates within about a second,
// docs/insights-api.md): the last answer, how many asks it took and how
// long.
const twitterAdsCurrentHourScript = twitterAdsGetPrelude + `const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const ads = client();
  const began = Date.now();
  let r, asks = 0;
  for (; asks < 120; ) {
    r = await call(ads, 'insights/keywords/search', { granularity: 'HOUR', keywords: cfg.keyword, start_time: cfg.start });
    asks++;
    const v = r.body && r.body.data ? r.body.data.tweet_volume : [];
    if (r.status !== 200 || v.reduce((a, b) => a + b, 0) >= 1) break;
    await sleep(250);
  }
  process.stdout.write(JSON.stringify({ last: r, asks: asks, ms: Date.now() - began }) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

// TestKeywordInsightsCountTheCurrentHour: a post made now counts in
// keyword insights asked without end_time (issue 23): the window runs to
// the moment of the request, its last bucket the current hour so far.
// The post is made with go-twitter; the npm twitter-ads client asks,
// polling until the worker has applied it, as a client would.
func TestKeywordInsightsCountTheCurrentHour(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{clientTestTimeout}})
	demo := &twitter.Client{Authorizer: oauth1Auth{t: t, s: s, baseURL: s.baseURL,
		token: userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}}, Client: &http.Client{Timeout: 30 * time.Second}, Host: s.baseURL}
	hour := time.Now().UTC().Truncate(time.Hour)
	posted := time.Now().UTC().Truncate(time.Second)
	createPost(t, demo, "Kestrels hovering over the meadow")

	modules := npmPackage(t, twitterAdsPackage, twitterAdsVersion)
	input := map[string]any{"base": s.baseURL, "keyword": "kestrels", "start": hour.Add(-2 * time.Hour).Format(time.RFC3339)}
	var res struct {
		Last adsCall
		Asks int
		MS   int
	}
	runNodeScript(t, s, modules, twitterAdsCurrentHourScript, input, &res)
	data := res.Last.data(t, "keyword insights without end_time")
	got := volumes(data)
	var total float64
	for _, v := range got {
		total += v
	}
	if total != 1 || len(got) < 3 || got[len(got)-1] != 1 && got[len(got)-2] != 1 {
		t.Fatalf("tweet_volume %v after %d asks in %d ms, want the post just made counted in the current hour", got, res.Asks, res.MS)
	}
	req, _ := res.Last.Body["request"].(map[string]any)
	params, _ := req["params"].(map[string]any)
	end, err := time.Parse(time.RFC3339, fmt.Sprint(params["end_time"]))
	if err != nil || end.Before(posted) {
		t.Errorf("request.params.end_time %v (%v), want the moment of the request, after the post (%s)", params["end_time"], err, posted)
	}
	t.Logf("the post counted after %d asks, %d ms after the first", res.Asks, res.MS)
}
