package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// repeatedKeyCase is a request that would succeed but for one field given
// twice: param is the name the refusal must give.
type repeatedKeyCase struct {
	path, authz, body, param string
}

// TestEveryJSONBodyRefusesRepeatedKeys walks the route table: every route
// that takes a JSON body gets a body with one field given twice (another
// value the second time, or the name in another case) and must answer 400
// naming it, in the route's envelope (Problem JSON on /2, the ads envelope
// on /12), with nothing changed. encoding/json would keep the last value.
func TestEveryJSONBodyRefusesRepeatedKeys(t *testing.T) {
	b, mods := setupWithAds(t, 100)
	cases := repeatedKeyCases(t, b)
	for _, e := range mods.Endpoints(false) {
		if !slices.Contains(e.Body.Types, httpx.ContentJSON) {
			continue
		}
		method, _, _ := strings.Cut(e.Pattern, " ")
		for i, c := range cases[e.Pattern] {
			t.Run(fmt.Sprintf("%s#%d", e.Pattern, i), func(t *testing.T) {
				before := dbDigest(t, b)
				r := b.Call(t, method, c.path, c.authz, httpx.ContentJSON, []byte(c.body))
				if r.Status != 400 {
					t.Fatalf("%s: %d, want 400: %.400s", c.body, r.Status, r.Raw)
				}
				if got := refusedParam(r, strings.HasPrefix(c.path, "/12/")); got != c.param {
					t.Errorf("%s: refused naming %q, want %q: %.400s", c.body, got, c.param, r.Raw)
				}
				if after := dbDigest(t, b); after != before {
					t.Errorf("%s: refused, but the database changed", c.body)
				}
			})
		}
		if len(cases[e.Pattern]) == 0 {
			t.Errorf("%s takes a JSON body but has no repeated-key case here", e.Pattern)
		}
	}
}

// refusedParam is the parameter a refusal names: the ads envelope's first
// error, or the one parameter of a Problem JSON invalid request.
func refusedParam(r apitest.Reply, ads bool) string {
	if ads {
		errs, _ := r.Body["errors"].([]any)
		if _, ok := r.Body["request"].(map[string]any); !ok || len(errs) == 0 ||
			errs[0].(map[string]any)["code"] != "INVALID_PARAMETER" {
			return "(not an ads INVALID_PARAMETER envelope)"
		}
		p, _ := errs[0].(map[string]any)["parameter"].(string)
		return p
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		return "(not Problem JSON)"
	}
	return strings.Join(apitest.ParamNames(r.Body), ",")
}

// repeatedKeyCases makes what the JSON routes need (an ads account with a
// do-not-reach list, an audience, a catalog; a post; a media upload) and
// returns each route's cases by pattern.
func repeatedKeyCases(t *testing.T, b *apitest.Bundle) map[string][]repeatedKeyCase {
	t.Helper()
	acct := factory.AdAccount(t, b.DB, &factory.AdAccountOpts{Owner: &b.Author}).ID
	if _, err := apitest.DBConn(t, b).Exec(t.Context(), `INSERT INTO ad_account_features (account_id, feature) VALUES ($1, 'CATALOGS')`, acct); err != nil {
		t.Fatalf("feature: %v", err)
	}
	created := func(method, path string, form url.Values) string {
		r := b.Call(t, method, path+"?"+form.Encode(), "oauth:author", "", nil)
		data, _ := r.Body["data"].(map[string]any)
		id, _ := data["id"].(string)
		if r.Status != 200 || id == "" {
			t.Fatalf("%s %s: %d %.300s", method, path, r.Status, r.Raw)
		}
		return id
	}
	list := created("POST", "/12/accounts/"+acct+"/do_not_reach_lists", url.Values{"description": {"d"}})
	audience := created("POST", "/12/accounts/"+acct+"/custom_audiences", url.Values{"name": {"a"}})
	catalog := created("POST", "/12/product_catalogs", url.Values{"name": {"c"}, "user_id": {fmt.Sprint(b.Author.ID)}})
	post := factory.Post(t, b.DB, &factory.PostOpts{Author: b.User})
	init := b.Call(t, "POST", "/2/media/upload/initialize", "oauth:author", httpx.ContentJSON,
		[]byte(`{"media_type":"image/png","total_bytes":4}`))
	upload, _ := init.Body["data"].(map[string]any)["id"].(string)
	if upload == "" {
		t.Fatalf("initialize: %d %.300s", init.Status, init.Raw)
	}
	hash := strings.Repeat("a", 64)
	product := `"id":"p1","title":"T","description":"D","availability":"in stock","condition":"new","price":"1.00 USD",` +
		`"link":"https://shop.example/p1","image_link":"https://shop.example/p1.png","brand":"B"`
	author := fmt.Sprint(b.Author.ID)
	card := "7310000000000000001"
	if _, err := apitest.DBConn(t, b).Exec(t.Context(), `INSERT INTO ads_cards (id, account_id, kind, card_type, card_uri, name)
		VALUES ($1, $2, 'component', 'IMAGE_WEBSITE', 'card://' || $1, 'c')`, card, acct); err != nil {
		t.Fatalf("card: %v", err)
	}
	hook, err := b.DB.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: b.App.ID, URL: "https://a.example/replay", CheckedAt: time.Now()})
	if err != nil {
		t.Fatalf("webhook: %v", err)
	}
	minute := time.Now().UTC().Add(-time.Minute).Format("200601021504")
	replay := fmt.Sprintf(`"webhook_id":"%d","from_date":"%s","to_date":"%s"`, hook.ID, minute, minute)
	return map[string][]repeatedKeyCase{
		"DELETE /2/connections": {
			{"/2/connections", b.Bearer, `{"uuids":["00000000-0000-0000-0000-000000000000"],"uuids":["x"]}`, "uuids"},
		},
		"POST /2/tweets": {
			{"/2/tweets", "oauth:author", `{"text":"one","text":"two"}`, "text"},
			{"/2/tweets", "oauth:author", `{"text":"one","TEXT":"two"}`, "TEXT"},
		},
		"POST /2/users/{id}/likes": {
			{"/2/users/" + author + "/likes", "oauth:author", fmt.Sprintf(`{"tweet_id":"%d","tweet_id":"1"}`, post.ID), "tweet_id"},
		},
		"POST /2/users/{id}/following": {
			{"/2/users/" + author + "/following", "oauth:author", fmt.Sprintf(`{"target_user_id":"%d","target_user_id":"1"}`, b.User.ID), "target_user_id"},
		},
		"POST /2/users/{id}/muting": {
			{"/2/users/" + author + "/muting", "oauth:author", fmt.Sprintf(`{"target_user_id":"%d","target_user_id":"1"}`, b.User.ID), "target_user_id"},
		},
		"POST /2/users/{id}/blocking": {
			{"/2/users/" + author + "/blocking", "oauth:author", fmt.Sprintf(`{"target_user_id":"%d","target_user_id":"1"}`, b.User.ID), "target_user_id"},
		},
		"POST /2/users/{id}/retweets": {
			{"/2/users/" + author + "/retweets", "oauth:author", fmt.Sprintf(`{"tweet_id":"%d","tweet_id":"1"}`, post.ID), "tweet_id"},
		},
		"POST /2/dm_conversations/with/{participant_id}/messages": {
			{"/2/dm_conversations/with/" + author + "/messages", "oauth:reader", `{"text":"one","text":"two"}`, "text"},
		},
		"POST /2/dm_conversations/{dm_conversation_id}/messages": {
			{"/2/dm_conversations/1-2/messages", "oauth:reader", `{"text":"one","Text":"two"}`, "Text"},
		},
		"POST /2/dm_conversations": {
			{"/2/dm_conversations", "oauth:reader", `{"conversation_type":"Group","participant_ids":["` + author + `","1"],"message":{"text":"a","text":"b"}}`, "text"},
		},
		"POST /2/webhooks": {
			{"/2/webhooks", b.Bearer, `{"url":"https://a.example/hook","url":"https://b.example/hook"}`, "url"},
			{"/2/webhooks", b.Bearer, `{"url":"https://a.example/hook","URL":"https://b.example/hook"}`, "URL"},
		},
		"POST /2/activity/subscriptions": {
			{"/2/activity/subscriptions", b.Bearer, `{"event_type":"post.create","filter":{"user_id":"` + author + `"},"event_type":"post.delete"}`, "event_type"},
			{"/2/activity/subscriptions", b.Bearer, `{"event_type":"post.create","filter":{"user_id":"` + author + `","user_id":"1"}}`, "user_id"},
		},
		"PUT /2/activity/subscriptions/{subscription_id}": {
			{"/2/activity/subscriptions/1", b.Bearer, `{"tag":"a","tag":"b"}`, "tag"},
		},
		"POST /2/webhooks/replay": {
			{"/2/webhooks/replay", b.Bearer, `{` + replay + `,"to_date":"200001010000"}`, "to_date"},
			{"/2/webhooks/replay", b.Bearer, `{` + replay + `,"Webhook_Id":"1"}`, "Webhook_Id"},
		},
		"POST /2/tweets/search/stream/rules": {
			{"/2/tweets/search/stream/rules", b.Bearer, `{"add":[{"value":"a"}],"add":[{"value":"b"}]}`, "add"},
			{"/2/tweets/search/stream/rules", b.Bearer, `{"add":[{"value":"a","Value":"b"}]}`, "Value"},
		},
		"POST /2/compliance/jobs": {
			{"/2/compliance/jobs", b.Bearer, `{"type":"tweets","type":"users"}`, "type"},
		},
		"POST /2/media/upload/initialize": {
			{"/2/media/upload/initialize", "oauth:author", `{"media_type":"image/png","media_type":"image/gif","total_bytes":4}`, "media_type"},
		},
		"POST /2/media/upload": {
			{"/2/media/upload", "oauth:author", `{"media":"AAAA","media_category":"tweet_image","media_category":"tweet_gif"}`, "media_category"},
		},
		"POST /2/media/upload/{id}/append": {
			{"/2/media/upload/" + upload + "/append", "oauth:author", `{"media":"AAAA","segment_index":0,"segment_index":1}`, "segment_index"},
		},
		"POST /12/accounts/{account_id}/cards": {
			{"/12/accounts/" + acct + "/cards", "oauth:author", `{"name":"a","name":"b","components":[]}`, "name"},
		},
		"PUT /12/accounts/{account_id}/cards/{card_id}": {
			{"/12/accounts/" + acct + "/cards/" + card, "oauth:author", `{"name":"a","Name":"b"}`, "Name"},
		},
		"PUT /12/product_catalogs/{product_catalog_id}/products": {
			{"/12/product_catalogs/" + catalog + "/products", "oauth:author", `{"products":[{` + product + `,"title":"U"}]}`, "products[0].title"},
			{"/12/product_catalogs/" + catalog + "/products", "oauth:author", `{"products":[{` + product + `}],"PRODUCTS":[]}`, "PRODUCTS"},
		},
		"POST /12/batch/accounts/{account_id}/do_not_reach_lists/{do_not_reach_list_id}/users": {
			{"/12/batch/accounts/" + acct + "/do_not_reach_lists/" + list + "/users", "oauth:author",
				`[{"operation_type":"Update","operation_type":"Delete","params":{"users":[{"email":["` + hash + `"]}]}}]`,
				"operations[0].operation_type"},
			{"/12/batch/accounts/" + acct + "/do_not_reach_lists/" + list + "/users", "oauth:author",
				`[{"operation_type":"Update","params":{"users":[{"email":["` + hash + `"],"Email":["` + hash + `"]}]}}]`,
				"operations[0].params.users[0].Email"},
		},
		"POST /12/accounts/{account_id}/custom_audiences/{custom_audience_id}/users": {
			{"/12/accounts/" + acct + "/custom_audiences/" + audience + "/users", "oauth:author",
				`[{"operation_type":"Update","operation_type":"Delete","params":{"users":[{"email":["` + hash + `"]}]}}]`,
				"operations[0].operation_type"},
		},
	}
}

// dbDigest is a digest of every row of every table of the bundle's
// database.
func dbDigest(t *testing.T, b *apitest.Bundle) string {
	t.Helper()
	ctx := context.Background()
	conn := apitest.DBConn(t, b)
	var tables []string
	rows, err := conn.Query(ctx, `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)
	if err == nil {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatalf("tables: %v", err)
	}
	var out strings.Builder
	for _, tbl := range tables {
		var sum string
		q := `SELECT coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM ` + tbl + ` x`
		if err := conn.QueryRow(ctx, q).Scan(&sum); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out.WriteString(tbl + "=" + sum + ";")
	}
	return out.String()
}

// setupWithAds is the test backend (rate limits scaled by limitScale) with
// the ads modules mounted, and the modules whose route table the
// catalogue tests walk.
func setupWithAds(t *testing.T, limitScale float64) (*apitest.Bundle, api.Modules) {
	t.Helper()
	var mods api.Modules
	b := apitest.SetupOn(t, limitScale, func(db *postgres.DB, d *api.Deps) {
		cursors, err := adsx.NewCursors(bytes.Repeat([]byte{7}, 32))
		if err != nil {
			t.Fatalf("cursors: %v", err)
		}
		d.Modules.Ads = api.NewAdsModules(adsx.Kit{Accounts: db, Cursors: cursors, Logger: d.Logger}, db, nil)
		mods = d.Modules
	})
	return b, mods
}
