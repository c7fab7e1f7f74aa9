package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// xdkActivityScript manages activity subscriptions with the official SDK
// @xdevplatform/xdk (its activity client), given Aviary's base URL, the
// app's bearer token and the demo user's OAuth 1.0a token: a webhook to
// deliver to (webhooks.create), subscriptions by the bearer token (a
// public type, an alias), the refusals (retired name, duplicate, a
// private type app-only), a private type by the user's own token, pages
// of the list, an update, and both deletes.
const xdkActivityScript = `'use strict';
const { Client, OAuth1, ApiError } = require('@xdevplatform/xdk');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);

async function attempt(promise) {
  try {
    return { ok: await promise };
  } catch (e) {
    return e instanceof ApiError ? { status: e.status, data: e.data } : { error: String(e) };
  }
}

async function main() {
  const app = new Client({ baseUrl: cfg.base, bearerToken: cfg.bearer });
  const oauth1 = new OAuth1({ apiKey: cfg.appKey, apiSecret: cfg.appSecret, callback: 'oob',
    accessToken: cfg.accessToken, accessTokenSecret: cfg.accessSecret });
  const user = new Client({ baseUrl: cfg.base, oauth1 });
  const out = {};
  const hook = await app.webhooks.create({ url: cfg.url });
  out.webhookId = hook.data.id;
  out.bio = await app.activity.createSubscription({ eventType: 'profile.update.bio', filter: { userId: cfg.userId },
    tag: 'bio updates', webhookId: out.webhookId });
  out.alias = await app.activity.createSubscription({ eventType: 'profile.update.verified', filter: { userId: cfg.userId } });
  out.retired = await attempt(app.activity.createSubscription({ eventType: 'ProfileBioUpdate', filter: { userId: cfg.userId } }));
  out.duplicate = await attempt(app.activity.createSubscription({ eventType: 'profile.update.bio', filter: { userId: cfg.userId },
    webhookId: out.webhookId }));
  out.privateAppOnly = await attempt(app.activity.createSubscription({ eventType: 'like.create', filter: { userId: cfg.userId } }));
  out.privateOwn = await user.activity.createSubscription({ eventType: 'like.create', filter: { userId: cfg.userId, direction: 'inbound' } });
  out.page1 = await app.activity.getSubscriptions({ maxResults: 2 });
  out.page2 = await app.activity.getSubscriptions({ maxResults: 2, paginationToken: out.page1.meta.nextToken });
  out.updated = await app.activity.updateSubscription(out.bio.data.subscription.subscriptionId, { tag: 'renamed' });
  out.deleted = await app.activity.deleteSubscription(out.alias.data.subscription.subscriptionId);
  out.deletedByIds = await app.activity.deleteSubscriptionsByIds([out.bio.data.subscription.subscriptionId,
    out.alias.data.subscription.subscriptionId]);
  out.left = await app.activity.getSubscriptions();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiError ? JSON.stringify({ status: e.status, data: e.data }) : e);
  process.exit(1);
});
`

// dig walks a decoded JSON value by object keys and array indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// TestActivitySubscriptionsEndToEnd (issue 29): the subscriptions CRUD
// through the built binary with xdk's activity client: creation with a
// webhook of the app, an alias answered canonical, the retired name, the
// duplicate and the app-only private type refused, the private type with
// the user's own OAuth 1.0a token, pages, update, delete one and by ids.
func TestActivitySubscriptionsEndToEnd(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, xdkPackage, xdkVersion)
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: webhookEnv})
	recv := newReceiver(t, s.creds.ConsumerSecret)
	var out map[string]any
	runNodeScript(t, s, modules, xdkActivityScript, map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "url": recv.url(),
		"userId": s.creds.UserID, "appKey": s.creds.ConsumerKey, "appSecret": s.creds.ConsumerSecret,
		"accessToken": s.creds.AccessToken, "accessSecret": s.creds.AccessTokenSecret}, &out)

	hook := dig(out, "webhookId")
	bio := dig(out, "bio", "data", "subscription")
	if dig(bio, "eventType") != "profile.update.bio" || dig(bio, "filter", "userId") != s.creds.UserID ||
		dig(bio, "tag") != "bio updates" || dig(bio, "webhookId") != hook || dig(bio, "createdAt") == nil {
		t.Errorf("createSubscription answered %v", dig(out, "bio"))
	}
	if got := dig(out, "alias", "data", "subscription", "eventType"); got != "profile.update.verified_badge" {
		t.Errorf("the alias answered as %v, want profile.update.verified_badge", got)
	}
	refusals := []struct {
		key, want string
		status    int
	}{
		{"retired", "profile.update.bio", http.StatusBadRequest},
		{"duplicate", "DuplicateSubscription", http.StatusBadRequest},
		{"privateAppOnly", "unsupported-authentication", http.StatusForbidden},
	}
	for _, r := range refusals {
		if got := dig(out, r.key, "status"); got != float64(r.status) || !strings.Contains(fmt.Sprint(dig(out, r.key, "data")), r.want) {
			t.Errorf("%s: %v, want %d naming %s", r.key, dig(out, r.key), r.status, r.want)
		}
	}
	if got := dig(out, "privateOwn", "data", "subscription", "filter", "direction"); got != "inbound" {
		t.Errorf("like.create with the user's own token answered %v", dig(out, "privateOwn"))
	}
	p1, p2 := dig(out, "page1"), dig(out, "page2")
	if len(dig(p1, "data").([]any)) != 2 || dig(p1, "meta", "totalSubscriptions") != float64(3) || len(dig(p2, "data").([]any)) != 1 ||
		dig(p2, "meta", "nextToken") != nil {
		t.Errorf("pages answered %v then %v", p1, p2)
	}
	if dig(out, "updated", "data", "subscription", "tag") != "renamed" || dig(out, "updated", "data", "totalSubscriptions") != float64(3) {
		t.Errorf("updateSubscription answered %v", dig(out, "updated"))
	}
	if dig(out, "deleted", "data", "deleted") != true || dig(out, "deleted", "meta", "totalSubscriptions") != float64(2) {
		t.Errorf("deleteSubscription answered %v", dig(out, "deleted"))
	}
	byIDs := dig(out, "deletedByIds")
	if dig(byIDs, "data", 0, "deleted") != true || dig(byIDs, "errors", 0, "reason") != "SubscriptionNotFound" ||
		dig(byIDs, "meta", "totalSubscriptions") != float64(1) {
		t.Errorf("deleteSubscriptionsByIds answered %v", byIDs)
	}
	if left := dig(out, "left", "data").([]any); len(left) != 1 || dig(left, 0, "eventType") != "like.create" {
		t.Errorf("left %v, want the like.create subscription", left)
	}
}
