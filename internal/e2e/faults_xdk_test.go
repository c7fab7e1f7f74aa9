package e2e

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// xdkFaultsScript meets injected faults with the official SDK
// @xdevplatform/xdk, one library call per fault: users.getMe (429 with
// rate-limit headers, then served), posts.searchRecent (503),
// users.getByUsername (500), users.getById (usage-capped 429),
// users.getByIds (402 CreditsDepleted), stream.posts (429
// TooManyConnections at connect, then a stream ended by
// operational-disconnect). For each failure it prints what the library
// exposes: the error class, status, headers and parsed body.
const xdkFaultsScript = `'use strict';
const { Client, OAuth1, ApiError } = require('@xdevplatform/xdk');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function failure(promise) {
  try {
    await promise;
    return { served: true };
  } catch (e) {
    if (!(e instanceof ApiError)) return { error: String(e) };
    return { name: e.name, message: e.message, status: e.status, statusText: e.statusText,
      headers: Object.fromEntries(e.headers.entries()), data: e.data };
  }
}

async function main() {
  const app = new Client({ baseUrl: cfg.base, bearerToken: cfg.bearer });
  const oauth1 = new OAuth1({ apiKey: cfg.appKey, apiSecret: cfg.appSecret, callback: 'oob',
    accessToken: cfg.accessToken, accessTokenSecret: cfg.accessSecret });
  const user = new Client({ baseUrl: cfg.base, oauth1 });
  const out = { streamData: [], streamEvents: [] };
  out.limited = await failure(user.users.getMe());
  out.after = (await user.users.getMe()).data.username;
  out.unavailable = await failure(app.posts.searchRecent('hello'));
  out.internal = await failure(app.users.getByUsername(cfg.username));
  out.capped = await failure(app.users.getById(cfg.userId));
  out.credits = await failure(app.users.getByIds([cfg.userId]));
  out.connections = await failure(app.stream.posts());

  const stream = await app.stream.posts();
  stream.on('data', (d) => out.streamData.push(d));
  stream.on('error', (e) => out.streamEvents.push('error: ' + String(e.error)));
  let closed = false;
  stream.on('close', (e) => { out.streamEvents.push('close: ' + e.message); closed = true; });
  const until = Date.now() + 30000;
  while (!closed) {
    if (Date.now() > until) throw new Error('the stream was not ended: ' + JSON.stringify(out));
    await sleep(20);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiError ? JSON.stringify({ status: e.status, data: e.data }) : e);
  process.exit(1);
});
`

// xdkFailure is what the script prints for a library call that failed (or
// Served, or Error for a failure that is not xdk's ApiError).
type xdkFailure struct {
	Served     bool              `json:"served"`
	Error      string            `json:"error"`
	Name       string            `json:"name"`
	Message    string            `json:"message"`
	Status     int               `json:"status"`
	StatusText string            `json:"statusText"`
	Headers    map[string]string `json:"headers"`
	Data       map[string]any    `json:"data"`
}

type xdkFaultsResult struct {
	Limited      *xdkFailure      `json:"limited"`
	After        string           `json:"after"`
	Unavailable  *xdkFailure      `json:"unavailable"`
	Internal     *xdkFailure      `json:"internal"`
	Capped       *xdkFailure      `json:"capped"`
	Credits      *xdkFailure      `json:"credits"`
	Connections  *xdkFailure      `json:"connections"`
	StreamData   []map[string]any `json:"streamData"`
	StreamEvents []string         `json:"streamEvents"`
}

// TestFaultsXDK sets one fault per kind through /_aviary/faults with the
// app's bearer token and drives each with the call a user of xdk 0.6.6
// would make: every failure is xdk's ApiError with the status, the
// platform's problem body as its data and, for the 429, the x-rate-limit
// headers (xdk parses no rate-limit object: it hands over the Headers);
// the stream connect over the limit is an ApiError 429 with
// connection_issue TooManyConnections; the next stream delivers the
// operational-disconnect message as data, then closes.
func TestFaultsXDK(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, xdkPackage, xdkVersion)
	s := newStack(t, stackOptions{driver: "local", workers: 1})
	for _, f := range faultsPerKind() {
		if r := s.do("POST", "/_aviary/faults", s.bearer(), f); r.Status != http.StatusCreated {
			t.Fatalf("create fault %v: %d %s", f, r.Status, r.Raw)
		}
	}
	start := time.Now().Unix()
	var res xdkFaultsResult
	runNodeScript(t, s, modules, xdkFaultsScript, map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken,
		"username": s.creds.Username, "userId": s.creds.UserID}, &res)

	l := res.Limited
	checkXDKFailure(t, "getMe under 429", l, 429, "about:blank", "Too Many Requests")
	if l != nil {
		limit, _ := strconv.Atoi(l.Headers["x-rate-limit-limit"])
		reset, _ := strconv.ParseInt(l.Headers["x-rate-limit-reset"], 10, 64)
		if limit <= 0 || l.Headers["x-rate-limit-remaining"] != "0" || reset < start+590 || reset > time.Now().Unix()+601 {
			t.Errorf("429 headers %v, want a limit, remaining 0 and reset 600 s ahead", l.Headers)
		}
		if l.Message != "HTTP 429: Too Many Requests" {
			t.Errorf("429 message %q", l.Message)
		}
	}
	if res.After != s.creds.Username {
		t.Errorf("getMe after the fault's one hit: %q", res.After)
	}
	checkXDKFailure(t, "searchRecent under 503", res.Unavailable, 503, "about:blank", "Service Unavailable")
	checkXDKFailure(t, "getByUsername under 500", res.Internal, 500, problemPrefix+"internal-error", "Internal Error")
	c := res.Capped
	checkXDKFailure(t, "getById under usage_capped", c, 429, problemPrefix+"usage-capped", "UsageCapExceeded")
	if c != nil && (c.Data["period"] != "Monthly" || c.Data["scope"] != "Product") {
		t.Errorf("usage-capped body %v", c.Data)
	}
	cr := res.Credits
	checkXDKFailure(t, "getByIds under credits_depleted", cr, 402, problemPrefix+"credits", "CreditsDepleted")
	if cr != nil && (cr.Data["account_id"] == nil || cr.Data["detail"] == nil) {
		t.Errorf("credits body %v", cr.Data)
	}
	tm := res.Connections
	checkXDKFailure(t, "stream.posts under too_many_connections", tm, 429, problemPrefix+"streaming-connection", "ConnectionException")
	if tm != nil && tm.Data["connection_issue"] != "TooManyConnections" {
		t.Errorf("too-many-connections body %v", tm.Data)
	}
	found := false
	for _, d := range res.StreamData {
		errs, _ := d["errors"].([]any)
		for _, e := range errs {
			if m, _ := e.(map[string]any); m["title"] == "operational-disconnect" && m["disconnect_type"] == "UpstreamOperationalDisconnect" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the stream's data %v holds no operational-disconnect (events %v)", res.StreamData, res.StreamEvents)
	}
	if len(res.StreamEvents) == 0 || res.StreamEvents[len(res.StreamEvents)-1] != "close: Connection closed" {
		t.Errorf("stream events %v, want it closed by the server", res.StreamEvents)
	}
	list := s.do("GET", "/_aviary/faults", s.bearer(), nil)
	data, _ := list.Body["data"].([]any)
	if len(data) != len(faultsPerKind()) {
		t.Fatalf("the app's faults: %s", list.Raw)
	}
	for _, f := range data {
		if m := f.(map[string]any); m["hits"] != float64(1) {
			t.Errorf("fault %v: hits %v, want 1", m["effect"], m["hits"])
		}
	}
}

const problemPrefix = "https://api.x.com/2/problems/"

// faultsPerKind is one counted fault of each kind the library tests meet,
// in the order their scripts call: the two stream faults share the route,
// and the oldest applies first.
func faultsPerKind() []map[string]any {
	fault := func(method, route string, effect map[string]any) map[string]any {
		return map[string]any{"match": map[string]any{"method": method, "route": route}, "effect": effect, "count": 1}
	}
	return []map[string]any{
		fault("GET", "/2/users/me", map[string]any{"type": "status", "status": 429, "reset_seconds": 600}),
		fault("GET", "/2/tweets/search/recent", map[string]any{"type": "status", "status": 503}),
		fault("GET", "/2/users/by/username/{username}", map[string]any{"type": "status", "status": 500}),
		fault("GET", "/2/users/{id}", map[string]any{"type": "usage_capped"}),
		fault("GET", "/2/users", map[string]any{"type": "credits_depleted"}),
		fault("GET", "/2/tweets/search/stream", map[string]any{"type": "too_many_connections"}),
		fault("GET", "/2/tweets/search/stream", map[string]any{"type": "operational_disconnect", "after_ms": 500}),
	}
}

// checkXDKFailure asserts f is xdk's ApiError with status and the
// problem's type and title as its data.
func checkXDKFailure(t *testing.T, what string, f *xdkFailure, status int, typ, title string) {
	t.Helper()
	if f == nil || f.Served || f.Error != "" {
		t.Errorf("%s: %+v, want xdk's ApiError", what, f)
		return
	}
	if f.Name != "ApiError" || f.Status != status || f.Data["type"] != typ || f.Data["title"] != title ||
		f.Data["status"] != float64(status) || f.Data["detail"] == nil {
		t.Errorf("%s: ApiError %d %q %v, want %d %s %q", what, f.Status, f.Name, f.Data, status, typ, title)
	}
}
