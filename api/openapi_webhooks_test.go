package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// TestWebhookResponsesMatchOpenAPI: the answers of a registration and a
// re-validation whose CRC passes (a local receiver, allow-listed as the
// development setting does) match the platform's description.
func TestWebhookResponsesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	router := apitest.OpenAPIRouter(t)
	var secret string
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"response_token": domain.Sign(secret, []byte(r.URL.Query().Get("crc_token")))})
	}))
	t.Cleanup(rc.Close)
	allow, err := outbound.ParseAllowList(rc.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Webhooks = webhooks.New(webhooks.Deps{Store: db, Allow: allow})
	})
	secret = b.App.ConsumerSecret
	check := func(method, path, body string, status int) apitest.Reply {
		t.Helper()
		var raw []byte
		ctype := ""
		if body != "" {
			raw, ctype = []byte(body), "application/json"
		}
		r := b.Call(t, method, path, b.Bearer, ctype, raw)
		if r.Status != status {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, status, r.Raw)
		}
		if err := apitest.ValidateResponse(t.Context(), router, method, path, r); err != nil {
			t.Errorf("%s %s -> %d does not match the OpenAPI description: %v\nbody: %s", method, path, r.Status, err, r.Raw)
		}
		return r
	}
	created := check("POST", "/2/webhooks", `{"url":"`+rc.URL+`/webhook"}`, 200)
	id := apitest.Obj(created.Body, "data", "id").(string)
	check("GET", "/2/webhooks", "", 200)
	check("PUT", "/2/webhooks/"+id, "", 200)
	// Stream links and replay (docs/webhooks.md).
	check("GET", "/2/tweets/search/webhooks", "", 200)
	check("POST", "/2/tweets/search/webhooks/"+id+"?tweet.fields=lang&expansions=author_id", "", 200)
	check("GET", "/2/tweets/search/webhooks", "", 200)
	check("DELETE", "/2/tweets/search/webhooks/"+id, "", 200)
	check("DELETE", "/2/tweets/search/webhooks/"+id, "", 200)
	check("POST", "/2/tweets/search/webhooks/1", "", 400)
	minute := time.Now().UTC().Truncate(time.Minute)
	replay := func(id string, from, to time.Time) string {
		return `{"webhook_id":"` + id + `","from_date":"` + from.Format("200601021504") + `","to_date":"` + to.Format("200601021504") + `"}`
	}
	check("POST", "/2/webhooks/replay", replay(id, minute.Add(-time.Hour), minute.Add(-time.Minute)), 200)
	check("POST", "/2/webhooks/replay", replay(id, minute.Add(-time.Hour), minute.Add(-time.Minute)), 400)
	check("POST", "/2/webhooks/replay", replay(id, minute.Add(-time.Minute), minute.Add(-time.Hour)), 400)
	check("DELETE", "/2/webhooks/"+id, "", 200)
	check("PUT", "/2/webhooks/"+id, "", 400)
}
