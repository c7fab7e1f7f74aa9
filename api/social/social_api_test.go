package social_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// oauth2Token issues an OAuth 2.0 user access token of the bundle's app
// for user with scopes, through the store's code exchange.
func oauth2Token(t *testing.T, b *apitest.Bundle, user int64, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	code, _ := ids.Token(40)
	access, _ := ids.Token(60)
	now := time.Now()
	if err := b.DB.CreateOAuth2Code(ctx, code, storage.OAuth2Code{AppID: b.App.ID, UserID: user, RedirectURI: "http://cb.example/",
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

func target(id int64) []byte { return []byte(fmt.Sprintf(`{"target_user_id":"%d"}`, id)) }

// TestSocialEndpoints walks follows, mutes and blocks through their
// endpoints: the answers, the refusals (another user 403, a missing scope
// 403, app-only 403, oneself and unknown targets 400, a block refusing a
// follow 403), repeats, the lists and the counters, each answer checked
// against the OpenAPI description where it has the operation.
func TestSocialEndpoints(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	router := apitest.OpenAPIRouter(t)
	ctx := t.Context()
	locked := b.AddUser(t, "locked", "read-write")
	if _, err := b.DB.SetUserState(ctx, locked.ID, "protected", time.Now()); err != nil {
		t.Fatal(err)
	}
	third := b.AddUser(t, "third", "read-write")
	reading := b.AddUser(t, "reading", "read")
	reader, author := ids.Format(b.User.ID), ids.Format(b.Author.ID)
	full := oauth2Token(t, b, b.User.ID, "tweet.read", "users.read", "follows.read", "follows.write", "mute.read", "mute.write", "block.read", "block.write")
	readOnly := oauth2Token(t, b, b.User.ID, "tweet.read", "users.read", "follows.read", "mute.read", "block.read")
	basic := oauth2Token(t, b, b.User.ID, "tweet.read", "users.read")
	const unsupported, notAuthorized, invalid = "unsupported-authentication", "not-authorized-for-resource", "invalid-request"
	steps := []struct {
		name, method, path, authz string
		body                      []byte
		status                    int
		slug                      string
		want                      map[string]any // paths ("data.following") to values
		inSpec                    bool
	}{
		{"follow", "POST", "/2/users/" + reader + "/following", full, target(b.Author.ID), 200, "", map[string]any{"data.following": true, "data.pending_follow": false}, true},
		{"follow again", "POST", "/2/users/" + reader + "/following", "oauth:reader", target(b.Author.ID), 200, "", map[string]any{"data.following": true}, true},
		{"follow a protected user: pending", "POST", "/2/users/" + reader + "/following", full, target(locked.ID), 200, "", map[string]any{"data.following": false, "data.pending_follow": true}, true},
		{"third follows author", "POST", "/2/users/" + ids.Format(third.ID) + "/following", "oauth:third", target(b.Author.ID), 200, "", map[string]any{"data.following": true}, true},
		{"follow as another user", "POST", "/2/users/" + author + "/following", full, target(third.ID), 403, notAuthorized, nil, true},
		{"follow without follows.write", "POST", "/2/users/" + reader + "/following", readOnly, target(third.ID), 403, unsupported, nil, false},
		{"follow app-only", "POST", "/2/users/" + reader + "/following", b.Bearer, target(third.ID), 403, unsupported, nil, false},
		{"follow with a read-only OAuth 1.0a token", "POST", "/2/users/" + ids.Format(reading.ID) + "/following", "oauth:reading", target(third.ID), 403, "", nil, false},
		{"follow oneself", "POST", "/2/users/" + reader + "/following", full, target(b.User.ID), 400, invalid, nil, true},
		{"follow an unknown user", "POST", "/2/users/" + reader + "/following", full, target(42), 400, invalid, nil, true},
		{"follow without a target", "POST", "/2/users/" + reader + "/following", full, []byte(`{}`), 400, invalid, nil, false},
		{"author's followers", "GET", "/2/users/" + author + "/followers?user.fields=public_metrics", b.Bearer, nil, 200, "",
			map[string]any{"meta.result_count": float64(2), "data.0.id": ids.Format(third.ID), "data.1.id": reader, "data.1.public_metrics.following_count": float64(1)}, true},
		{"followers, a page of one", "GET", "/2/users/" + author + "/followers?max_results=1", b.Bearer, nil, 200, "",
			map[string]any{"meta.result_count": float64(1), "data.0.id": ids.Format(third.ID)}, true},
		{"reader's following", "GET", "/2/users/" + reader + "/following", full, nil, 200, "", map[string]any{"meta.result_count": float64(1), "data.0.id": author}, true},
		{"following without follows.read", "GET", "/2/users/" + reader + "/following", basic, nil, 403, unsupported, nil, false},
		{"a protected user's followers, app-only", "GET", "/2/users/" + ids.Format(locked.ID) + "/followers", b.Bearer, nil, 200, "",
			map[string]any{"errors.0.type": apitest.Problems + notAuthorized}, true},
		{"an unknown user's followers", "GET", "/2/users/42/followers", b.Bearer, nil, 200, "", map[string]any{"errors.0.type": apitest.Problems + "resource-not-found"}, true},
		{"max_results 0", "GET", "/2/users/" + author + "/followers?max_results=0", b.Bearer, nil, 400, invalid, nil, false},
		{"bad token", "GET", "/2/users/" + author + "/followers?pagination_token=notatokenatall!!", b.Bearer, nil, 400, invalid, nil, false},
		{"author's public metrics", "GET", "/2/users/" + author + "?user.fields=public_metrics", b.Bearer, nil, 200, "",
			map[string]any{"data.public_metrics.followers_count": float64(2), "data.public_metrics.following_count": float64(0)}, true},
		{"unfollow", "DELETE", "/2/users/" + reader + "/following/" + author, full, nil, 200, "", map[string]any{"data.following": false}, true},
		{"unfollow again", "DELETE", "/2/users/" + reader + "/following/" + author, full, nil, 200, "", map[string]any{"data.following": false}, true},
		{"unfollow without follows.write", "DELETE", "/2/users/" + reader + "/following/" + author, readOnly, nil, 403, unsupported, nil, false},
		{"unfollow as another user", "DELETE", "/2/users/" + author + "/following/" + reader, full, nil, 403, notAuthorized, nil, true},

		{"mute", "POST", "/2/users/" + reader + "/muting", full, target(b.Author.ID), 200, "", map[string]any{"data.muting": true}, true},
		{"mute again", "POST", "/2/users/" + reader + "/muting", full, target(b.Author.ID), 200, "", map[string]any{"data.muting": true}, true},
		{"mute oneself", "POST", "/2/users/" + reader + "/muting", full, target(b.User.ID), 400, invalid, nil, true},
		{"mute an unknown user", "POST", "/2/users/" + reader + "/muting", full, target(42), 400, invalid, nil, true},
		{"mute as another user", "POST", "/2/users/" + author + "/muting", full, target(third.ID), 403, notAuthorized, nil, true},
		{"mute without mute.write", "POST", "/2/users/" + reader + "/muting", readOnly, target(third.ID), 403, unsupported, nil, false},
		{"muting", "GET", "/2/users/" + reader + "/muting", full, nil, 200, "", map[string]any{"meta.result_count": float64(1), "data.0.username": "author"}, true},
		{"another user's muting", "GET", "/2/users/" + author + "/muting", full, nil, 403, notAuthorized, nil, true},
		{"muting app-only", "GET", "/2/users/" + reader + "/muting", b.Bearer, nil, 403, unsupported, nil, false},
		{"muting without mute.read", "GET", "/2/users/" + reader + "/muting", basic, nil, 403, unsupported, nil, false},
		{"unmute as another user", "DELETE", "/2/users/" + author + "/muting/" + reader, full, nil, 403, notAuthorized, nil, true},
		{"unmute without mute.write", "DELETE", "/2/users/" + reader + "/muting/" + author, readOnly, nil, 403, unsupported, nil, false},
		{"unmute", "DELETE", "/2/users/" + reader + "/muting/" + author, full, nil, 200, "", map[string]any{"data.muting": false}, true},
		{"muting after the unmute", "GET", "/2/users/" + reader + "/muting", full, nil, 200, "", map[string]any{"meta.result_count": float64(0)}, true},

		{"third follows reader", "POST", "/2/users/" + ids.Format(third.ID) + "/following", "oauth:third", target(b.User.ID), 200, "", map[string]any{"data.following": true}, true},
		{"block third", "POST", "/2/users/" + reader + "/blocking", full, target(third.ID), 200, "", map[string]any{"data.blocking": true}, false},
		{"block again", "POST", "/2/users/" + reader + "/blocking", full, target(third.ID), 200, "", map[string]any{"data.blocking": true}, false},
		{"the block ended third's follow", "GET", "/2/users/" + reader + "/followers", b.Bearer, nil, 200, "", map[string]any{"meta.result_count": float64(0)}, true},
		{"third can not follow reader", "POST", "/2/users/" + ids.Format(third.ID) + "/following", "oauth:third", target(b.User.ID), 403, notAuthorized, nil, true},
		{"block without block.write", "POST", "/2/users/" + reader + "/blocking", readOnly, target(b.Author.ID), 403, unsupported, nil, false},
		{"block as another user", "POST", "/2/users/" + author + "/blocking", full, target(third.ID), 403, notAuthorized, nil, false},
		{"block oneself", "POST", "/2/users/" + reader + "/blocking", full, target(b.User.ID), 400, invalid, nil, false},
		{"blocking", "GET", "/2/users/" + reader + "/blocking", full, nil, 200, "", map[string]any{"meta.result_count": float64(1), "data.0.id": ids.Format(third.ID)}, true},
		{"another user's blocking", "GET", "/2/users/" + author + "/blocking", full, nil, 403, notAuthorized, nil, true},
		{"blocking without block.read", "GET", "/2/users/" + reader + "/blocking", basic, nil, 403, unsupported, nil, false},
		{"unblock as another user", "DELETE", "/2/users/" + author + "/blocking/" + reader, full, nil, 403, notAuthorized, nil, false},
		{"unblock without block.write", "DELETE", "/2/users/" + reader + "/blocking/" + ids.Format(third.ID), readOnly, nil, 403, unsupported, nil, false},
		{"unblock", "DELETE", "/2/users/" + reader + "/blocking/" + ids.Format(third.ID), full, nil, 200, "", map[string]any{"data.blocking": false}, false},
		{"third follows reader again", "POST", "/2/users/" + ids.Format(third.ID) + "/following", "oauth:third", target(b.User.ID), 200, "", map[string]any{"data.following": true}, true},
	}
	for _, s := range steps {
		ct := ""
		if s.body != nil {
			ct = "application/json"
		}
		r := b.Call(t, s.method, s.path, s.authz, ct, s.body)
		if r.Status != s.status {
			t.Fatalf("%s: %d, want %d: %s", s.name, r.Status, s.status, r.Raw)
		}
		if s.slug != "" {
			if typ, _ := r.Body["type"].(string); !strings.HasSuffix(typ, "/"+s.slug) {
				t.Errorf("%s: type %q, want %s: %s", s.name, typ, s.slug, r.Raw)
			}
		}
		for path, want := range s.want {
			if got := apitest.Obj(r.Body, strings.Split(path, ".")...); got != want {
				t.Errorf("%s: %s = %v, want %v: %s", s.name, path, got, want, r.Raw)
			}
		}
		if s.inSpec {
			if err := apitest.ValidateResponse(ctx, router, s.method, s.path, r); err != nil {
				t.Errorf("%s: against the OpenAPI: %v: %s", s.name, err, r.Raw)
			}
		}
	}
}

// TestSocialListPages: following pages through next_token, newest first.
func TestSocialListPages(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	var want []string
	for i := range 3 {
		u := b.AddUser(t, fmt.Sprintf("fan%d", i), "read-write")
		r := b.Call(t, "POST", "/2/users/"+ids.Format(u.ID)+"/following", "oauth:"+u.Username, "application/json", target(b.Author.ID))
		if r.Status != 200 {
			t.Fatalf("follow: %d %s", r.Status, r.Raw)
		}
		want = append([]string{ids.Format(u.ID)}, want...)
	}
	var got []string
	token := ""
	for range 5 {
		path := "/2/users/" + ids.Format(b.Author.ID) + "/followers?max_results=2"
		if token != "" {
			path += "&pagination_token=" + token
		}
		r := b.Get(t, path, b.Bearer)
		for _, d := range r.Body["data"].([]any) {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		token, _ = apitest.Obj(r.Body, "meta", "next_token").(string)
		if token == "" {
			break
		}
		if len(token) < 16 {
			t.Fatalf("next_token %q shorter than the OpenAPI's 16", token)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("followers = %v, want %v", got, want)
	}
}
