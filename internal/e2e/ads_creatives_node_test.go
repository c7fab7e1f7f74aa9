package e2e

import (
	"strings"
	"testing"
)

// twitterAdsCreativesScript drives issue 30's endpoints with the npm
// twitter-ads client, as an application does (parameters in the query
// string, OAuth 1.0a signed by the library): a text poll card created,
// read, listed and deleted; an ads post carrying the card, renamed and
// listed; a name one character too long refused. Each outcome is recorded
// as in twitterAdsScript.
const twitterAdsCreativesScript = `'use strict';
const constants = require('twitter-ads/lib/constants');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
constants.API_HOST = cfg.base + '/';
constants.API_SANDBOX_HOST = cfg.sandbox + '/';
const TwitterAdsAPI = require('twitter-ads');

const ads = new TwitterAdsAPI({ consumer_key: cfg.appKey, consumer_secret: cfg.appSecret,
  access_token: cfg.accessToken, access_token_secret: cfg.accessSecret, sandbox: false, api_version: '12' });

function call(method, path, params) {
  return new Promise((resolve) => {
    ads[method](path, params, (err, resp, body) => {
      if (err) resolve({ status: resp ? resp.statusCode : 0, error: err.allErrors || String(err), body: body });
      else resolve({ status: resp.statusCode, body: body });
    });
  });
}

async function main() {
  const account_id = cfg.account;
  const out = {};
  out.poll = await call('post', 'accounts/:account_id/cards/poll', { account_id, name: 'which bird',
    duration_in_minutes: 60, first_choice: 'Heron', second_choice: 'Egret' });
  const card = out.poll.body && out.poll.body.data ? out.poll.body.data : {};
  out.pollRead = await call('get', 'accounts/:account_id/cards/poll/:card_id', { account_id, card_id: card.id });
  out.pollList = await call('get', 'accounts/:account_id/cards/poll', { account_id, with_total_count: true });
  out.post = await call('post', 'accounts/:account_id/tweet', { account_id, as_user_id: cfg.userID,
    text: 'Vote: which bird?', card_uri: card.card_uri, name: 'bird poll post' });
  const post = out.post.body && out.post.body.data ? out.post.body.data : {};
  out.rename = await call('put', 'accounts/:account_id/tweets/:tweet_id/name', { account_id, tweet_id: post.id_str, name: 'renamed poll post' });
  out.list = await call('get', 'accounts/:account_id/tweets', { account_id, tweet_type: 'PUBLISHED', tweet_ids: [post.id_str] });
  out.tooLong = await call('post', 'accounts/:account_id/tweet', { account_id, as_user_id: cfg.userID,
    text: 'x', name: 'n'.repeat(81) });
  out.pollDelete = await call('delete', 'accounts/:account_id/cards/poll/:card_id', { account_id, card_id: card.id });
  out.pollGone = await call('get', 'accounts/:account_id/cards/poll/:card_id', { account_id, card_id: card.id });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

type twitterAdsCreativesResult struct {
	Poll, PollRead, PollList, Post, Rename, List, TooLong, PollDelete, PollGone adsCall
}

// TestAdsCreativesTwitterAdsClient (issue 30): poll cards and ads posts
// through the npm twitter-ads client, unmodified but for its host.
func TestAdsCreativesTwitterAdsClient(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{driver: "local", workers: 0, env: []string{clientTestTimeout}})
	modules := npmPackage(t, twitterAdsPackage, twitterAdsVersion)
	input := map[string]any{"base": s.baseURL, "sandbox": s.sandboxURL, "account": s.creds.AdsAccountID, "userID": s.creds.UserID}
	var res twitterAdsCreativesResult
	runNodeScript(t, s, modules, twitterAdsCreativesScript, input, &res)

	card := res.Poll.data(t, "POST cards/poll")
	if card["card_type"] != "TEXT_POLLS" || card["first_choice"] != "Heron" || card["duration_in_minutes"] != "60" ||
		!strings.HasPrefix(card["card_uri"].(string), "card://") {
		t.Fatalf("poll card %v", card)
	}
	if got := res.PollRead.data(t, "GET cards/poll/:id"); got["id"] != card["id"] || got["name"] != "which bird" {
		t.Fatalf("poll read %v", got)
	}
	if l := res.PollList.list(t, "GET cards/poll"); len(l) != 1 || res.PollList.Body["total_count"] != float64(1) {
		t.Fatalf("poll list %v (total_count %v)", l, res.PollList.Body["total_count"])
	}
	post := res.Post.data(t, "POST tweet")
	if post["name"] != "bird poll post" || post["id_str"] == nil || post["tweet_type"] != "PUBLISHED" || post["nullcast"] != true {
		t.Fatalf("ads post %v", post)
	}
	// The ads post object has no card_uri (the spec's shape); the core read shows it.
	core := s.bearerAt(s.baseURL, "GET", "/2/tweets/"+post["id_str"].(string)+"?tweet.fields=card_uri", nil)
	if dig(core.Body, "data", "card_uri") != card["card_uri"] {
		t.Fatalf("GET /2/tweets/{id} answered %d %s, want card_uri %v", core.Status, core.Raw, card["card_uri"])
	}
	if _, ok := post["conversation_settings"]; ok {
		t.Errorf("the create answer carries conversation_settings: %v", post)
	}
	if got := res.Rename.data(t, "PUT tweets/:id/name"); got["name"] != "renamed poll post" {
		t.Fatalf("renamed post %v", got)
	}
	listed := res.List.list(t, "GET tweets")
	if len(listed) != 1 || listed[0]["name"] != "renamed poll post" || listed[0]["conversation_settings"] == nil {
		t.Fatalf("listed posts %v", listed)
	}
	res.TooLong.errorCode(t, "a name of 81 characters", 400, "INVALID_PARAMETER")
	if d := res.PollDelete.data(t, "DELETE cards/poll/:id"); d["id"] != card["id"] {
		t.Fatalf("deleted poll %v", d)
	}
	if res.PollGone.Status != 404 {
		t.Fatalf("the deleted poll card answered %d %v", res.PollGone.Status, res.PollGone.Body)
	}
}
