package webhooks_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/storage/ids"
)

// TestStreamLinks: link, list (and its alias), relink, unlink within the
// app; another app's webhook answers as a missing one; deleting the
// webhook removes its link.
func TestStreamLinks(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	hook := h.webhook(t, h.App, "https://a.example/hook")
	id := ids.Format(hook.ID)
	others := h.webhook(t, h.Other, "https://b.example/hook")

	wantExact(t, "no links", h.Call(t, "GET", "/2/tweets/search/webhooks", h.Bearer, "", nil), 200, `{"data":[]}`)
	wantExact(t, "link", h.Call(t, "POST", "/2/tweets/search/webhooks/"+id+"?tweet.fields=lang,created_at&expansions=author_id&user.fields=username",
		h.Bearer, "", nil), 200, `{"data":{"provisioned":true}}`)
	list := h.Call(t, "GET", "/2/tweets/search/webhooks", h.Bearer, "", nil)
	data, _ := apitest.Obj(list.Body, "data").([]any)
	if list.Status != 200 || len(data) != 1 {
		t.Fatalf("list: %d %s", list.Status, list.Raw)
	}
	got := data[0].(map[string]any)
	created, err := time.Parse(time.RFC3339, got["created_at"].(string))
	if err != nil || created.Before(h.Now.Add(-time.Minute)) {
		t.Fatalf("created_at %v: %v", got["created_at"], err)
	}
	delete(got, "created_at")
	want := map[string]any{"application_id": ids.Format(h.App.ID), "instance_id": ids.Format(h.App.ID), "webhook_id": id,
		"fields": []any{"expansions=author_id", "tweet.fields=lang,created_at", "user.fields=username"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("link: %v, want %v", got, want)
	}
	if alias := h.Call(t, "GET", "/2/tweets/search/stream/webhooks", h.Bearer, "", nil); alias.Status != 200 || alias.Raw != list.Raw {
		t.Fatalf("alias: %d %s, want %s", alias.Status, alias.Raw, list.Raw)
	}
	wantExact(t, "another app's list", h.Call(t, "GET", "/2/tweets/search/webhooks", h.OtherBearer, "", nil), 200, `{"data":[]}`)

	// Linking again replaces the fields (defaults: none listed).
	wantExact(t, "relink", h.Call(t, "POST", "/2/tweets/search/webhooks/"+id, h.Bearer, "", nil), 200, `{"data":{"provisioned":true}}`)
	list = h.Call(t, "GET", "/2/tweets/search/webhooks", h.Bearer, "", nil)
	if fields := apitest.Obj(list.Body, "data").([]any)[0].(map[string]any)["fields"]; !reflect.DeepEqual(fields, []any{}) {
		t.Fatalf("relinked fields: %s", list.Raw)
	}

	for _, c := range []struct {
		name, method, path, authz string
	}{
		{"link another app's webhook", "POST", "/2/tweets/search/webhooks/" + ids.Format(others.ID), h.Bearer},
		{"link as another app", "POST", "/2/tweets/search/webhooks/" + id, h.OtherBearer},
		{"link a missing webhook", "POST", "/2/tweets/search/webhooks/1", h.Bearer},
		{"unlink as another app", "DELETE", "/2/tweets/search/webhooks/" + id, h.OtherBearer},
		{"unlink a missing webhook", "DELETE", "/2/tweets/search/webhooks/1", h.Bearer},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFailure(t, h.Call(t, c.method, c.path, c.authz, "", nil), webhooks.ReasonIDInvalid)
		})
	}
	for _, c := range []struct {
		name, method, path, authz string
		status                    int
	}{
		{"malformed id", "POST", "/2/tweets/search/webhooks/12ab", h.Bearer, 400},
		{"unknown parameter", "POST", "/2/tweets/search/webhooks/" + id + "?foo=1", h.Bearer, 400},
		{"user context", "POST", "/2/tweets/search/webhooks/" + id, "oauth:reader", 403},
		{"user context list", "GET", "/2/tweets/search/webhooks", "oauth:reader", 403},
		{"no credentials", "GET", "/2/tweets/search/webhooks", "", 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := h.Call(t, c.method, c.path, c.authz, "", nil); r.Status != c.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Raw, c.status)
			}
		})
	}

	wantExact(t, "unlink", h.Call(t, "DELETE", "/2/tweets/search/webhooks/"+id, h.Bearer, "", nil), 200, `{"data":{"deleted":true}}`)
	wantExact(t, "unlink again", h.Call(t, "DELETE", "/2/tweets/search/webhooks/"+id, h.Bearer, "", nil), 200, `{"data":{"deleted":false}}`)
	wantExact(t, "after unlink", h.Call(t, "GET", "/2/tweets/search/webhooks", h.Bearer, "", nil), 200, `{"data":[]}`)

	// Deleting the webhook removes its link.
	h.Call(t, "POST", "/2/tweets/search/webhooks/"+id, h.Bearer, "", nil)
	if r := h.Call(t, "DELETE", "/2/webhooks/"+id, h.Bearer, "", nil); r.Status != 200 {
		t.Fatalf("delete webhook: %d %s", r.Status, r.Raw)
	}
	wantExact(t, "after the webhook's delete", h.Call(t, "GET", "/2/tweets/search/webhooks", h.Bearer, "", nil), 200, `{"data":[]}`)
	wantFailure(t, h.Call(t, "DELETE", "/2/tweets/search/webhooks/"+id, h.Bearer, "", nil), webhooks.ReasonIDInvalid)
}

// TestStreamLinkFields: the link's fields and expansions are refused
// exactly as the filtered stream refuses them (same status, same errors).
func TestStreamLinkFields(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	id := ids.Format(h.webhook(t, h.App, "https://a.example/hook").ID)
	for _, query := range []string{
		"tweet.fields=nope", "post.fields=lang,nope", "expansions=author_id,bogus", "media.fields=x", "poll.fields=x",
		"place.fields=x", "user.fields=", "tweet.fields=lang,lang", "expansions=author_id&tweet.fields=nope&user.fields=zz",
		"tweet.fields=lang&tweet.fields=id", "backfill_minutes=1",
	} {
		t.Run(query, func(t *testing.T) {
			link := h.Call(t, "POST", "/2/tweets/search/webhooks/"+id+"?"+query, h.Bearer, "", nil)
			if query == "backfill_minutes=1" {
				// The stream's own parameter is no link's (the stream
				// would open: not called).
				if link.Status != http.StatusBadRequest {
					t.Fatalf("link: %d %s", link.Status, link.Raw)
				}
				return
			}
			stream := h.Call(t, "GET", "/2/tweets/search/stream?"+query, h.Bearer, "", nil)
			if link.Status != http.StatusBadRequest || stream.Status != link.Status ||
				!reflect.DeepEqual(link.Body["errors"], stream.Body["errors"]) {
				t.Fatalf("link %d %s\nstream %d %s", link.Status, link.Raw, stream.Status, stream.Raw)
			}
		})
	}
	// Accepted: the canonical query sorts the names, keeps each list.
	for _, c := range []struct{ query, want string }{
		{"user.fields=username&expansions=referenced_tweets.id,author_id", `["expansions=referenced_tweets.id,author_id","user.fields=username"]`},
		{"post.fields=lang&tweet.fields=id", `["post.fields=lang","tweet.fields=id"]`},
		{"media.fields=url&poll.fields=options&place.fields=id", `["media.fields=url","place.fields=id","poll.fields=options"]`},
	} {
		if r := h.Call(t, "POST", "/2/tweets/search/webhooks/"+id+"?"+c.query, h.Bearer, "", nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", c.query, r.Status, r.Raw)
		}
		list := h.Call(t, "GET", "/2/tweets/search/webhooks", h.Bearer, "", nil)
		fields, _ := json.Marshal(apitest.Obj(list.Body, "data").([]any)[0].(map[string]any)["fields"])
		if string(fields) != c.want {
			t.Errorf("%s: fields %s, want %s", c.query, fields, c.want)
		}
	}
}
