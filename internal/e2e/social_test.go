package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// socialScript follows, mutes and blocks with the npm client
// twitter-api-v2 (v2.follow, unfollow, mute, unmute, block, unblock,
// following, followers) as the demo user, and follows the demo user as
// bob, who is then refused a follow while blocked.
const socialScript = `'use strict';
const { TwitterApi, ApiResponseError } = require('twitter-api-v2');
` + aviaryInputAndPluginJS + `
async function failure(promise) {
  try {
    await promise;
    return { error: 'no error' };
  } catch (e) {
    return e instanceof ApiResponseError ? { code: e.code, data: e.data } : { error: String(e) };
  }
}

async function main() {
  const settings = { plugins: [aviary] };
  const demo = new TwitterApi({ appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret }, settings);
  const bob = new TwitterApi({ appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.bobToken, accessSecret: cfg.bobSecret }, settings);
  const app = new TwitterApi(cfg.bearer, settings);
  const out = {};
  out.follow = await demo.v2.follow(cfg.demoId, cfg.bobId);
  out.following = await demo.v2.following(cfg.demoId, { 'user.fields': ['public_metrics'] });
  out.followers = await app.v2.followers(cfg.bobId, { 'user.fields': ['public_metrics'] });
  out.unfollow = await demo.v2.unfollow(cfg.demoId, cfg.bobId);
  out.mute = await demo.v2.mute(cfg.demoId, cfg.bobId);
  out.muting = await demo.v2.get('users/' + cfg.demoId + '/muting');
  out.unmute = await demo.v2.unmute(cfg.demoId, cfg.bobId);
  out.bobFollows = await bob.v2.follow(cfg.bobId, cfg.demoId);
  out.block = await demo.v2.block(cfg.demoId, cfg.bobId);
  out.blockedFollow = await failure(bob.v2.follow(cfg.bobId, cfg.demoId));
  out.unblock = await demo.v2.unblock(cfg.demoId, cfg.bobId);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

// byFilter splits "type>user" keys by user, keeping their order.
func byFilter(keys []string) map[string][]string {
	out := map[string][]string{}
	for _, k := range keys {
		_, user, _ := strings.Cut(k, ">")
		out[user] = append(out[user], k)
	}
	return out
}

// TestSocialActivityEndToEnd (issue 29): every social graph event type
// produced by its endpoint, driven by twitter-api-v2, and received over a
// signed webhook and over GET /2/activity/stream, with subscriptions made
// through POST /2/activity/subscriptions. Follow events (public, app-only
// subscriptions) reach the follower and the followed; mute and block
// events (private) reach only the acting user, through subscriptions of
// their own token: the muted and blocked user's own subscriptions receive
// nothing. Mute and block subscriptions are refused app-only and with
// another user's token. A block ends a follow (its follow.unfollow) and
// refuses a new one.
func TestSocialActivityEndToEnd(t *testing.T) {
	t.Parallel()
	modules := twitterAPIV2(t)
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles, env: webhookEnv})
	recv, hookID := newWebhookReceiver(t, s)
	bobTok := s.userToken("bob_social")
	bob, err := s.db.UserByUsername(t.Context(), "bob_social")
	if err != nil {
		t.Fatal(err)
	}
	demoTok := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	demoID, bobID := s.creds.UserID, fmt.Sprint(bob.ID)
	sub := func(typ, user string) map[string]any {
		return map[string]any{"event_type": typ, "filter": map[string]any{"user_id": user}, "webhook_id": hookID}
	}
	created := func(what string, r response) {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("subscribe %s: %d %s", what, r.Status, r.Raw)
		}
	}
	for _, typ := range []string{"follow.follow", "follow.unfollow"} {
		created(typ+" (app-only)", s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions", sub(typ, demoID)))
	}
	created("bob's follow.follow (app-only)", s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions", sub("follow.follow", bobID)))
	for _, typ := range []string{"mute.mute", "mute.unmute", "block.block", "block.unblock"} {
		created(typ+" (own token)", s.signedJSONAt(demoTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions", sub(typ, demoID)))
		if r := s.bearerAt(s.baseURL, http.MethodPost, "/2/activity/subscriptions", sub(typ, demoID)); r.Status != http.StatusForbidden ||
			!strings.Contains(string(r.Raw), "unsupported-authentication") {
			t.Errorf("%s app-only: %d %s, want 403 unsupported-authentication", typ, r.Status, r.Raw)
		}
		if r := s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions", sub(typ, demoID)); r.Status != http.StatusForbidden ||
			!strings.Contains(string(r.Raw), "not-authorized-for-resource") {
			t.Errorf("%s with another user's token: %d %s, want 403 not-authorized-for-resource", typ, r.Status, r.Raw)
		}
	}
	// Bob's own private subscriptions: being muted or blocked is never his event.
	for _, typ := range []string{"mute.mute", "block.block"} {
		created("bob's "+typ, s.signedJSONAt(bobTok, s.baseURL, http.MethodPost, "/2/activity/subscriptions", sub(typ, bobID)))
	}

	stream := openStreamPath(t, s.client, s.baseURL, "/2/activity/stream", s.creds.BearerToken, nil)
	if stream.Status != http.StatusOK {
		t.Fatalf("GET /2/activity/stream answered %d %s", stream.Status, stream.Raw)
	}
	s.waitConnections(s.baseURL, "active", 1, 10*time.Second)

	var out map[string]any
	runNodeScript(t, s, modules, socialScript, map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken,
		"demoId": demoID, "bobId": bobID, "bobToken": bobTok.token, "bobSecret": bobTok.secret}, &out, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	answers := []struct {
		key  string
		path []any
		want any
	}{
		{"follow", []any{"data", "following"}, true},
		{"follow", []any{"data", "pending_follow"}, false},
		{"following", []any{"data", 0, "id"}, bobID},
		{"following", []any{"data", 0, "public_metrics", "followers_count"}, float64(1)},
		{"followers", []any{"data", 0, "id"}, demoID},
		{"unfollow", []any{"data", "following"}, false},
		{"mute", []any{"data", "muting"}, true},
		{"muting", []any{"data", 0, "id"}, bobID},
		{"unmute", []any{"data", "muting"}, false},
		{"bobFollows", []any{"data", "following"}, true},
		{"block", []any{"data", "blocking"}, true},
		{"blockedFollow", []any{"code"}, float64(403)},
		{"unblock", []any{"data", "blocking"}, false},
	}
	for _, a := range answers {
		if got := dig(out[a.key], a.path...); got != a.want {
			t.Errorf("%s %v = %v, want %v (answer %v)", a.key, a.path, got, a.want, out[a.key])
		}
	}

	want := map[string][]string{
		demoID: {"follow.follow>" + demoID, "follow.unfollow>" + demoID, "mute.mute>" + demoID, "mute.unmute>" + demoID,
			"follow.follow>" + demoID, "follow.unfollow>" + demoID, "block.block>" + demoID, "block.unblock>" + demoID},
		// demo follows bob, then bob follows demo: both are bob's too.
		bobID: {"follow.follow>" + bobID, "follow.follow>" + bobID},
	}
	total := len(want[demoID]) + len(want[bobID])
	got := recv.waitFor("the social activity events", 30*time.Second, func(ds []delivery) bool {
		return len(webhookActivity(ds)) >= total
	})
	if keys := byFilter(webhookActivity(got)); !slices.Equal(keys[demoID], want[demoID]) || !slices.Equal(keys[bobID], want[bobID]) || len(keys) != 2 {
		t.Errorf("webhook received %v, want %v", keys, want)
	}
	for _, d := range got {
		data, _ := d.Body["data"].(map[string]any)
		if data["event_uuid"] != d.EventID {
			t.Errorf("delivery %s: event_uuid differs from x-aviary-event-id %q", d.Raw, d.EventID)
		}
		source, target := dig(data, "payload", "source", "data", "id"), dig(data, "payload", "target", "data", "id")
		if source == nil || target == nil || source == target {
			t.Errorf("delivery %s: want the source and target users", d.Raw)
		}
	}
	first, _ := got[0].Body["data"].(map[string]any)
	if dig(first, "payload", "source", "data", "id") != demoID || dig(first, "payload", "target", "data", "id") != bobID ||
		dig(first, "payload", "source", "data", "public_metrics", "following_count") != float64(1) {
		t.Errorf("the first follow's payload %v", first)
	}
	if _, bad := recv.counts(); bad != 0 {
		t.Errorf("%d deliveries carried a wrong signature", bad)
	}

	var lines []string
	for len(lines) < total {
		m, ok := stream.next(20 * time.Second)
		if !ok {
			t.Fatalf("the activity stream ended or went quiet after %v (want %v)", lines, want)
		}
		if k := activityKey(m.Data); k != "" {
			lines = append(lines, k)
		}
	}
	if keys := byFilter(lines); !slices.Equal(keys[demoID], want[demoID]) || !slices.Equal(keys[bobID], want[bobID]) || len(keys) != 2 {
		t.Errorf("activity stream received %v, want %v", keys, want)
	}
	stream.close()
}
