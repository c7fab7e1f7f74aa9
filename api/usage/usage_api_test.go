package usage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/usage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// setup runs the API with a usage meter of cfg; admin changes show at once.
func setup(t *testing.T, cfg usage.Config) (*apitest.Bundle, *usage.Meter) {
	t.Helper()
	b, m, _ := setupRedis(t, cfg)
	return b, m
}

// setupRedis is setup that also returns the meter's Redis.
func setupRedis(t *testing.T, cfg usage.Config) (*apitest.Bundle, *usage.Meter, *redis.Client) {
	t.Helper()
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	cfg.SettingsTTL = time.Nanosecond
	var m *usage.Meter
	b := apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		m = usage.New(cfg, usage.Deps{Store: db, Redis: rc, Prefix: "t:", Errors: d.Errors})
		d.Modules.Usage = m
	})
	return b, m, rc
}

// get is a GET whatever its status.
func get(t *testing.T, b *apitest.Bundle, path, authz string) apitest.Reply {
	t.Helper()
	return b.Call(t, "GET", path, authz, "", nil)
}

func search(q string) string {
	return "/2/tweets/search/recent?" + url.Values{"query": {q}, "expansions": {"referenced_tweets.id,author_id"}}.Encode()
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestUsageCountsAndCaps: a search with includes counts its data and
// includes.tweets as posts read, creations as posts written; GET
// /2/usage/tweets reports them; past a cap the platform's usage-capped 429.
func TestUsageCountsAndCaps(t *testing.T) {
	t.Parallel()
	b, m := setup(t, usage.Config{})
	router := apitest.OptionalOpenAPI(t)
	ctx := context.Background()
	parent := b.Create(t, "oauth:author", map[string]any{"text": "metered alpha"})
	b.Create(t, "oauth:author", map[string]any{"text": "metered alpha again", "reply": map[string]any{"in_reply_to_tweet_id": parent}})
	apitest.WaitSettled()

	r := get(t, b, search("metered"), b.Bearer)
	if r.Status != http.StatusOK {
		t.Fatalf("search: %d %s", r.Status, r.Raw)
	}
	data, _ := r.Body["data"].([]any)
	inc, _ := apitest.Obj(r.Body, "includes", "tweets").([]any)
	incUsers, _ := apitest.Obj(r.Body, "includes", "users").([]any)
	if len(data) != 2 || len(inc) != 1 || len(incUsers) != 1 {
		t.Fatalf("want 2 posts, 1 included post and 1 user: %s", r.Raw)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := b.DB.UsageSince(ctx, b.App.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got.PostsRead != 3 || got.PostsWritten != 2 || got.UsersRead != 1 || got.CreditsSpent != 0 {
		t.Fatalf("recorded %+v, want 3 read, 2 written, 1 user", got)
	}
	other, _ := b.DB.UsageSince(ctx, b.Other.ID, time.Time{})
	if !other.Zero() {
		t.Errorf("the other app used nothing, recorded %+v", other)
	}

	u := get(t, b, "/2/usage/tweets?days=3&usage.fields=cap_reset_day,daily_client_app_usage,daily_project_usage,project_id,project_usage", b.Bearer)
	if u.Status != http.StatusOK {
		t.Fatalf("usage: %d %s", u.Status, u.Raw)
	}
	if err := apitest.ValidateResponse(ctx, router, "GET", "/2/usage/tweets?days=3", u); err != nil {
		t.Errorf("usage against the description: %v\n%s", err, u.Raw)
	}
	id := fmt.Sprint(b.App.ID)
	today := time.Now().UTC().Format("2006-01-02") + "T00:00:00.000Z"
	days, _ := apitest.Obj(u.Body, "data", "daily_project_usage", "usage").([]any)
	if apitest.Obj(u.Body, "data", "project_usage") != "3" || apitest.Obj(u.Body, "data", "project_id") != id ||
		apitest.Obj(u.Body, "data", "cap_reset_day") != float64(1) || len(days) != 3 ||
		apitest.Obj(days[2], "date") != today || apitest.Obj(days[2], "usage") != "3" || apitest.Obj(days[0], "usage") != "0" {
		t.Fatalf("usage %s", u.Raw)
	}
	apps, _ := apitest.Obj(u.Body, "data", "daily_client_app_usage").([]any)
	if len(apps) != 1 || apitest.Obj(apps[0], "client_app_id") != id || apitest.Obj(apps[0], "usage_result_count") != float64(3) {
		t.Errorf("daily_client_app_usage %s", u.Raw)
	}
	if d := get(t, b, "/2/usage/tweets", b.Bearer); slices.Compare(keys(d.Body["data"].(map[string]any)), []string{"cap_reset_day", "project_id", "project_usage"}) != 0 {
		t.Errorf("default fields (no cap: no project_cap) %s", d.Raw)
	}
	for _, bad := range []string{"days=0", "days=91", "usage.fields=nope"} {
		if r := get(t, b, "/2/usage/tweets?"+bad, b.Bearer); r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, r.Status, r.Raw)
		}
	}
	if r := get(t, b, "/2/usage/tweets", "oauth:reader"); r.Status != http.StatusForbidden {
		t.Errorf("user context: %d %s", r.Status, r.Raw)
	}

	three, zero := int64(3), int64(0)
	if _, err := b.DB.SetAppUsageCaps(ctx, b.App.ID, &three, nil); err != nil {
		t.Fatal(err)
	}
	capped := get(t, b, search("metered"), b.Bearer)
	assertUsageCapped(t, capped, id)
	if err := apitest.ValidateResponse(ctx, router, "GET", "/2/tweets/search/recent?query=metered", capped); err != nil {
		t.Errorf("usage-capped against the description: %v", err)
	}
	if r := get(t, b, "/2/tweets/"+parent, b.Bearer); r.Status != http.StatusTooManyRequests {
		t.Errorf("lookup past the read cap: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, search("metered"), b.OtherBearer); r.Status != http.StatusOK {
		t.Errorf("another app is not capped: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/users/"+fmt.Sprint(b.Author.ID), b.Bearer); r.Status != http.StatusOK {
		t.Errorf("a user lookup is not refused by the posts cap: %d %s", r.Status, r.Raw)
	}
	if u := get(t, b, "/2/usage/tweets", b.Bearer); apitest.Obj(u.Body, "data", "project_cap") != "3" {
		t.Errorf("project_cap %s", u.Raw)
	}

	if _, err := b.DB.SetAppUsageCaps(ctx, b.App.ID, &zero, new(int64(2))); err != nil {
		t.Fatal(err)
	}
	if r := get(t, b, search("metered"), b.Bearer); r.Status != http.StatusOK {
		t.Errorf("read cap 0 is unlimited: %d %s", r.Status, r.Raw)
	}
	post := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": "over the write cap"}))
	assertUsageCapped(t, post, id)
}

func assertUsageCapped(t *testing.T, r apitest.Reply, account string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("want 429 problem: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
	want := map[string]any{"type": apitest.Problems + "usage-capped", "title": "UsageCapExceeded", "period": "Monthly", "scope": "Product",
		"detail": "Usage cap exceeded: Monthly product cap", "account_id": account}
	if fmt.Sprint(r.Body) != fmt.Sprint(want) {
		t.Fatalf("usage-capped body %s, want exactly %v", r.Raw, want)
	}
}

// TestCreditsDepleted: with prices set, an app without credits gets the
// platform's 402; credits added let it read until they are spent.
func TestCreditsDepleted(t *testing.T) {
	t.Parallel()
	b, m := setup(t, usage.Config{Prices: usage.Prices{PostRead: 1, PostWrite: 5}})
	ctx := context.Background()
	id := fmt.Sprint(b.App.ID)
	r := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": "costly words"}))
	if r.Status != http.StatusPaymentRequired {
		t.Fatalf("no credits: %d %s", r.Status, r.Raw)
	}
	want := map[string]any{"type": apitest.Problems + "credits", "title": "CreditsDepleted",
		"detail": "Your enrolled account [" + id + "] does not have any credits to fulfill this request."}
	if fmt.Sprint(r.Body) != fmt.Sprint(want) || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("CreditsDepleted body %s, want exactly %v", r.Raw, want)
	}
	if _, err := b.DB.AddAppCredits(ctx, b.App.ID, 6); err != nil {
		t.Fatal(err)
	}
	post := b.Create(t, "oauth:author", map[string]any{"text": "costly words"}) // 5 credits: 1 left
	b.Create(t, "oauth:author", map[string]any{"text": "costly words again"})   // admitted on 1 left: -4
	if r := get(t, b, "/2/tweets/"+post, b.Bearer); r.Status != http.StatusPaymentRequired {
		t.Fatalf("spent: %d %s", r.Status, r.Raw)
	}
	if _, err := b.DB.AddAppCredits(ctx, b.App.ID, 5); err != nil {
		t.Fatal(err)
	}
	if r := get(t, b, "/2/tweets/"+post, b.Bearer); r.Status != http.StatusOK {
		t.Fatalf("topped up: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/tweets/"+post, b.Bearer); r.Status != http.StatusPaymentRequired {
		t.Fatalf("the lookup spent the last credit: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/usage/tweets", b.Bearer); r.Status != http.StatusOK {
		t.Errorf("GET /2/usage/tweets costs nothing and is never refused: %d %s", r.Status, r.Raw)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := b.DB.UsageSince(ctx, b.App.ID, time.Time{})
	if got.CreditsSpent != 11 || got.PostsWritten != 2 || got.PostsRead != 1 {
		t.Errorf("recorded %+v, want 11 credits for 2 written and 1 read", got)
	}
}

// TestUsageSurvivesRedisLoss: once the counts are recorded in PostgreSQL, a
// Redis that lost every key still refuses past the cap and the balance:
// the meter seeds its counters from the record.
func TestUsageSurvivesRedisLoss(t *testing.T) {
	t.Parallel()
	b, m, rc := setupRedis(t, usage.Config{ReadCap: 2, Prices: usage.Prices{PostWrite: 1}})
	ctx := context.Background()
	if _, err := b.DB.AddAppCredits(ctx, b.App.ID, 2); err != nil {
		t.Fatal(err)
	}
	first := b.Create(t, "oauth:author", map[string]any{"text": "kept through the loss"})
	b.Create(t, "oauth:author", map[string]any{"text": "kept through the loss, two"})
	if r := get(t, b, "/2/tweets?ids="+first, b.Bearer); r.Status != http.StatusOK {
		t.Fatalf("lookup: %d %s", r.Status, r.Raw)
	}
	if r := get(t, b, "/2/tweets/"+first, b.Bearer); r.Status != http.StatusOK {
		t.Fatalf("second lookup (1 read of 2): %d %s", r.Status, r.Raw)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rc.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if r := get(t, b, "/2/tweets/"+first, b.Bearer); r.Status != http.StatusTooManyRequests {
		t.Errorf("past the cap after Redis lost its keys: %d %s", r.Status, r.Raw)
	}
	post := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", apitest.JSONBody(map[string]any{"text": "no credits left"}))
	if post.Status != http.StatusPaymentRequired {
		t.Errorf("balance spent before Redis lost its keys: %d %s", post.Status, post.Raw)
	}
}
