package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/ids"
)

// TestConsoleBrowser walks the developer console (docs/console.md) in
// headless Chromium as a developer does, a screenshot of each page kept
// (AVIARY_TEST_ARTIFACTS): log in, create an app (its credentials shown
// once, and they work), revoke a bearer token (the API refuses it after),
// watch a compliance job reach complete on the page that polls its
// fragment (the upload happens while the page stays open), and redeliver a
// webhook delivery (the receiver gets the post again). Every page passes
// the accessibility audit and sends the anti-framing headers (checkShots);
// on a phone-sized viewport the pages do not scroll sideways.
func TestConsoleBrowser(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, env: webhookEnv})
	ctx := t.Context()
	demoApp, err := s.db.AppByName(ctx, "aviary-demo")
	if err != nil {
		t.Fatal(err)
	}
	appPage := s.baseURL + "/console/apps/" + ids.Format(demoApp.ID)

	// A second bearer token of the demo app, to revoke in the console.
	var extra struct {
		Token string `json:"bearer_token"`
	}
	s.runJSON(&extra, "admin", "bearer", "create", "--app", "aviary-demo", "--json")
	if r := s.do(http.MethodGet, "/2/compliance/jobs?type=tweets", "Bearer "+extra.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("the extra bearer token before revocation: %d %s", r.Status, r.Raw)
	}

	// A compliance job waiting for its upload, which the browser sends
	// while the console page is open.
	job := s.createJob("tweets", "console-watch")
	jobID, uploadURL := job["id"].(string), job["upload_url"].(string)

	// A webhook linked to the filtered stream with one delivered post.
	recv := newReceiver(t, s.creds.ConsumerSecret)
	hook := s.do(http.MethodPost, "/2/webhooks", s.bearer(), map[string]any{"url": recv.url()})
	if hook.Status != http.StatusOK {
		t.Fatalf("register webhook: %d %s", hook.Status, hook.Raw)
	}
	hookID := hook.Body["data"].(map[string]any)["id"].(string)
	if r := s.do(http.MethodPost, "/2/tweets/search/webhooks/"+hookID, s.bearer(), nil); r.Status != http.StatusOK {
		t.Fatalf("link webhook: %d %s", r.Status, r.Raw)
	}
	s.addRules(s.baseURL, s.creds.BearerToken, ruleSpec{Value: "egret", Tag: "egrets"})
	post := s.mustPostAt(userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}, s.baseURL, "an egret in the console")
	recv.waitFor("the egret post", 30*time.Second, func(ds []delivery) bool { return slices.Contains(postIDs(ds), post) })
	deliveryID := firstDelivery(t, s, hookID)

	steps := []browserStep{shot("login")}
	steps = append(steps, login(s.creds.Username, s.creds.Password)...)
	steps = append(steps, expectURL(s.baseURL+"/console/apps"), expectText("aviary-demo"), shot("apps"),
		fill("App name", "console-browser-app"), click("Create app"), expectText("shown only once"), shot("app-created"),
		goTo(appPage), shot("app"), click("Revoke bearer token "+maskToken(extra.Token)), expectText("The bearer token was revoked."),
		shot("token-revoked"),
		goTo(s.baseURL+"/console/compliance"), expectText("console-watch"), shot("compliance-open"),
		put(uploadURL, "1\n2\n3\n"), waitText("job-"+jobID+"-status", "complete"), expectURL(s.baseURL+"/console/compliance"),
		shot("compliance-complete"),
		goTo(s.baseURL+"/console/webhooks"), expectText(recv.url()), shot("webhooks"),
		goTo(appPage+"/webhooks/"+hookID), shot("webhook"), click("Redeliver delivery "+deliveryID),
		expectText("Queued again as delivery"), shot("webhook-redelivered"),
		goTo(s.baseURL+"/console/queues"), expectText("compliance"), shot("queues"),
		viewport("390x844"), goTo(appPage), fitsWidth(), shot("phone-app"),
		goTo(s.baseURL+"/console/compliance"), fitsWidth(), shot("phone-compliance"))

	runBrowserScenarios(t, s, []browserScenario{{Name: "console", Start: s.baseURL + "/console", Steps: steps,
		check: func(t *testing.T, r browserResult) {
			created := r.shot(t, "app-created")
			bearer := created.Elements["bearer-token"].Text
			if created.Status != http.StatusCreated || bearer == "" || created.Elements["consumer-secret"].Text == "" {
				t.Fatalf("app created page: %d %+v", created.Status, created.Elements)
			}
			if resp := s.do(http.MethodGet, "/2/compliance/jobs?type=tweets", "Bearer "+bearer, nil); resp.Status != http.StatusOK {
				t.Errorf("the new app's bearer token shown once: %d %s", resp.Status, resp.Raw)
			}
			if app := r.shot(t, "app"); strings.Contains(app.Text, created.Elements["consumer-secret"].Text) {
				t.Error("a page shows a secret again")
			}
			if resp := s.do(http.MethodGet, "/2/compliance/jobs?type=tweets", "Bearer "+extra.Token, nil); resp.Status != http.StatusUnauthorized {
				t.Errorf("the revoked bearer token: %d %s, want 401", resp.Status, resp.Raw)
			}
			if open := r.shot(t, "compliance-open"); !strings.Contains(open.Text, "created") && !strings.Contains(open.Text, "in_progress") {
				t.Errorf("the job was not open when the page loaded:\n%s", open.Text)
			}
			if done := s.waitJob(jobID, 30*time.Second); done["status"] != "complete" {
				t.Errorf("job %s: %v", jobID, done["status"])
			}
			recv.waitFor("the redelivered egret post", 30*time.Second, func(ds []delivery) bool {
				n := 0
				for _, id := range postIDs(ds) {
					if id == post {
						n++
					}
				}
				return n >= 2
			})
			if q := r.shot(t, "queues"); !strings.Contains(q.Text, "queue dashboard") {
				t.Errorf("the queues page does not link the dashboard:\n%s", q.Text)
			}
		}}})
}

// firstDelivery is the id of the webhook's first delivery, from its log.
func firstDelivery(t *testing.T, s *stack, hookID string) string {
	t.Helper()
	r := s.do(http.MethodGet, "/2/webhooks/"+hookID+"/deliveries", s.bearer(), nil)
	data, _ := r.Body["data"].([]any)
	if r.Status != http.StatusOK || len(data) == 0 {
		t.Fatalf("delivery log: %d %s", r.Status, r.Raw)
	}
	return fmt.Sprint(data[len(data)-1].(map[string]any)["id"])
}

// maskToken is how the console shows a token (storage/postgres).
func maskToken(token string) string { return token[:4] + "…" + token[len(token)-4:] }
