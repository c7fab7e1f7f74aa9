package api_test

import (
	"github.com/aviary-dev/aviary/api/apitest"
	"strconv"
	"testing"
	"time"
)

// TestMalformedCredentials sends credentials PostgreSQL cannot even decode
// (invalid UTF-8, NUL) or that no issued credential can equal: each is a 401
// Problem, never a 500 from the database's encoding error.
func TestMalformedCredentials(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	oauth := func(consumerKey, token string) string {
		return `OAuth oauth_consumer_key="` + consumerKey + `", oauth_token="` + token + `", oauth_nonce="n` +
			strconv.FormatInt(time.Now().UnixNano(), 10) + `", oauth_timestamp="` + strconv.FormatInt(time.Now().Unix(), 10) +
			`", oauth_signature_method="HMAC-SHA1", oauth_version="1.0", oauth_signature="c2lnbmF0dXJl"`
	}
	tests := []struct{ name, method, path, authz string }{
		{"bearer, invalid UTF-8", "GET", "/2/compliance/jobs?type=tweets", "Bearer \xff\xfe"},
		{"bearer, invalid UTF-8 after a valid prefix", "GET", "/2/compliance/jobs?type=tweets", "Bearer AAAA\xc3"},
		{"oauth_token, invalid UTF-8", "POST", "/2/tweets", oauth(b.App.ConsumerKey, "%FF")},
		{"oauth_token, NUL", "POST", "/2/tweets", oauth(b.App.ConsumerKey, b.Token.Token+"%00")},
		{"oauth_consumer_key, NUL", "POST", "/2/tweets", oauth("%00", b.Token.Token)},
		{"oauth_consumer_key, invalid UTF-8", "DELETE", "/2/tweets/1", oauth("%C3%28", b.Token.Token)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Call(t, tt.method, tt.path, tt.authz, "application/json", apitest.JSONBody(map[string]any{"text": "x"}))
			if r.Status != 401 {
				t.Fatalf("status %d, want 401: %s", r.Status, r.Raw)
			}
			if r.Header.Get("Content-Type") != "application/problem+json" || r.Body["title"] != "Unauthorized" || r.Body["status"] != float64(401) {
				t.Errorf("problem %s", r.Raw)
			}
		})
	}
}
