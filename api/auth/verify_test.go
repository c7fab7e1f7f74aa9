package auth

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// TestVerifiesPublishedRequests feeds the published example requests,
// exactly as documented, through the UserContext requirement.
func TestVerifiesPublishedRequests(t *testing.T) {
	tests := []struct {
		name, public, method, target, host, body, header string
		app                                              storage.App
		token                                            storage.AccessToken
		now                                              int64
	}{
		{
			name: "platform example", public: "https://api.x.com", method: http.MethodPost,
			target: "/1.1/statuses/update.json?include_entities=true", host: "internal:8080", body: xStatusBody,
			header: `OAuth oauth_consumer_key="` + xConsumerKey + `", oauth_nonce="` + xNonce + `", oauth_signature="` + PercentEncode(xSignature) +
				`", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1318622958", oauth_token="` + xToken + `", oauth_version="1.0"`,
			app:   storage.App{ID: 7, ConsumerKey: xConsumerKey, ConsumerSecret: xConsumerSecret},
			token: storage.AccessToken{Token: xToken, Secret: xTokenSecret, AppID: 7, UserID: 10},
			now:   xTimestamp + 60,
		},
		{
			name: "RFC 5849 section 1.2", method: http.MethodGet, target: "/photos?file=vacation.jpg&size=original", host: "photos.example.net",
			header: "OAuth realm=\"Photos\",\r\n oauth_consumer_key=\"dpf43f3p2l4k3l03\",\r\n oauth_token=\"nnch734d00sl2jdk\",\r\n oauth_signature_method=\"HMAC-SHA1\",\r\n" +
				" oauth_timestamp=\"137131202\",\r\n oauth_nonce=\"chapoH\",\r\n oauth_signature=\"MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D\"",
			app:   storage.App{ID: 8, ConsumerKey: "dpf43f3p2l4k3l03", ConsumerSecret: "kd94hf93k423kf44"},
			token: storage.AccessToken{Token: "nnch734d00sl2jdk", Secret: "pfkkdhi9sl3r4s00", AppID: 8, UserID: 10},
			now:   137131202 - 299,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newFakeStore()
			store.apps = append(store.apps, tt.app)
			store.tokens[tt.token.Token] = tt.token
			a, err := New(store, &memNonces{}, tt.public, func() time.Time { return time.Unix(tt.now, 0) }, quietWriter)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			r.Host = tt.host
			r.Header.Set("Authorization", tt.header)
			if tt.body != "" {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			rec := httptest.NewRecorder()
			a.Middleware(UserContext)(echo).ServeHTTP(rec, r)
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "oauth1 app=") {
				t.Errorf("status %d, body %s", rec.Code, rec.Body)
			}
		})
	}
}

// TestSignRequestOverHTTP signs real client requests and sends them to a
// server, with and without a configured public base URL.
func TestSignRequestOverHTTP(t *testing.T) {
	tests := []struct {
		name, serverBase, clientBase string
		method                       string
		form                         url.Values
		want                         string
	}{
		{name: "GET, derived base URL", method: http.MethodGet, want: "oauth1 app=1 user=10 token=" + at1 + " status="},
		{name: "POST form, derived base URL", method: http.MethodPost, form: url.Values{"status": {"snow ☃ & 100% + ~"}},
			want: "oauth1 app=1 user=10 token=" + at1 + " status=snow ☃ & 100% + ~"},
		{name: "POST form, public base URL", serverBase: "https://api.aviary.test/v", clientBase: "https://api.aviary.test/v",
			method: http.MethodPost, form: url.Values{"status": {"hi"}}, want: "oauth1 app=1 user=10 token=" + at1 + " status=hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(newFakeStore(), &memNonces{}, tt.serverBase, nil, quietWriter)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(a.Middleware(UserContext)(echo))
			defer srv.Close()
			var body io.Reader
			if tt.form != nil {
				body = strings.NewReader(tt.form.Encode())
			}
			req, err := http.NewRequestWithContext(context.Background(), tt.method, srv.URL+"/2/tweets?ids=1,2&q=a%20b", body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if err := SignRequest(req, tt.clientBase, ck1, cs1, at1, ts1, time.Now(), ""); err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || string(got) != tt.want {
				t.Errorf("status %d body %q, want 200 %q", resp.StatusCode, got, tt.want)
			}
		})
	}
}
