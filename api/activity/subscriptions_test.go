package activity_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/activity"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// userToken issues an OAuth 2.0 user access token of app for user with
// scopes, through the store's code exchange as the token endpoint does.
func userToken(t *testing.T, b *apitest.Bundle, app storage.App, user storage.User, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	code, _ := ids.Token(40)
	access, _ := ids.Token(60)
	now := time.Now()
	if err := b.DB.CreateOAuth2Code(ctx, code, storage.OAuth2Code{AppID: app.ID, UserID: user.ID, RedirectURI: "http://cb.example/",
		Scopes: scopes, Challenge: "challenge", Method: "plain", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.ExchangeOAuth2Code(ctx, code, now, func(storage.OAuth2Code) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{Access: access, AccessExpires: now.Add(2 * time.Hour), Scopes: scopes}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return "Bearer " + access
}

func webhook(t *testing.T, b *apitest.Bundle, app storage.App, url string) string {
	t.Helper()
	w, err := b.DB.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: app.ID, URL: url, CheckedAt: time.Now(), Max: 5})
	if err != nil {
		t.Fatal(err)
	}
	return ids.Format(w.ID)
}

func call(t *testing.T, b *apitest.Bundle, method, path, authz, body string) apitest.Reply {
	t.Helper()
	var raw []byte
	ctype := ""
	if body != "" {
		raw, ctype = []byte(body), "application/json"
	}
	return b.Call(t, method, path, authz, ctype, raw)
}

// TestCreateSubscription: every refusal of a creation and the answers of
// the ones that pass, in order on one app (the duplicate repeats an
// earlier one).
func TestCreateSubscription(t *testing.T) {
	b := apitest.Setup(t, 100)
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	hook := webhook(t, b, b.App, "https://a.example/hook")
	foreign := webhook(t, b, b.Other, "https://b.example/hook")
	all := userToken(t, b, b.App, b.User, "tweet.read", "like.read", "dm.read", "mute.read", "block.read", "broadcast.read")
	noLike := userToken(t, b, b.App, b.User, "tweet.read")
	noTweet := userToken(t, b, b.App, b.User, "like.read")
	const (
		unsupported = "unsupported-authentication"
		forbidden   = "not-authorized-for-resource"
		invalid     = "invalid-request"
	)
	tests := []struct {
		name, authz, body string
		status            int
		slug              string
		// want: substrings of the answer.
		want []string
	}{
		{"public type, app-only", b.Bearer, `{"event_type":"post.create","filter":{"user_id":"` + author + `"},"tag":"posts"}`, 200, "",
			[]string{`"event_type":"post.create"`, `"user_id":"` + author + `"`, `"tag":"posts"`, `"subscription_id":"`, `"created_at":"`}},
		{"spec alias answered canonical", b.Bearer, `{"event_type":"profile.update.verified","filter":{"user_id":"` + author + `"}}`, 200, "",
			[]string{`"event_type":"profile.update.verified_badge"`}},
		{"deprecated alias answered canonical", all, `{"event_type":"chat.conversation_join","filter":{"user_id":"` + reader + `"}}`, 200, "",
			[]string{`"event_type":"chat.conversation.join"`}},
		{"unknown type lists the valid ones", b.Bearer, `{"event_type":"post.explode","filter":{"user_id":"` + author + `"}}`, 400, invalid,
			[]string{"post.explode", "profile.update.bio", "news.new"}},
		{"retired name names the new one", b.Bearer, `{"event_type":"ProfileBioUpdate","filter":{"user_id":"` + author + `"}}`, 400, invalid,
			[]string{"retired", "profile.update.bio"}},
		{"no event type", b.Bearer, `{"filter":{"user_id":"` + author + `"}}`, 400, invalid, []string{"event_type"}},
		{"no filter", b.Bearer, `{"event_type":"post.create"}`, 400, invalid, []string{"filter"}},
		{"keyword on a user type", b.Bearer, `{"event_type":"post.delete","filter":{"keyword":"go"}}`, 400, invalid, []string{"filter.keyword"}},
		{"user_id on news.new", b.Bearer, `{"event_type":"news.new","filter":{"user_id":"` + author + `"}}`, 400, invalid, []string{"filter.user_id"}},
		{"news.new without keyword", b.Bearer, `{"event_type":"news.new","filter":{}}`, 400, invalid, []string{"filter.keyword"}},
		{"news.new keyword too long", b.Bearer, `{"event_type":"news.new","filter":{"keyword":"` + strings.Repeat("k", 151) + `"}}`, 400, invalid, []string{"filter.keyword"}},
		{"news.new by keyword", b.Bearer, `{"event_type":"news.new","filter":{"keyword":"birding"}}`, 200, "", []string{`"keyword":"birding"`}},
		{"direction on a type without one", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `","direction":"inbound"}}`, 400, invalid,
			[]string{"filter.direction"}},
		{"unknown direction", all, `{"event_type":"like.create","filter":{"user_id":"` + reader + `","direction":"sideways"}}`, 400, invalid,
			[]string{"filter.direction"}},
		{"direction spelled as the spec does", all, `{"event_type":"dm.sent","filter":{"user_id":"` + reader + `","direction":"sent"}}`, 200, "",
			[]string{`"direction":"outbound"`}},
		{"direction on mute", all, `{"event_type":"mute.mute","filter":{"user_id":"` + reader + `","direction":"outbound"}}`, 400, invalid,
			[]string{"filter.direction"}},
		{"user id not numeric", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"alice"}}`, 400, invalid, []string{"filter.user_id"}},
		{"user id of nobody", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"1234567"}}`, 400, invalid, []string{"names no user"}},
		{"unknown field", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `"},"delivery":"stream"}`, 400, invalid, []string{"delivery"}},
		{"empty tag", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `"},"tag":""}`, 400, invalid, []string{"tag"}},
		{"tag too long", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `"},"tag":"` + strings.Repeat("t", 201) + `"}`, 400, invalid, []string{"tag"}},
		{"another app's webhook", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `"},"webhook_id":"` + foreign + `"}`, 400, invalid,
			[]string{"WebhookIdInvalid"}},
		{"webhook id not numeric", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `"},"webhook_id":"x"}`, 400, invalid, []string{"webhook_id"}},
		{"own webhook", b.Bearer, `{"event_type":"post.delete","filter":{"user_id":"` + author + `"},"webhook_id":"` + hook + `"}`, 200, "",
			[]string{`"webhook_id":"` + hook + `"`}},
		{"duplicate", b.Bearer, `{"event_type":"post.create","filter":{"user_id":"` + author + `"},"tag":"again"}`, 400, invalid,
			[]string{"DuplicateSubscription"}},
		{"private type, app-only", b.Bearer, `{"event_type":"like.create","filter":{"user_id":"` + reader + `"}}`, 403, unsupported,
			[]string{"like.create", "like.read"}},
		{"private post interaction, app-only", b.Bearer, `{"event_type":"post.mention.create","filter":{"user_id":"` + reader + `"}}`, 403, unsupported, nil},
		{"private type without its scope", noLike, `{"event_type":"like.create","filter":{"user_id":"` + reader + `"}}`, 403, unsupported,
			[]string{"like.read"}},
		{"private type of another user", all, `{"event_type":"like.create","filter":{"user_id":"` + author + `"}}`, 403, forbidden,
			[]string{author}},
		{"mute of another user", all, `{"event_type":"mute.mute","filter":{"user_id":"` + author + `"}}`, 403, forbidden,
			[]string{"acting user"}},
		{"block of another user, OAuth 1.0a", "oauth:reader", `{"event_type":"block.block","filter":{"user_id":"` + author + `"}}`, 403, forbidden, nil},
		{"public type without tweet.read", noTweet, `{"event_type":"follow.follow","filter":{"user_id":"` + author + `"}}`, 403, unsupported,
			[]string{"tweet.read"}},
		{"private type, own token and scope", all, `{"event_type":"like.create","filter":{"user_id":"` + reader + `","direction":"inbound"}}`, 200, "",
			[]string{`"direction":"inbound"`}},
		{"mute, own", all, `{"event_type":"mute.mute","filter":{"user_id":"` + reader + `"}}`, 200, "", nil},
		{"private type, OAuth 1.0a of the user", "oauth:reader", `{"event_type":"block.unblock","filter":{"user_id":"` + reader + `"}}`, 200, "", nil},
		{"public type, another user's user token", noLike, `{"event_type":"follow.follow","filter":{"user_id":"` + author + `"}}`, 200, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, b, "POST", "/2/activity/subscriptions", tt.authz, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if tt.slug != "" && r.Body["type"] != apitest.Problems+tt.slug {
				t.Errorf("type %v, want %s", r.Body["type"], tt.slug)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Raw, w) {
					t.Errorf("answer lacks %q: %s", w, r.Raw)
				}
			}
		})
	}
}

// TestSubscriptionCap: the app's cap refuses the next creation with
// SubscriptionLimitExceeded; deleting one makes room; another app is not
// affected.
func TestSubscriptionCap(t *testing.T) {
	b := apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.ActivitySubscriptions = activity.NewSubscriptions(activity.SubscriptionDeps{Store: db, Cap: 2})
	})
	author := ids.Format(b.Author.ID)
	body := func(event string) string {
		return `{"event_type":"` + event + `","filter":{"user_id":"` + author + `"}}`
	}
	first := call(t, b, "POST", "/2/activity/subscriptions", b.Bearer, body("post.create"))
	call(t, b, "POST", "/2/activity/subscriptions", b.Bearer, body("post.delete"))
	r := call(t, b, "POST", "/2/activity/subscriptions", b.Bearer, body("profile.update.bio"))
	if r.Status != 400 || r.Body["reason"] != activity.ReasonLimit || !strings.Contains(r.Raw, "limit of 2") {
		t.Fatalf("over the cap: %d %s", r.Status, r.Raw)
	}
	if r := call(t, b, "POST", "/2/activity/subscriptions", b.OtherBearer, body("profile.update.bio")); r.Status != 200 {
		t.Fatalf("another app: %d %s", r.Status, r.Raw)
	}
	id := apitest.Obj(first.Body, "data", "subscription", "subscription_id").(string)
	if r := call(t, b, "DELETE", "/2/activity/subscriptions/"+id, b.Bearer, ""); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if r := call(t, b, "POST", "/2/activity/subscriptions", b.Bearer, body("profile.update.bio")); r.Status != 200 {
		t.Fatalf("after a delete: %d %s", r.Status, r.Raw)
	}
}

// TestManageSubscriptions: listing pages through the app's own only;
// update and delete refuse another app's ids as missing; delete by ids
// answers per id; credentials as the OpenAPI names them.
func TestManageSubscriptions(t *testing.T) {
	b := apitest.Setup(t, 100)
	hook := webhook(t, b, b.App, "https://a.example/hook")
	foreign := webhook(t, b, b.Other, "https://b.example/hook")
	var mine []string
	for _, event := range []string{"post.create", "post.delete", "profile.update.bio", "profile.update.url", "spaces.start"} {
		r := call(t, b, "POST", "/2/activity/subscriptions", b.Bearer, `{"event_type":"`+event+`","filter":{"user_id":"`+ids.Format(b.Author.ID)+`"}}`)
		if r.Status != 200 {
			t.Fatalf("create %s: %d %s", event, r.Status, r.Raw)
		}
		mine = append(mine, apitest.Obj(r.Body, "data", "subscription", "subscription_id").(string))
	}
	theirs := call(t, b, "POST", "/2/activity/subscriptions", b.OtherBearer, `{"event_type":"post.create","filter":{"user_id":"`+ids.Format(b.Author.ID)+`"}}`)
	theirID := apitest.Obj(theirs.Body, "data", "subscription", "subscription_id").(string)

	// Pages of 2: 2, 2, 1, each with the total.
	var seen []string
	token := ""
	for page := 0; ; page++ {
		path := "/2/activity/subscriptions?max_results=2"
		if token != "" {
			path += "&pagination_token=" + token
		}
		r := call(t, b, "GET", path, b.Bearer, "")
		if r.Status != 200 || apitest.Obj(r.Body, "meta", "total_subscriptions") != float64(5) {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Raw)
		}
		for _, s := range r.Body["data"].([]any) {
			seen = append(seen, s.(map[string]any)["subscription_id"].(string))
		}
		next, _ := apitest.Obj(r.Body, "meta", "next_token").(string)
		if next == "" {
			break
		}
		if len(next) < 16 {
			t.Fatalf("next_token %q shorter than the OpenAPI's 16", next)
		}
		token = next
	}
	if strings.Join(seen, ",") != strings.Join(mine, ",") {
		t.Fatalf("paged %v, want %v", seen, mine)
	}
	oauth2 := userToken(t, b, b.App, b.User, "tweet.read", "like.read")
	tests := []struct {
		name, method, path, authz, body string
		status                          int
		want                            []string
	}{
		{"other app lists its own", "GET", "/2/activity/subscriptions", b.OtherBearer, "", 200, []string{theirID, `"total_subscriptions":1`}},
		{"list with an OAuth 2.0 user token", "GET", "/2/activity/subscriptions?max_results=1", oauth2, "", 200, []string{mine[0]}},
		{"list, OAuth 1.0a", "GET", "/2/activity/subscriptions?max_results=1", "oauth:reader", "", 200, []string{mine[0]}},
		{"list without like.read", "GET", "/2/activity/subscriptions", userToken(t, b, b.App, b.User, "tweet.read"), "", 403, []string{"like.read"}},
		{"max_results 0", "GET", "/2/activity/subscriptions?max_results=0", b.Bearer, "", 400, []string{"max_results"}},
		{"max_results 1001", "GET", "/2/activity/subscriptions?max_results=1001", b.Bearer, "", 400, []string{"max_results"}},
		{"bad token", "GET", "/2/activity/subscriptions?pagination_token=notatokenatall!!", b.Bearer, "", 400, []string{"pagination_token"}},
		{"update the tag", "PUT", "/2/activity/subscriptions/" + mine[0], b.Bearer, `{"tag":"renamed"}`, 200,
			[]string{`"tag":"renamed"`, `"total_subscriptions":5`, `"event_type":"post.create"`}},
		{"update the webhook", "PUT", "/2/activity/subscriptions/" + mine[0], b.Bearer, `{"webhook_id":"` + hook + `"}`, 200,
			[]string{`"webhook_id":"` + hook + `"`, `"tag":"renamed"`}},
		{"update to another app's webhook", "PUT", "/2/activity/subscriptions/" + mine[1], b.Bearer, `{"webhook_id":"` + foreign + `"}`, 400,
			[]string{"WebhookIdInvalid"}},
		{"update the filter", "PUT", "/2/activity/subscriptions/" + mine[1], b.Bearer, `{"filter":{"user_id":"1"}}`, 400, []string{"filter"}},
		{"update nothing", "PUT", "/2/activity/subscriptions/" + mine[1], b.Bearer, `{}`, 400, []string{"new subscription"}},
		{"update another app's", "PUT", "/2/activity/subscriptions/" + theirID, b.Bearer, `{"tag":"mine now"}`, 404, []string{"resource-not-found"}},
		{"update with a user token", "PUT", "/2/activity/subscriptions/" + mine[1], "oauth:reader", `{"tag":"x"}`, 403, []string{"unsupported-authentication"}},
		{"update a malformed id", "PUT", "/2/activity/subscriptions/abc", b.Bearer, `{"tag":"x"}`, 400, []string{"subscription_id"}},
		{"delete another app's", "DELETE", "/2/activity/subscriptions/" + theirID, b.Bearer, "", 404, []string{"resource-not-found"}},
		{"delete with a user token", "DELETE", "/2/activity/subscriptions/" + mine[1], oauth2, "", 403, []string{"unsupported-authentication"}},
		{"delete one", "DELETE", "/2/activity/subscriptions/" + mine[1], b.Bearer, "", 200, []string{`{"data":{"deleted":true},"meta":{"total_subscriptions":4}}`}},
		{"delete it again", "DELETE", "/2/activity/subscriptions/" + mine[1], b.Bearer, "", 404, nil},
		{"delete by ids", "DELETE", "/2/activity/subscriptions?ids=" + mine[2] + "," + theirID + "," + mine[3] + ",99", b.Bearer, "", 200,
			[]string{`{"subscription_id":"` + mine[2] + `","deleted":true}`, `{"subscription_id":"` + mine[3] + `","deleted":true}`,
				`"subscription_id":"` + theirID + `","reason":"SubscriptionNotFound"`, `"subscription_id":"99"`, `"total_subscriptions":2`}},
		{"delete by ids, malformed", "DELETE", "/2/activity/subscriptions?ids=1,x", b.Bearer, "", 400, []string{"ids"}},
		{"delete by ids, none", "DELETE", "/2/activity/subscriptions", b.Bearer, "", 400, []string{"ids"}},
		{"delete by ids, 101", "DELETE", "/2/activity/subscriptions?ids=" + strings.Repeat("1,", 100) + "1", b.Bearer, "", 400, []string{"ids"}},
		{"the other app keeps its own", "GET", "/2/activity/subscriptions", b.OtherBearer, "", 200, []string{theirID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, b, tt.method, tt.path, tt.authz, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Raw, w) {
					t.Errorf("answer lacks %q: %s", w, r.Raw)
				}
			}
		})
	}
}
