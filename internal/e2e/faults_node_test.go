package e2e

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"
)

// twitterAPIV2FaultsScript meets injected faults with twitter-api-v2: a
// 429 on v2.me (the library's rate-limit error, with its rateLimit read
// from the headers), a 503 on v2.userByUsername, a 500 on v2.user, a
// usage-capped 429 on v2.search, a 402 CreditsDepleted on v2.users, a
// TooManyConnections 429 on a stream connect, and a filtered stream
// (autoReconnect off) that the server ends with operational-disconnect.
const twitterAPIV2FaultsScript = twitterAPIV2Prelude + `
const { ETwitterStreamEvent } = require('twitter-api-v2');
const plugin = Object.assign({}, aviary, { onBeforeStreamRequestConfig: aviary.onBeforeRequestConfig });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function failure(e) {
  if (!(e instanceof ApiResponseError)) throw e;
  return { code: e.code, rateLimitError: e.rateLimitError, rateLimit: e.rateLimit || null, data: e.data };
}

async function main() {
  const user = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [plugin] });
  const app = new TwitterApi(cfg.bearer, { plugins: [plugin] });
  const out = { dataErrors: [], events: [] };
  try { await user.v2.me(); out.limited = 'served'; } catch (e) { out.limited = failure(e); }
  out.after = (await user.v2.me()).data.username;
  try { await app.v2.userByUsername(cfg.username); out.unavailable = 'served'; } catch (e) { out.unavailable = failure(e); }
  try { await app.v2.user(cfg.userId); out.internal = 'served'; } catch (e) { out.internal = failure(e); }
  try { await app.v2.search('hello'); out.capped = 'served'; } catch (e) { out.capped = failure(e); }
  try { await app.v2.users([cfg.userId]); out.credits = 'served'; } catch (e) { out.credits = failure(e); }
  try {
    const busy = await app.v2.searchStream({ autoConnect: false });
    await busy.connect({ autoReconnect: false });
    busy.close();
    out.connections = 'served';
  } catch (e) { out.connections = failure(e); }

  const stream = await app.v2.searchStream({ autoConnect: false });
  stream.on(ETwitterStreamEvent.DataError, (d) => out.dataErrors.push(d));
  for (const ev of [ETwitterStreamEvent.Connected, ETwitterStreamEvent.ConnectionLost,
    ETwitterStreamEvent.ConnectionError, ETwitterStreamEvent.ConnectionClosed]) {
    stream.on(ev, () => out.events.push(ev));
  }
  await stream.connect({ autoReconnect: false });
  const until = Date.now() + 30000;
  while (!out.events.includes(ETwitterStreamEvent.ConnectionLost) && !out.events.includes(ETwitterStreamEvent.ConnectionClosed)) {
    if (Date.now() > until) throw new Error('the stream was not ended: ' + JSON.stringify(out));
    await sleep(20);
  }
  stream.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

type libraryFailure struct {
	Code           int               `json:"code"`
	RateLimitError bool              `json:"rateLimitError"`
	RateLimit      *libraryRateLimit `json:"rateLimit"`
	Data           map[string]any    `json:"data"`
}

type twitterAPIV2FaultsResult struct {
	Limited     *libraryFailure  `json:"limited"`
	After       string           `json:"after"`
	Unavailable *libraryFailure  `json:"unavailable"`
	Internal    *libraryFailure  `json:"internal"`
	Capped      *libraryFailure  `json:"capped"`
	Credits     *libraryFailure  `json:"credits"`
	Connections *libraryFailure  `json:"connections"`
	DataErrors  []map[string]any `json:"dataErrors"`
	Events      []string         `json:"events"`
}

// TestFaultsTwitterAPIV2 sets faults through /_aviary/faults (two with the
// app's bearer token, one as the admin) on a real stack and drives it with
// the npm client twitter-api-v2: the injected 429 is the library's
// ApiResponseError with rateLimitError true and its rateLimit filled from
// the x-rate-limit headers; the next request is served (count 1); the
// injected 503 is an ApiResponseError with the platform's body; the stream
// is ended by the operational-disconnect message. Every fault lists its hit.
func TestFaultsTwitterAPIV2(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles, env: []string{clientTestTimeout}})
	admin := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:secret"))
	faults := []struct {
		authz string
		body  map[string]any
	}{
		{s.bearer(), map[string]any{"match": map[string]any{"method": "GET", "route": "/2/users/me"},
			"effect": map[string]any{"type": "status", "status": 429, "reset_seconds": 600}, "count": 1}},
		{s.bearer(), map[string]any{"match": map[string]any{"path_prefix": "/2/users/by/username/"},
			"effect": map[string]any{"type": "status", "status": 503}, "count": 1, "expires_in_seconds": 600}},
		{s.bearer(), map[string]any{"match": map[string]any{"method": "GET", "route": "/2/users/{id}"},
			"effect": map[string]any{"type": "status", "status": 500}, "count": 1}},
		{s.bearer(), map[string]any{"match": map[string]any{"method": "GET", "route": "/2/tweets/search/recent"},
			"effect": map[string]any{"type": "usage_capped"}, "count": 1}},
		{s.bearer(), map[string]any{"match": map[string]any{"method": "GET", "route": "/2/users"},
			"effect": map[string]any{"type": "credits_depleted"}, "count": 1}},
		// older than the admin's stream fault, so the first connect meets it
		{s.bearer(), map[string]any{"match": map[string]any{"method": "GET", "route": "/2/tweets/search/stream"},
			"effect": map[string]any{"type": "too_many_connections"}, "count": 1}},
		{admin, map[string]any{"match": map[string]any{"route": "/2/tweets/search/stream"},
			"effect": map[string]any{"type": "operational_disconnect", "after_ms": 500}, "count": 1}},
	}
	for _, f := range faults {
		req := s.newRequest("POST", "/_aviary/faults", f.body)
		req.Header.Set("Authorization", f.authz)
		req.Header.Set("Origin", s.baseURL) // the admin guard's same-origin rule for writes
		if r := s.send(req); r.Status != http.StatusCreated {
			t.Fatalf("create fault %v: %d %s", f.body, r.Status, r.Raw)
		}
	}
	start := time.Now().Unix()
	var res twitterAPIV2FaultsResult
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2FaultsScript,
		map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "username": s.creds.Username, "userId": s.creds.UserID}, &res,
		"NODE_EXTRA_CA_CERTS="+tlsFiles.cert)

	l := res.Limited
	if l == nil || l.Code != 429 || !l.RateLimitError || l.RateLimit == nil {
		t.Fatalf("v2.me under the 429 fault: %+v, want the library's rate-limit error", l)
	}
	if l.RateLimit.Limit <= 0 || l.RateLimit.Remaining != 0 || l.RateLimit.Reset < start+590 || l.RateLimit.Reset > time.Now().Unix()+601 {
		t.Errorf("rateLimit %+v, want a limit, remaining 0 and reset 600 s ahead", l.RateLimit)
	}
	if l.Data["title"] != "Too Many Requests" || l.Data["type"] != "about:blank" {
		t.Errorf("429 body %v", l.Data)
	}
	if res.After != s.creds.Username {
		t.Errorf("v2.me after the fault's one hit: %q", res.After)
	}
	u := res.Unavailable
	if u == nil || u.Code != 503 || u.RateLimitError || u.Data["title"] != "Service Unavailable" {
		t.Errorf("userByUsername under the 503 fault: %+v", u)
	}
	checkLibraryFailure(t, "user under 500", res.Internal, 500, false, problemPrefix+"internal-error", "Internal Error")
	c := res.Capped
	checkLibraryFailure(t, "search under usage_capped", c, 429, true, problemPrefix+"usage-capped", "UsageCapExceeded")
	if c != nil && (c.Data["period"] != "Monthly" || c.Data["scope"] != "Product") {
		t.Errorf("usage-capped body %v", c.Data)
	}
	cr := res.Credits
	checkLibraryFailure(t, "users under credits_depleted", cr, 402, false, problemPrefix+"credits", "CreditsDepleted")
	if cr != nil && cr.Data["account_id"] == nil {
		t.Errorf("credits body %v", cr.Data)
	}
	tm := res.Connections
	checkLibraryFailure(t, "stream connect under too_many_connections", tm, 429, true, problemPrefix+"streaming-connection", "ConnectionException")
	if tm != nil && tm.Data["connection_issue"] != "TooManyConnections" {
		t.Errorf("too-many-connections body %v", tm.Data)
	}
	found := false
	for _, d := range res.DataErrors {
		errs, _ := d["errors"].([]any)
		for _, e := range errs {
			if m, _ := e.(map[string]any); m["title"] == "operational-disconnect" && m["disconnect_type"] == "UpstreamOperationalDisconnect" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the stream's data errors %v hold no operational-disconnect (events %v)", res.DataErrors, res.Events)
	}

	list := s.do("GET", "/_aviary/faults", admin, nil)
	data, _ := list.Body["data"].([]any)
	if list.Status != http.StatusOK || len(data) != len(faults) {
		t.Fatalf("admin list: %d %s", list.Status, list.Raw)
	}
	for _, f := range data {
		if m := f.(map[string]any); m["hits"] != float64(1) {
			t.Errorf("fault %v: hits %v, want 1", m["effect"], m["hits"])
		}
	}
	if r := s.do("GET", "/_aviary/faults", s.bearer(), nil); len(r.Body["data"].([]any)) != len(faults)-1 {
		t.Errorf("the app's list: %s", r.Raw)
	}
}

// checkLibraryFailure asserts f is twitter-api-v2's ApiResponseError with
// code status, rateLimitError as given and the problem's type and title as
// its data.
func checkLibraryFailure(t *testing.T, what string, f *libraryFailure, status int, rateLimitError bool, typ, title string) {
	t.Helper()
	if f == nil {
		t.Errorf("%s: served, want the library's ApiResponseError", what)
		return
	}
	if f.Code != status || f.RateLimitError != rateLimitError || f.Data["type"] != typ || f.Data["title"] != title ||
		f.Data["detail"] == nil || f.Data["status"] != float64(status) {
		t.Errorf("%s: %+v, want code %d rateLimitError %v %s %q", what, f, status, rateLimitError, typ, title)
	}
}
