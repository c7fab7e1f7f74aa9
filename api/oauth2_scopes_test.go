package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// oauth2Token issues an OAuth 2.0 user access token with scopes for the
// bundle's reader, through the store's code exchange as the token endpoint
// does (web/oauth tests drive the endpoint itself).
func oauth2Token(t *testing.T, b *apitest.Bundle, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	code, _ := ids.Token(40)
	access, _ := ids.Token(60)
	now := time.Now()
	if err := b.DB.CreateOAuth2Code(ctx, code, storage.OAuth2Code{AppID: b.App.ID, UserID: b.User.ID, RedirectURI: "http://cb.example/",
		Scopes: scopes, Challenge: "challenge", Method: "plain", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, err := b.DB.ExchangeOAuth2Code(ctx, code, now, func(storage.OAuth2Code) (storage.OAuth2Issued, error) {
		return storage.OAuth2Issued{Access: access, AccessExpires: now.Add(2 * time.Hour), Scopes: scopes}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return access
}

// TestOAuth2UserTokensAndScopes: OAuth 2.0 user access tokens are user
// context on the core endpoints, each checked against the endpoint's
// scopes; app-only endpoints refuse them; OAuth 1.0a keeps working.
func TestOAuth2UserTokensAndScopes(t *testing.T) {
	b := apitest.Setup(t, 100)
	router := apitest.OpenAPIRouter(t)
	read := "Bearer " + oauth2Token(t, b, "tweet.read", "users.read")
	write := "Bearer " + oauth2Token(t, b, "tweet.read", "tweet.write", "users.read", "like.write")
	media := "Bearer " + oauth2Token(t, b, "media.write")
	post := apitest.JSONBody(map[string]any{"text": "hello from OAuth 2.0"})
	author := ids.Format(b.Author.ID)
	engage := apitest.JSONBody(map[string]any{"tweet_id": "1"})
	const unsupported = "unsupported-authentication"
	tests := []struct {
		name, method, path, authz string
		body                      []byte
		status                    int
		slug                      string
	}{
		{"users/me with read scopes", "GET", "/2/users/me", read, nil, 200, ""},
		{"users/me without users.read", "GET", "/2/users/me", media, nil, 403, unsupported},
		{"post lookup with read scopes", "GET", "/2/tweets?ids=1", read, nil, 200, ""},
		{"create a post without tweet.write", "POST", "/2/tweets", read, post, 403, unsupported},
		{"create a post with tweet.write", "POST", "/2/tweets", write, post, 201, ""},
		{"like without like.write", "POST", "/2/users/" + ids.Format(b.User.ID) + "/likes", read, engage, 403, unsupported},
		{"like as another user", "POST", "/2/users/" + author + "/likes", write, engage, 403, "not-authorized-for-resource"},
		{"repost as another user", "POST", "/2/users/" + author + "/retweets", write, engage, 403, "not-authorized-for-resource"},
		{"media status without media.write", "GET", "/2/media/upload?command=STATUS&media_id=1", read, nil, 403, unsupported},
		{"app-only endpoint refuses a user token", "GET", "/2/tweets/search/all?query=hello", read, nil, 403, "unsupported-authentication"},
		{"unknown bearer", "GET", "/2/users/me", "Bearer nope-not-a-token", nil, 401, ""},
		{"oauth 1.0a still works", "POST", "/2/tweets", "oauth:reader", apitest.JSONBody(map[string]any{"text": "signed"}), 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := ""
			if tt.body != nil {
				ct = "application/json"
			}
			r := b.Call(t, tt.method, tt.path, tt.authz, ct, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if tt.slug != "" && r.Body["type"] != apitest.Problems+tt.slug {
				t.Errorf("type %v, want %s", r.Body["type"], tt.slug)
			}
			if tt.slug == unsupported && tt.path != "/2/tweets/search/all?query=hello" {
				if d, _ := r.Body["detail"].(string); !strings.Contains(d, "missing the scope") || r.Body["title"] != "Unsupported Authentication" {
					t.Errorf("a scope refusal should say which scope is missing: %s", r.Raw)
				}
			}
			if tt.slug == "not-authorized-for-resource" && (r.Body["resource_id"] != author || r.Body["resource_type"] != "user") {
				t.Errorf("refusal should name the user of the path: %s", r.Raw)
			}
			if err := apitest.ValidateResponse(t.Context(), router, tt.method, strings.SplitN(tt.path, "?", 2)[0], r); err != nil {
				t.Errorf("does not match the OpenAPI description: %v\nbody: %s", err, r.Raw)
			}
		})
	}
	me := b.Call(t, "GET", "/2/users/me", read, "", nil)
	if data, _ := me.Body["data"].(map[string]any); data["id"] != ids.Format(b.User.ID) {
		t.Errorf("users/me answered %s, want the token's user %d", me.Raw, b.User.ID)
	}
}
