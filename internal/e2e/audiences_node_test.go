package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"testing"
)

// twitterAdsAudiencesPrelude is the start of the audience scripts: the
// twitter-ads host constants pointed at Aviary, the batch paths added to
// the client's JSON_PATHS (its own switch for sending a JSON body),
// client(version), call() and sleep().
const twitterAdsAudiencesPrelude = `'use strict';
const constants = require('twitter-ads/lib/constants');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
constants.API_HOST = cfg.base + '/';
const usersPath = 'accounts/:account_id/custom_audiences/:custom_audience_id/users';
const dnrPath = 'batch/accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id/users';
const productsPath = 'product_catalogs/:product_catalog_id/products';
constants.JSON_PATHS.push(usersPath, dnrPath, productsPath);
const TwitterAdsAPI = require('twitter-ads');

function client(version) {
  return new TwitterAdsAPI({ consumer_key: cfg.appKey, consumer_secret: cfg.appSecret,
    access_token: cfg.accessToken, access_token_secret: cfg.accessSecret, sandbox: false, api_version: version });
}

function call(api, method, path, params, body) {
  return new Promise((resolve) => {
    const done = (err, resp, out) => {
      if (err) resolve({ status: resp ? resp.statusCode : 0, error: err.allErrors || String(err), body: out });
      else resolve({ status: resp.statusCode, body: out });
    };
    if (body === undefined) api[method](path, params, done);
    else api[method](path, params, body, done);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

`

// twitterAdsAudiencesScript drives custom audiences, their users batches,
// audience sharing (/5/), do-not-reach lists and product catalogs with the
// npm twitter-ads client. As in twitterAdsScript, the host constants are
// pointed at Aviary; the batch paths are added to the client's
// JSON_PATHS, its own switch for sending a JSON body. Asynchronous work
// (batches, image checks) is polled like a client polls.
const twitterAdsAudiencesScript = twitterAdsAudiencesPrelude + `// poll calls until done(reply) or 60 tries.
async function poll(fn, done) {
  let r;
  for (let i = 0; i < 60; i++) {
    r = await fn();
    if (done(r)) return r;
    await sleep(250);
  }
  return r;
}

async function main() {
  const ads = client('12');
  const five = client('5');
  const a = cfg.account;
  const out = {};
  out.audience = await call(ads, 'post', 'accounts/:account_id/custom_audiences', { account_id: a, name: 'e2e audience' });
  const aud = out.audience.body.data.id;
  const batch = [{ operation_type: 'Update', params: { users: cfg.users } }];
  out.batch = await call(ads, 'post', usersPath, { account_id: a, custom_audience_id: aud }, batch);
  out.batchAgain = await call(ads, 'post', usersPath, { account_id: a, custom_audience_id: aud }, batch);
  out.badBatch = await call(ads, 'post', usersPath, { account_id: a, custom_audience_id: aud },
    [{ operation_type: 'Update', params: { users: [{ email: ['jane@example.com'] }] } }]);
  out.applied = await poll(() => call(ads, 'get', 'accounts/:account_id/custom_audiences/:custom_audience_id', { account_id: a, custom_audience_id: aud }),
    (r) => r.body && r.body.data && !r.body.data.reasons_not_targetable.includes('PROCESSING'));
  const perms = 'accounts/:account_id/tailored_audiences/:tailored_audience_id/permissions';
  out.grant = await call(five, 'post', perms, { account_id: a, tailored_audience_id: aud, granted_account_id: cfg.peer, permission_level: 'READ_ONLY' });
  out.grants = await call(five, 'get', perms, { account_id: a, tailored_audience_id: aud });
  out.shared = await call(ads, 'get', 'accounts/:account_id/custom_audiences', { account_id: cfg.peer });
  out.revoke = await call(five, 'delete', perms + '/:tailored_audience_permission_id',
    { account_id: a, tailored_audience_id: aud, tailored_audience_permission_id: out.grant.body.data.id });

  out.list = await call(ads, 'post', 'accounts/:account_id/do_not_reach_lists', { account_id: a, description: 'e2e' });
  const dnr = out.list.body.data.id;
  out.dnrBatch = await call(ads, 'post', dnrPath, { account_id: a, do_not_reach_list_id: dnr },
    [{ operation_type: 'Update', params: { users: cfg.users } }]);
  out.dnrApplied = await poll(() => call(ads, 'get', 'accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id', { account_id: a, do_not_reach_list_id: dnr }),
    (r) => r.body && r.body.data && !r.body.data.reasons_not_targetable.includes('PROCESSING'));

  out.catalog = await call(ads, 'post', 'product_catalogs', { name: 'e2e catalog' });
  const cat = out.catalog.body.data.id;
  out.products = await call(ads, 'put', productsPath, { product_catalog_id: cat }, { products: cfg.products });
  out.checked = await poll(() => call(ads, 'get', productsPath, { product_catalog_id: cat }),
    (r) => r.body && r.body.data && r.body.data.length > 0 && r.body.data.every((p) => p.review_status !== 'PENDING'));
  out.catalogGone = await call(ads, 'delete', 'product_catalogs/:product_catalog_id', { product_catalog_id: cat });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

type twitterAdsAudiencesResult struct {
	Audience, Batch, BatchAgain, BadBatch, Applied adsCall
	Grant, Grants, Shared, Revoke                  adsCall
	List, DnrBatch, DnrApplied                     adsCall
	Catalog, Products, Checked, CatalogGone        adsCall
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestAudiencesTwitterAdsClient drives the audience, do-not-reach and
// catalog endpoints with the npm twitter-ads client against a stack with a
// worker: batches are recorded, applied by the worker and counted once
// when retried; sharing over /5/; a product's image check (its image link
// resolves to loopback: refused without a connection) settles it.
func TestAudiencesTwitterAdsClient(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{clientTestTimeout}})
	modules := npmPackage(t, twitterAdsPackage, twitterAdsVersion)
	userID, err := strconv.ParseInt(s.creds.UserID, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := s.db.CreateAdAccount(t.Context(), userID, "e2e peer", false)
	if err != nil {
		t.Fatal(err)
	}
	users := []map[string][]string{
		{"email": {sha256Hex("jane@example.com")}},
		{"email": {sha256Hex("john@example.com")}, "phone_number": {sha256Hex("15555550100")}},
	}
	product := map[string]any{"id": "sku-1", "title": "Blue mug", "description": "A mug.", "availability": "in stock",
		"condition": "new", "price": "9.99 USD", "link": "https://shop.example/mug", "image_link": "http://localhost:1/mug.jpg",
		"brand": "Aviary", "inventory": 3}
	input := map[string]any{"base": s.baseURL, "account": s.creds.AdsAccountID, "peer": peer.ID, "users": users,
		"products": []any{product}}
	var res twitterAdsAudiencesResult
	runNodeScript(t, s, modules, twitterAdsAudiencesScript, input, &res)

	res.Audience.data(t, "POST custom_audiences")
	counts := res.Batch.list(t, "POST users")
	if len(counts) != 1 || counts[0]["success_count"] != float64(2) || counts[0]["total_count"] != float64(2) {
		t.Fatalf("batch counts %v, want one operation with 2 of 2 users", counts)
	}
	again := res.BatchAgain.list(t, "POST users again")
	if again[0]["success_count"] != counts[0]["success_count"] {
		t.Fatalf("the same batch again answered %v, want %v", again, counts)
	}
	res.BadBatch.errorCode(t, "plain-text email", 400, "INVALID_PARAMETER")
	if p := res.BadBatch.Body["errors"].([]any)[0].(map[string]any)["parameter"]; p != "operations[0].params.users[0].email[0]" {
		t.Fatalf("bad batch names %v", p)
	}
	applied := res.Applied.data(t, "GET custom audience")
	if applied["audience_size"] != float64(2) {
		t.Fatalf("audience after the batch (sent twice): %v, want audience_size 2 (each user object one member)", applied)
	}
	if g := res.Grant.data(t, "POST permission"); g["permission_level"] != "READ_ONLY" || g["granted_account_id"] != peer.ID {
		t.Fatalf("grant %v", g)
	}
	if l := res.Grants.list(t, "GET permissions"); len(l) != 1 {
		t.Fatalf("permissions %v", l)
	}
	if sh := res.Shared.list(t, "GET shared audiences"); len(sh) != 1 || sh[0]["permission_level"] != "READ_ONLY" {
		t.Fatalf("the peer account's audiences %v, want the shared one", sh)
	}
	if r := res.Revoke.data(t, "DELETE permission"); r["deleted"] != true {
		t.Fatalf("revoked %v", r)
	}
	res.List.data(t, "POST do_not_reach_lists")
	res.DnrBatch.list(t, "POST do-not-reach batch")
	if l := res.DnrApplied.data(t, "GET do-not-reach list"); l["list_size"] != float64(3) {
		t.Fatalf("do-not-reach list after its batch: %v, want list_size 3", l)
	}
	res.Catalog.data(t, "POST product_catalogs")
	checked := res.Checked.list(t, "GET products")
	if len(checked) != 1 || checked[0]["review_status"] != "REJECTED" {
		t.Fatalf("products after the image check %v, want REJECTED (image link on loopback)", checked)
	}
	if res.CatalogGone.Status != 200 {
		t.Fatalf("DELETE catalog: %d %v", res.CatalogGone.Status, res.CatalogGone.Body)
	}
}

// twitterAdsPeopleScript sends users batches to one custom audience with
// the npm twitter-ads client, polling the audience after each until the
// worker has applied it (no PROCESSING), and reports audience_size after
// each step.
const twitterAdsPeopleScript = twitterAdsAudiencesPrelude + `async function main() {
  const ads = client('12');
  const a = cfg.account;
  const created = await call(ads, 'post', 'accounts/:account_id/custom_audiences', { account_id: a, name: 'e2e people' });
  const aud = created.body.data.id;
  const out = { steps: [] };
  for (const step of cfg.steps) {
    const sent = await call(ads, 'post', usersPath, { account_id: a, custom_audience_id: aud }, step);
    let got;
    for (let i = 0; i < 120; i++) {
      got = await call(ads, 'get', 'accounts/:account_id/custom_audiences/:custom_audience_id', { account_id: a, custom_audience_id: aud });
      if (got.body && got.body.data && !got.body.data.reasons_not_targetable.includes('PROCESSING')) break;
      await sleep(250);
    }
    out.steps.push({ sent: sent, audience: got });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

// TestAudiencePeopleTwitterAdsClient: audience_size counts people (issue
// 23), through the npm twitter-ads client and a worker: a user object
// with an email and a phone number is one member; a later one sharing the
// phone number is that member; the first batch sent again changes
// nothing; one sharing identifiers with two members merges them; a Delete
// naming any identifier of the member removes it.
func TestAudiencePeopleTwitterAdsClient(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: []string{clientTestTimeout}})
	modules := npmPackage(t, twitterAdsPackage, twitterAdsVersion)
	jane := map[string][]string{"email": {sha256Hex("jane@example.com")}, "phone_number": {sha256Hex("15555550100")}}
	batch := func(kind string, users ...map[string][]string) []any {
		return []any{map[string]any{"operation_type": kind, "params": map[string]any{"users": users}}}
	}
	steps := []struct {
		name  string
		batch []any
		size  float64
	}{
		{"email and phone, and another person", batch("Update", jane, map[string][]string{"email": {sha256Hex("joe@example.com")}}), 2},
		{"a later user sharing the phone", batch("Update", map[string][]string{"phone_number": {sha256Hex("15555550100")},
			"handle": {sha256Hex("jane")}}), 2},
		{"the first batch again", batch("Update", jane, map[string][]string{"email": {sha256Hex("joe@example.com")}}), 2},
		{"a user sharing identifiers with both", batch("Update", map[string][]string{"handle": {sha256Hex("jane")},
			"email": {sha256Hex("joe@example.com")}}), 1},
		{"a Delete naming one identifier", batch("Delete", map[string][]string{"handle": {sha256Hex("jane")}}), 0},
	}
	var sent []any
	for _, st := range steps {
		sent = append(sent, st.batch)
	}
	input := map[string]any{"base": s.baseURL, "account": s.creds.AdsAccountID, "steps": sent}
	var res struct {
		Steps []struct{ Sent, Audience adsCall }
	}
	runNodeScript(t, s, modules, twitterAdsPeopleScript, input, &res)
	if len(res.Steps) != len(steps) {
		t.Fatalf("%d steps reported, want %d", len(res.Steps), len(steps))
	}
	for i, st := range steps {
		res.Steps[i].Sent.list(t, st.name)
		got := res.Steps[i].Audience.data(t, st.name+": GET custom audience")
		if slices.Contains(stringList(got["reasons_not_targetable"]), "PROCESSING") {
			t.Fatalf("%s: the worker never applied the batch: %v", st.name, got)
		}
		if got["audience_size"] != st.size {
			t.Errorf("%s: audience_size %v, want %v", st.name, got["audience_size"], st.size)
		}
	}
}
