package oauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

type limitedReply struct {
	status int
	header http.Header
	body   map[string]any
}

// send posts form to path with Basic credentials (nil: none).
func (f *fixture) send(t *testing.T, path string, form url.Values, basic []string) limitedReply {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := limitedReply{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s: %d %q is not JSON", path, resp.StatusCode, raw)
	}
	return r
}

// wantLimited checks a 429 with a Retry-After within the window.
func wantLimited(t *testing.T, r limitedReply, window time.Duration) {
	t.Helper()
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != http.StatusTooManyRequests || err != nil || retry < 1 || time.Duration(retry)*time.Second > window {
		t.Fatalf("want 429 with Retry-After within %s, got %d Retry-After %q %v", window, r.status, r.header.Get("Retry-After"), r.body)
	}
}

// TestTokenEndpointLimits: each endpoint counts an authenticated client's
// requests and answers 429 with Retry-After and its own error shape past
// the limit; another client is not affected; failed client
// authentications are limited per address, and only then.
func TestTokenEndpointLimits(t *testing.T) {
	const window = time.Minute
	tests := []struct {
		name  string
		path  string
		form  url.Values
		basic func(f *fixture) []string
		shape func(t *testing.T, body map[string]any)
	}{
		{"token", "/2/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}}, (*fixture).basic, oauth2Shape},
		{"revoke", "/2/oauth2/revoke", url.Values{"token": {"nope"}}, (*fixture).basic, oauth2Shape},
		{"app-only token", "/oauth2/token", url.Values{"grant_type": {"client_credentials"}},
			func(f *fixture) []string { return []string{f.app.ConsumerKey, f.app.ConsumerSecret} }, v1Shape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			f.server.WithLimits(oauth.Limits{Window: web.NewWindow(f.rc, f.prefix+"token:", window), PerClient: 3, PerAddress: 2})
			for i := 0; i < 3; i++ {
				r := f.send(t, tt.path, tt.form, tt.basic(f))
				if r.status == http.StatusTooManyRequests || r.header.Get("x-rate-limit-remaining") != strconv.Itoa(2-i) {
					t.Fatalf("request %d: %d remaining %q", i, r.status, r.header.Get("x-rate-limit-remaining"))
				}
			}
			r := f.send(t, tt.path, tt.form, tt.basic(f))
			wantLimited(t, r, window)
			tt.shape(t, r.body)

			// Failed client authentications: two per address, then 429
			// even for good credentials from that address.
			bad := []string{"unknown-client", "x"}
			for i := 0; i < 2; i++ {
				if r := f.send(t, tt.path, tt.form, bad); r.status == http.StatusTooManyRequests {
					t.Fatalf("failure %d limited too early", i)
				}
			}
			wantLimited(t, f.send(t, tt.path, tt.form, bad), window)
		})
	}
}

func oauth2Shape(t *testing.T, body map[string]any) {
	t.Helper()
	if body["error"] != "rate_limited" || body["error_description"] == "" {
		t.Errorf("body %v, want error rate_limited", body)
	}
}

func v1Shape(t *testing.T, body map[string]any) {
	t.Helper()
	errs, _ := body["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["code"] != float64(88) {
		t.Errorf("body %v, want errors[0].code 88", body)
	}
}

// TestTokenLimitPerClient: one client's spent limit leaves another's
// alone, and good requests do not count as failures.
func TestTokenLimitPerClient(t *testing.T) {
	f := setup(t)
	f.server.WithLimits(oauth.Limits{Window: web.NewWindow(f.rc, f.prefix+"token:", time.Minute), PerClient: 1, PerAddress: 1})
	form := url.Values{"token": {"nope"}}
	if r := f.send(t, "/2/oauth2/revoke", form, f.basic()); r.status != 200 {
		t.Fatalf("first revoke: %d %v", r.status, r.body)
	}
	wantLimited(t, f.send(t, "/2/oauth2/revoke", form, f.basic()), time.Minute)
	public := url.Values{"token": {"nope"}, "client_id": {f.publicClient.ClientID}}
	if r := f.send(t, "/2/oauth2/revoke", public, nil); r.status != 200 {
		t.Fatalf("another client: %d %v", r.status, r.body)
	}
}
