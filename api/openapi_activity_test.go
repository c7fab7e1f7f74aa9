package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// TestActivitySubscriptionResponsesMatchOpenAPI: every answer of the
// subscription endpoints, successes and refusals, matches the platform's
// description.
func TestActivitySubscriptionResponsesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	router := apitest.OpenAPIRouter(t)
	b := apitest.Setup(t, 100)
	hook, err := b.DB.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: b.App.ID, URL: "https://a.example/hook", CheckedAt: time.Now(), Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	hookID := ids.Format(hook.ID)
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	user := "Bearer " + oauth2Token(t, b, "tweet.read", "like.read", "mute.read")
	check := func(method, path, authz, body string, status int) apitest.Reply {
		t.Helper()
		var raw []byte
		ctype := ""
		if body != "" {
			raw, ctype = []byte(body), "application/json"
		}
		r := b.Call(t, method, path, authz, ctype, raw)
		if r.Status != status {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, status, r.Raw)
		}
		if err := apitest.ValidateResponse(t.Context(), router, method, path, r); err != nil {
			t.Errorf("%s %s -> %d does not match the OpenAPI description: %v\nbody: %s", method, path, r.Status, err, r.Raw)
		}
		return r
	}
	const path = "/2/activity/subscriptions"
	created := check("POST", path, b.Bearer, `{"event_type":"post.create","filter":{"user_id":"`+author+`"},"tag":"posts","webhook_id":"`+hookID+`"}`, 200)
	id := apitest.Obj(created.Body, "data", "subscription", "subscription_id").(string)
	check("POST", path, b.Bearer, `{"event_type":"news.new","filter":{"keyword":"birding"}}`, 200)
	check("POST", path, user, `{"event_type":"like.create","filter":{"user_id":"`+reader+`","direction":"outbound"}}`, 200)
	check("POST", path, user, `{"event_type":"mute.mute","filter":{"user_id":"`+reader+`"}}`, 200)
	// Refusals.
	check("POST", path, b.Bearer, `{"event_type":"post.create","filter":{"user_id":"`+author+`"},"webhook_id":"`+hookID+`"}`, 400)
	check("POST", path, b.Bearer, `{"event_type":"ProfileBioUpdate","filter":{"user_id":"`+author+`"}}`, 400)
	check("POST", path, b.Bearer, `{"event_type":"news.new","filter":{"user_id":"`+author+`"}}`, 400)
	check("POST", path, b.Bearer, `{"event_type":"like.create","filter":{"user_id":"`+reader+`"}}`, 403)
	check("POST", path, user, `{"event_type":"like.create","filter":{"user_id":"`+author+`"}}`, 403)
	check("POST", path, user, `{"event_type":"block.block","filter":{"user_id":"`+reader+`"}}`, 403)
	// List, pages.
	first := check("GET", path+"?max_results=2", b.Bearer, "", 200)
	next := apitest.Obj(first.Body, "meta", "next_token").(string)
	check("GET", path+"?max_results=2&pagination_token="+next, user, "", 200)
	check("GET", path+"?max_results=0", b.Bearer, "", 400)
	// Update, delete.
	check("PUT", path+"/"+id, b.Bearer, `{"tag":"renamed"}`, 200)
	check("PUT", path+"/"+id, b.Bearer, `{"webhook_id":"`+hookID+`","tag":"both"}`, 200)
	check("PUT", path+"/1", b.Bearer, `{"tag":"renamed"}`, 404)
	check("PUT", path+"/"+id, b.Bearer, `{"tag":""}`, 400)
	check("DELETE", path+"/"+id, b.Bearer, "", 200)
	check("DELETE", path+"/"+id, b.Bearer, "", 404)
	rest := check("GET", path, b.Bearer, "", 200)
	var left []string
	for _, s := range rest.Body["data"].([]any) {
		left = append(left, s.(map[string]any)["subscription_id"].(string))
	}
	check("DELETE", path+"?ids="+strings.Join(append(left, "12345"), ","), b.Bearer, "", 200)
	check("DELETE", path+"?ids=x", b.Bearer, "", 400)
}
