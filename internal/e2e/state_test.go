package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// stateCall is one representative read whose answer must survive export,
// reset and import unchanged.
type stateCall struct {
	name string
	path string
	user bool // OAuth 1.0a as the demo user; else the demo bearer token
}

// TestStateExportResetImport: a deployment with seeded and API-made
// records answers a representative set of reads; export, reset (the
// bootstrap token keeps working, the records are gone), import: every read
// answers as before, body for body.
func TestStateExportResetImport(t *testing.T) {
	s := newStack(t, stackOptions{driver: "local"})
	var seeded struct {
		Users      []string `json:"users"`
		AdAccounts []string `json:"ad_accounts"`
	}
	s.runJSON(&seeded, "admin", "seed", "--seed", "11", "--json")
	if len(seeded.Users) == 0 {
		t.Fatal("seed made no users")
	}

	// Records made through the API and, where a receiver would be needed,
	// as the API stores them.
	tok := s.demoToken()
	reply := s.signed(tok, http.MethodPost, "/2/tweets", map[string]any{"text": "state of the #aviary, cc @" + seeded.Users[0]})
	if reply.Status != http.StatusCreated {
		t.Fatalf("create post: %d %s", reply.Status, reply.Raw)
	}
	postID := reply.Body["data"].(map[string]any)["id"].(string)
	if r := s.do(http.MethodPost, "/2/compliance/jobs", s.bearer(), map[string]any{"type": "tweets", "name": "state"}); r.Status != http.StatusOK {
		t.Fatalf("create compliance job: %d %s", r.Status, r.Raw)
	}
	app, err := s.db.AppByBearerToken(t.Context(), s.creds.BearerToken)
	if err != nil {
		t.Fatal(err)
	}
	hook, err := s.db.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: app.ID, URL: "https://hooks.example.com/state", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	userID, _ := strconv.ParseInt(s.creds.UserID, 10, 64)
	if r := s.do(http.MethodPost, "/2/activity/subscriptions", s.bearer(), map[string]any{"event_type": "profile.update.bio",
		"filter": map[string]any{"user_id": s.creds.UserID}, "webhook_id": strconv.FormatInt(hook.ID, 10)}); r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("create activity subscription: %d %s", r.Status, r.Raw)
	}
	stateAds(t, s, userID)

	acct := "/12/accounts/" + s.creds.AdsAccountID
	calls := []stateCall{
		{"post with expansions", "/2/tweets?ids=" + postID + "&expansions=author_id,entities.mentions.username&tweet.fields=created_at,entities,public_metrics,conversation_id&user.fields=description,location,public_metrics", false},
		{"users by username", "/2/users/by?usernames=" + strings.Join(seeded.Users[:3], ",") + "&user.fields=created_at,description,location,url,public_metrics", false},
		{"search", "/2/tweets/search/recent?max_results=100&query=" + url.QueryEscape("#golang OR #aviary") + "&expansions=author_id&tweet.fields=created_at,entities,public_metrics", false},
		{"users/me", "/2/users/me?user.fields=created_at,public_metrics", true},
		{"compliance jobs", "/2/compliance/jobs?type=tweets", false},
		{"webhooks", "/2/webhooks", false},
		{"activity subscriptions", "/2/activity/subscriptions", false},
		{"ads campaigns", acct + "/campaigns", true},
		{"ads line items", acct + "/line_items", true},
	}
	read := func(c stateCall) response {
		t.Helper()
		if c.user {
			return s.signed(tok, http.MethodGet, c.path, nil)
		}
		return s.do(http.MethodGet, c.path, s.bearer(), nil)
	}
	before := map[string]response{}
	for _, c := range calls {
		r := read(c)
		if r.Status != http.StatusOK || len(r.Raw) < 20 {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Raw)
		}
		before[c.name] = r
	}
	if n := len(before["search"].Body["data"].([]any)); n < 10 {
		t.Fatalf("search found %d posts, want the seeded ones", n)
	}

	file := filepath.Join(t.TempDir(), "snapshot.json")
	s.run("admin", "export", "--out", file)

	// Reset over HTTP: the admin guard, then the bootstrap token still
	// works and the records are gone.
	req := s.newRequest(http.MethodPost, "/_aviary/state/reset", nil)
	req.Header.Set("Origin", s.baseURL)
	if r := s.send(req); r.Status != http.StatusUnauthorized {
		t.Fatalf("reset without the admin credential: %d %s", r.Status, r.Raw)
	}
	req = s.newRequest(http.MethodPost, "/_aviary/state/reset", map[string]any{"surfaces": []string{"all"}})
	req.SetBasicAuth("admin", "secret")
	req.Header.Set("Origin", s.baseURL)
	reset := s.send(req)
	if reset.Status != http.StatusOK {
		t.Fatalf("reset: %d %s", reset.Status, reset.Raw)
	}
	removed := reset.Body["data"].(map[string]any)["removed"].(map[string]any)
	if removed["posts"] == nil || removed["webhooks"] == nil || removed["campaigns"] == nil {
		t.Errorf("reset removed %v, want posts, webhooks and campaigns", removed)
	}
	me := read(calls[3])
	if me.Status != http.StatusOK || me.Body["data"].(map[string]any)["id"] != s.creds.UserID {
		t.Fatalf("users/me with the bootstrap token after reset: %d %s", me.Status, me.Raw)
	}
	if r := read(calls[2]); r.Status != http.StatusOK || r.Body["data"] != nil {
		t.Errorf("search after reset: %d %s, want no posts", r.Status, r.Raw)
	}
	if r := read(calls[5]); r.Status != http.StatusOK || bytes.Contains(r.Raw, []byte("hooks.example.com")) {
		t.Errorf("webhooks after reset: %d %s, want none", r.Status, r.Raw)
	}

	s.run("admin", "import", "--in", file)
	for _, c := range calls {
		r := read(c)
		if r.Status != http.StatusOK || !sameJSON(before[c.name].Raw, r.Raw) {
			t.Errorf("%s after import:\n got %d %s\nwant %s", c.name, r.Status, r.Raw, before[c.name].Raw)
		}
	}
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// stateAds gives the demo ads account a funding instrument, a campaign and
// a line item, as the ads API stores them.
func stateAds(t *testing.T, s *stack, userID int64) {
	t.Helper()
	ctx, acct := t.Context(), s.creds.AdsAccountID
	fi, err := s.db.CreateFundingInstrument(ctx, acct, storage.NewFundingInstrument{Name: "Card", Type: "CREDIT_CARD", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	daily := int64(50_000_000)
	c, err := s.db.CreateCampaign(ctx, userID, storage.NewCampaign{AccountID: acct, FundingInstrumentID: fi.ID, Name: "state campaign",
		EntityStatus: "PAUSED", BudgetOptimization: "LINE_ITEM", DailyBudget: &daily})
	if err != nil {
		t.Fatal(err)
	}
	name, goal, bid := "state line item", "ENGAGEMENT", int64(2_000_000)
	if _, err := s.db.CreateLineItem(ctx, userID, acct, c.ID, func(storage.LineItemCampaign) (storage.LineItem, error) {
		return storage.LineItem{Name: &name, Currency: "USD", Objective: "ENGAGEMENTS", ProductType: "PROMOTED_TWEETS",
			Placements: []string{"ALL_ON_SERVICE"}, Goal: &goal, BidStrategy: "MAX", BidAmountLocalMicro: &bid,
			EntityStatus: "PAUSED", CreativeSource: "MANUAL"}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestStateSeedDir: an API process started with AVIARY_SEED_DIR applies
// its seed spec once; the seeded posts answer recent search.
func TestStateSeedDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "01-fixture.json"), []byte(`{"format":"aviary-seed","seed":21}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, stackOptions{driver: "local", env: []string{"AVIARY_SEED_DIR=" + dir}})
	if _, err := s.db.AppByName(t.Context(), "aviary-seed-21"); err != nil {
		t.Fatalf("the seed spec was not applied: %v", err)
	}
	if sum, err := s.db.SeedFileApplied(t.Context(), "01-fixture.json"); err != nil || sum == "" {
		t.Fatalf("the seed file is not recorded: %q, %v", sum, err)
	}
	r := s.do(http.MethodGet, "/2/tweets/search/recent?max_results=100&query="+url.QueryEscape("#golang OR #aviary OR #coffee OR #testing OR #api"), s.bearer(), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("search: %d %s", r.Status, r.Raw)
	}
	if data, _ := r.Body["data"].([]any); len(data) == 0 {
		t.Errorf("search found none of the seeded posts: %s", r.Raw)
	}
}
