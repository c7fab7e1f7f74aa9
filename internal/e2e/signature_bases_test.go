package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
)

// redirect is a RoundTripper that sends requests for the platform's hosts
// to Aviary, as a client with hard-coded hosts is pointed at a local
// server: the request (and its signature) still names the platform.
type redirect struct {
	to   *url.URL
	next http.RoundTripper
}

func (rt redirect) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = rt.to.Scheme, rt.to.Host
	r.Host = rt.to.Host
	return rt.next.RoundTrip(r)
}

// TestSignatureBasesDev: in dev mode (AVIARY_OAUTH_SIGNATURE_BASES unset)
// a client that signs its OAuth 1.0a requests for https://api.x.com and
// whose transport is redirected to Aviary is accepted; a signature for a
// host not listed is refused, and so is a replayed nonce.
func TestSignatureBasesDev(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{dev: true, driver: "local"})
	to, err := url.Parse(s.baseURL)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: redirect{to: to, next: http.DefaultTransport}}
	send := func(method, target, body, nonce string) response {
		t.Helper()
		req, err := http.NewRequest(method, target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		// Signed over the request's own URL: the platform's host.
		if err := auth.SignRequest(req, "", s.creds.ConsumerKey, s.creds.ConsumerSecret, s.creds.AccessToken, s.creds.AccessTokenSecret, time.Now(), nonce); err != nil {
			t.Fatal(err)
		}
		saved := s.client
		s.client = client
		defer func() { s.client = saved }()
		return s.send(req)
	}
	me := send("GET", "https://api.x.com/2/users/me?user.fields=created_at", "", "")
	if me.Status != 200 || !strings.Contains(string(me.Raw), `"id":"`+s.creds.UserID+`"`) {
		t.Fatalf("users/me signed for api.x.com: %d %s", me.Status, me.Raw)
	}
	if r := send("POST", "https://api.x.com/2/tweets", `{"text":"signed for api.x.com"}`, ""); r.Status != 201 {
		t.Fatalf("POST /2/tweets signed for api.x.com: %d %s", r.Status, r.Raw)
	}
	if r := send("GET", "https://api.example.com/2/users/me", "", ""); r.Status != 401 {
		t.Errorf("signed for a host not listed: %d %s", r.Status, r.Raw)
	}
	nonce := "e2e-replay-" + time.Now().Format("150405.000000")
	if r := send("GET", "https://api.x.com/2/users/me", "", nonce); r.Status != 200 {
		t.Fatalf("first use of the nonce: %d %s", r.Status, r.Raw)
	}
	if r := send("GET", "https://api.x.com/2/users/me", "", nonce); r.Status != 401 || !strings.Contains(string(r.Raw), "nonce") {
		t.Errorf("replayed nonce: %d %s", r.Status, r.Raw)
	}
}
