package e2e

import (
	"testing"
	"time"
)

// clientTestTimeout relaxes the API's 500 ms bound on each statement for
// the client-library tests: they check what a client gets, and the e2e
// package runs many stacks at once on a small machine, where a statement
// can stall past the bound (the bound itself is tested in api/outage_test.go;
// docs/outages.md).
const clientTestTimeout = "AVIARY_DEPENDENCY_TIMEOUT=5s"

// The npm ads client github.com/FallenTech/twitter-ads (the Node client of
// the platform's ads API), pinned.
const (
	twitterAdsPackage = "twitter-ads"
	twitterAdsVersion = "0.2.1"
)

// twitterAdsScript drives the ads API with twitter-ads as an application
// does. The library builds its URLs from two host constants
// (API_HOST, API_SANDBOX_HOST); pointing them at Aviary's two listeners is
// the only change. It signs every request with OAuth 1.0a (the request
// library's oauth option) and sends parameters in the query string. Each
// call's outcome is recorded as {status, body} (or {error: {status,
// errors}}) and printed as one JSON object.
const twitterAdsScript = `'use strict';
const constants = require('twitter-ads/lib/constants');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
constants.API_HOST = cfg.base + '/';
constants.API_SANDBOX_HOST = cfg.sandbox + '/';
const TwitterAdsAPI = require('twitter-ads');

function client(sandbox) {
  return new TwitterAdsAPI({ consumer_key: cfg.appKey, consumer_secret: cfg.appSecret,
    access_token: cfg.accessToken, access_token_secret: cfg.accessSecret, sandbox: sandbox, api_version: '12' });
}

function call(api, method, path, params) {
  return new Promise((resolve) => {
    api[method](path, params, (err, resp, body) => {
      if (err) resolve({ status: resp ? resp.statusCode : 0, error: err.allErrors || String(err), body: body });
      else resolve({ status: resp.statusCode, body: body });
    });
  });
}

async function main() {
  const ads = client(false);
  const acct = { account_id: cfg.account };
  const out = {};
  out.accounts = await call(ads, 'get', 'accounts', {});
  out.account = await call(ads, 'get', 'accounts/:account_id', acct);
  out.rename = await call(ads, 'put', 'accounts/:account_id', { account_id: cfg.account, name: 'Renamed by twitter-ads' });
  out.funding = await call(ads, 'get', 'accounts/:account_id/funding_instruments', acct);
  const fi = out.funding.body.data[0].id;
  out.campaign = await call(ads, 'post', 'accounts/:account_id/campaigns', { account_id: cfg.account,
    funding_instrument_id: fi, name: 'e2e campaign', daily_budget_amount_local_micro: 50000000, entity_status: 'PAUSED' });
  const campaign = out.campaign.body.data.id;
  out.lineItems = [];
  for (let i = 0; i < 3; i++) {
    out.lineItems.push(await call(ads, 'post', 'accounts/:account_id/line_items', { account_id: cfg.account,
      campaign_id: campaign, name: 'e2e line item ' + i, objective: 'ENGAGEMENTS', product_type: 'PROMOTED_TWEETS',
      placements: ['ALL_ON_SERVICE'], bid_strategy: 'AUTO', entity_status: 'PAUSED' }));
  }
  out.badLineItem = await call(ads, 'post', 'accounts/:account_id/line_items', { account_id: cfg.account,
    campaign_id: campaign, objective: 'REACH', product_type: 'PROMOTED_TWEETS', placements: ['ALL_ON_SERVICE'],
    bid_strategy: 'MAX', bid_amount_local_micro: 1000000 });
  out.pages = [];
  let cursor = null;
  do {
    const params = { account_id: cfg.account, campaign_ids: [campaign], count: 2, sort_by: 'name-desc' };
    if (cursor) params.cursor = cursor;
    const page = await call(ads, 'get', 'accounts/:account_id/line_items', params);
    out.pages.push(page);
    cursor = page.body.next_cursor;
  } while (cursor && out.pages.length < 10);
  const first = out.lineItems[0].body.data.id;
  out.pause = await call(ads, 'put', 'accounts/:account_id/line_items/:line_item_id',
    { account_id: cfg.account, line_item_id: first, entity_status: 'ACTIVE', bid_strategy: 'AUTO' });
  out.remove = await call(ads, 'delete', 'accounts/:account_id/line_items/:line_item_id', { account_id: cfg.account, line_item_id: first });
  out.removeAgain = await call(ads, 'delete', 'accounts/:account_id/line_items/:line_item_id', { account_id: cfg.account, line_item_id: first });
  out.history = await call(ads, 'get', 'accounts/:account_id/account_history', { account_id: cfg.account,
    entity_type: 'LINE_ITEM', entity_id: first, start_time: cfg.start, end_time: cfg.end });

  const sandbox = client(true);
  out.sandboxCreate = await call(sandbox, 'post', 'accounts', {});
  out.sandboxList = await call(sandbox, 'get', 'accounts', {});
  out.productionOnSandbox = await call(sandbox, 'get', 'accounts/:account_id', acct);
  const created = out.sandboxCreate.body.data[0].id;
  out.sandboxOnProduction = await call(ads, 'get', 'accounts/:account_id', { account_id: created });
  out.sandboxDelete = await call(sandbox, 'delete', 'accounts/:account_id', { account_id: created });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
`

// adsCall is one recorded call of the script.
type adsCall struct {
	Status int            `json:"status"`
	Body   map[string]any `json:"body"`
	Error  any            `json:"error"`
}

func (c adsCall) data(t *testing.T, what string) map[string]any {
	t.Helper()
	d, ok := c.Body["data"].(map[string]any)
	if c.Status != 200 && c.Status != 201 || !ok {
		t.Fatalf("%s: status %d, error %v, body %v", what, c.Status, c.Error, c.Body)
	}
	return d
}

func (c adsCall) list(t *testing.T, what string) []map[string]any {
	t.Helper()
	raw, ok := c.Body["data"].([]any)
	if c.Status != 200 && c.Status != 201 || !ok {
		t.Fatalf("%s: status %d, error %v, body %v", what, c.Status, c.Error, c.Body)
	}
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		out[i], _ = r.(map[string]any)
	}
	return out
}

func (c adsCall) errorCode(t *testing.T, what string, status int, code string) {
	t.Helper()
	errs, _ := c.Body["errors"].([]any)
	if c.Status != status || len(errs) == 0 || errs[0].(map[string]any)["code"] != code {
		t.Fatalf("%s: status %d body %v, want %d %s", what, c.Status, c.Body, status, code)
	}
}

type twitterAdsResult struct {
	Accounts, Account, Rename, Funding, Campaign, BadLineItem adsCall
	LineItems, Pages                                          []adsCall
	Pause, Remove, RemoveAgain, History                       adsCall
	SandboxCreate, SandboxList, ProductionOnSandbox           adsCall
	SandboxOnProduction, SandboxDelete                        adsCall
}

// TestAdsTwitterAdsClient drives the ads API with the npm twitter-ads
// client against a stack: accounts, funding instruments, campaigns, line
// items (rules, pages, soft delete), account history and the sandbox.
func TestAdsTwitterAdsClient(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local", workers: 0, env: []string{clientTestTimeout}})
	modules := npmPackage(t, twitterAdsPackage, twitterAdsVersion)
	hour := time.Now().UTC().Truncate(time.Hour)
	input := map[string]any{"base": s.baseURL, "sandbox": s.sandboxURL, "account": s.creds.AdsAccountID,
		"start": hour.Add(-time.Hour).Format(time.RFC3339), "end": hour.Add(2 * time.Hour).Format(time.RFC3339)}
	var res twitterAdsResult
	runNodeScript(t, s, modules, twitterAdsScript, input, &res)

	if got := res.Accounts.list(t, "GET accounts"); len(got) != 1 || got[0]["id"] != s.creds.AdsAccountID {
		t.Fatalf("accounts %v, want the demo account only", got)
	}
	if a := res.Account.data(t, "GET account"); a["business_id"] == nil || a["deleted"] != false {
		t.Fatalf("account %v", a)
	}
	if a := res.Rename.data(t, "PUT account"); a["name"] != "Renamed by twitter-ads" {
		t.Fatalf("renamed account %v", a)
	}
	if fis := res.Funding.list(t, "GET funding_instruments"); len(fis) != 1 || fis[0]["entity_status"] != "ACTIVE" {
		t.Fatalf("funding instruments %v", fis)
	}
	if c := res.Campaign.data(t, "POST campaign"); c["entity_status"] != "PAUSED" || c["daily_budget_amount_local_micro"] != float64(50000000) {
		t.Fatalf("campaign %v", c)
	}
	created := map[string]bool{}
	for i, li := range res.LineItems {
		d := li.data(t, "POST line item")
		if d["bid_strategy"] != "AUTO" || d["bid_amount_local_micro"] != nil || d["goal"] == nil {
			t.Fatalf("line item %d: %v", i, d)
		}
		created[d["id"].(string)] = true
	}
	res.BadLineItem.errorCode(t, "MAX bid for REACH", 400, "INVALID_PARAMETER")
	seen, prev := map[string]bool{}, "\uffff"
	for i, page := range res.Pages {
		for _, li := range page.list(t, "GET line_items page") {
			name := li["name"].(string)
			if seen[li["id"].(string)] || name > prev {
				t.Fatalf("page %d: %s repeated or out of name-desc order", i, li["id"])
			}
			seen[li["id"].(string)], prev = true, name
		}
	}
	if len(res.Pages) != 2 || len(seen) != 3 {
		t.Fatalf("%d pages with %d line items, want 2 pages with 3", len(res.Pages), len(seen))
	}
	for id := range created {
		if !seen[id] {
			t.Fatalf("line item %s not listed", id)
		}
	}
	if d := res.Pause.data(t, "PUT line item"); d["entity_status"] != "ACTIVE" {
		t.Fatalf("updated line item %v", d)
	}
	if d := res.Remove.data(t, "DELETE line item"); d["deleted"] != true {
		t.Fatalf("deleted line item %v", d)
	}
	res.RemoveAgain.errorCode(t, "second DELETE", 404, "LINE_ITEM_NOT_FOUND")
	var types []string
	for _, h := range res.History.list(t, "GET account_history") {
		types = append(types, h["change_type"].(string))
	}
	if len(types) != 3 || types[0] != "CREATE" || types[1] != "UPDATE" || types[2] != "DELETE" {
		t.Fatalf("history change types %v, want CREATE, UPDATE, DELETE", types)
	}

	sandboxAccounts := res.SandboxCreate.list(t, "sandbox POST accounts")
	if len(sandboxAccounts) != 1 {
		t.Fatalf("sandbox create returned %v", sandboxAccounts)
	}
	if l := res.SandboxList.list(t, "sandbox GET accounts"); len(l) != 1 || l[0]["id"] != sandboxAccounts[0]["id"] {
		t.Fatalf("sandbox accounts %v, want only the sandbox one", l)
	}
	res.ProductionOnSandbox.errorCode(t, "production account on the sandbox", 403, "ACCOUNT_NOT_FOUND")
	res.SandboxOnProduction.errorCode(t, "sandbox account in production", 403, "ACCOUNT_NOT_FOUND")
	if d := res.SandboxDelete.data(t, "sandbox DELETE account"); d["deleted"] != true {
		t.Fatalf("deleted sandbox account %v", d)
	}
}
