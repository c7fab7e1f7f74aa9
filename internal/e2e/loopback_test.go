package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
)

// signedOverCalledURL sends method path to base (the main listener's or
// the sandbox's) signed, as a client does, over the URL it calls.
func (s *stack) signedOverCalledURL(method, base, path string, body any) response {
	s.t.Helper()
	req := s.newRequest(method, path, body)
	req.URL.Host = strings.TrimPrefix(base, "http://")
	req.Host = req.URL.Host
	if err := auth.SignRequest(req, "", s.creds.ConsumerKey, s.creds.ConsumerSecret, s.creds.AccessToken, s.creds.AccessTokenSecret, time.Now(), ""); err != nil {
		s.t.Fatal(err)
	}
	return s.send(req)
}

// TestLoopbackSignatures: with the public URLs on localhost (make run's
// defaults) a client calling http://127.0.0.1:<port> signs over that.
// `aviary dev` accepts it, on the main listener and the ads sandbox;
// `aviary api` refuses it with a 401 naming the base URL it checked.
func TestLoopbackSignatures(t *testing.T) {
	t.Parallel()
	t.Run("aviary dev", func(t *testing.T) {
		t.Parallel()
		s := newStack(t, stackOptions{dev: true, driver: "local", publicHost: "localhost"})
		if r := s.signedOverCalledURL("POST", s.baseURL, "/2/tweets", map[string]any{"text": "signed over 127.0.0.1"}); r.Status != http.StatusCreated {
			t.Errorf("POST /2/tweets signed over %s: %d %s, want 201", s.baseURL, r.Status, r.Raw)
		}
		if r := s.signedOverCalledURL("GET", s.sandboxURL, "/12/accounts", nil); r.Status != http.StatusOK {
			t.Errorf("sandbox GET /12/accounts signed over %s: %d %s, want 200", s.sandboxURL, r.Status, r.Raw)
		}
	})
	t.Run("aviary api", func(t *testing.T) {
		t.Parallel()
		s := newStack(t, stackOptions{driver: "local", publicHost: "localhost"})
		r := s.signedOverCalledURL("POST", s.baseURL, "/2/tweets", map[string]any{"text": "signed over 127.0.0.1"})
		want := publicURL(s.baseURL, "localhost") + "/2/tweets"
		if detail, _ := r.Body["detail"].(string); r.Status != http.StatusUnauthorized || !strings.Contains(detail, want) {
			t.Errorf("POST /2/tweets signed over %s: %d %s, want 401 naming %s", s.baseURL, r.Status, r.Raw, want)
		}
	})
}
