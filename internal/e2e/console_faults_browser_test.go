package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/ids"
)

// consoleFaultScript calls v2.me with twitter-api-v2 (OAuth 1.0a user
// context) once and reports the library's error, if any.
const consoleFaultScript = twitterAPIV2Prelude + `
async function main() {
  const user = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [aviary] });
  const out = {};
  try { out.served = (await user.v2.me()).data.username; } catch (e) {
    if (!(e instanceof ApiResponseError)) throw e;
    out.limited = { code: e.code, rateLimitError: e.rateLimitError, rateLimit: e.rateLimit || null, data: e.data };
  }
  out.after = (await user.v2.me()).data.username;
  process.stdout.write(JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
`

// TestConsoleFaultsBrowser switches a 429 fault on for GET /2/users/me of
// the demo app in the console (headless Chromium), sees twitter-api-v2 get
// its rate-limit error and the fault's hit in the console, then resets the
// sandbox from the console: the bootstrap credentials still work, a post
// made before is gone.
func TestConsoleFaultsBrowser(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles, env: []string{clientTestTimeout}})
	s.run("admin", "user", "admin", s.creds.Username, "on") // the reset is an administrator's
	demoApp, err := s.db.AppByName(t.Context(), "aviary-demo")
	if err != nil {
		t.Fatal(err)
	}
	post := s.mustPostAt(userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}, s.baseURL, "a post the reset removes")

	steps := append([]browserStep{shot("faults-login")}, login(s.creds.Username, s.creds.Password)...)
	steps = append(steps, goTo(s.baseURL+"/console/faults"), expectText("No fault is set."), shot("faults-empty"),
		fill("Method (empty: any)", "GET"), fill("Endpoint route (empty: any)", "/2/users/me"),
		fill("Status (effect status, 400–599)", "429"), fill("Count (the next N matching requests; empty: no limit)", "1"),
		click("Add fault"), expectText("added."), shot("fault-added"),
		goTo(s.baseURL+"/console/usage"), expectText("aviary-demo"), shot("usage"),
		goTo(s.baseURL+"/console/apps/"+ids.Format(demoApp.ID)+"/usage"), expectText("Posts per day"), shot("app-usage"))
	runBrowserScenarios(t, s, []browserScenario{{Name: "console-fault", Start: s.baseURL + "/console", Steps: steps, IgnoreHTTPSErrors: true,
		check: func(t *testing.T, r browserResult) {
			added := r.shot(t, "fault-added")
			for _, want := range []string{"aviary-demo", "GET /2/users/me", "status 429", "1 of 1"} {
				if !strings.Contains(added.Text, want) {
					t.Errorf("the faults page after adding does not show %q:\n%s", want, added.Text)
				}
			}
		}}})

	var res struct {
		Served  string          `json:"served"`
		Limited *libraryFailure `json:"limited"`
		After   string          `json:"after"`
	}
	runNodeScript(t, s, twitterAPIV2(t), consoleFaultScript, map[string]any{"base": s.baseURL}, &res,
		"NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	if l := res.Limited; l == nil || l.Code != http.StatusTooManyRequests || !l.RateLimitError || l.RateLimit == nil || l.RateLimit.Remaining != 0 {
		t.Fatalf("v2.me under the console's fault: served %q, error %+v; want the library's rate-limit error", res.Served, res.Limited)
	}
	if res.After != s.creds.Username {
		t.Errorf("v2.me after the fault's one hit: %q", res.After)
	}

	steps = append([]browserStep{}, login(s.creds.Username, s.creds.Password)...)
	steps = append(steps, goTo(s.baseURL+"/console/faults"), shot("fault-hit"),
		goTo(s.baseURL+"/console/state"), shot("state"), click("Reset state…"), expectText("It cannot be undone."),
		shot("state-confirm"), click("Yes, reset all state"), expectText("records removed"), shot("state-reset"),
		goTo(s.baseURL+"/console/faults"), expectText("No fault is set."), shot("faults-after-reset"))
	runBrowserScenarios(t, s, []browserScenario{{Name: "console-reset", Start: s.baseURL + "/console", Steps: steps, IgnoreHTTPSErrors: true,
		check: func(t *testing.T, r browserResult) {
			if hit := r.shot(t, "fault-hit"); !strings.Contains(hit.Text, "0 of 1") {
				t.Errorf("the fault's hit is not shown (want 0 of 1 left):\n%s", hit.Text)
			}
		}}})

	if r := s.do(http.MethodGet, "/2/users/by/username/"+s.creds.Username, s.bearer(), nil); r.Status != http.StatusOK || r.Body["data"] == nil {
		t.Errorf("the bootstrap bearer token after the reset: %d %s", r.Status, r.Raw)
	}
	r := s.do(http.MethodGet, "/2/tweets/"+post, s.bearer(), nil)
	if r.Body["data"] != nil || !strings.Contains(string(r.Raw), "Not Found Error") {
		t.Errorf("the post made before the reset: %d %s, want it gone", r.Status, r.Raw)
	}
}
