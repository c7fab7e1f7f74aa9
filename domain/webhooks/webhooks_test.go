package webhooks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	allowed := func(hp string) bool { return hp == "localhost:3000" || hp == "dev.example:80" }
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://example.com/webhook", true},
		{"https://example.com/webhook?x=1", true},
		{"https://example.com", true},
		{"http://example.com/webhook", false},
		{"https://example.com:5000/webhook", false},
		{"https://example.com:443/webhook", false}, // a port, even the default one
		{"ftp://example.com/", false},
		{"example.com/webhook", false},
		{"https:///webhook", false},
		{"https://u:p@example.com/", false},
		{"https://example.com/#frag", false},
		{"https://example.com/" + strings.Repeat("a", MaxURLLength), false},
		{"", false},
		{"http://localhost:3000/webhook", true}, // allow-listed
		{"http://localhost:3001/webhook", false},
		{"http://dev.example/hook", true},
		{"https://dev.example/hook", true},
		{"javascript:alert(1)", false},
	}
	for _, tt := range tests {
		if err := CheckURL(tt.url, allowed); (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", tt.url, err, tt.ok)
		}
	}
	if err := CheckURL("http://localhost:3000/webhook", nil); err == nil {
		t.Error("without an allow-list a local http URL passed")
	}
}

// TestSign: the platform's documented construction, checked against a
// value computed independently (Python hmac/hashlib/base64).
func TestSign(t *testing.T) {
	t.Parallel()
	if got, want := Sign("secret", []byte("challenge_string")), "sha256=KVLX9CEwUdVdeJfmJAnltj/knkdCqwZJlA1u97xbErw="; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestRecord(t *testing.T) {
	t.Parallel()
	now := time.Now()
	hook := func(ago time.Duration) storage.Webhook {
		at := now.Add(-ago)
		return storage.Webhook{ID: 7, Valid: true, LastCRCOKAt: &at}
	}
	tests := []struct {
		name       string
		w          storage.Webhook
		o          Outcome
		invalidate bool
	}{
		{"pass", hook(30 * time.Hour), Outcome{OK: true}, false},
		{"permanent", hook(time.Minute), Outcome{Failure: "wrong", Permanent: true}, true},
		{"transient within 28 h", hook(27 * time.Hour), Outcome{Failure: "HTTP 500"}, false},
		{"transient past 28 h", hook(29 * time.Hour), Outcome{Failure: "HTTP 500"}, true},
		{"transient, never passed", storage.Webhook{ID: 7}, Outcome{Failure: "HTTP 500"}, true},
	}
	for _, tt := range tests {
		if got := Record(tt.w, tt.o, now); got.Invalidate != tt.invalidate || got.ID != 7 || got.OK != tt.o.OK {
			t.Errorf("%s: %+v, want invalidate %v", tt.name, got, tt.invalidate)
		}
	}
	if !EffectiveValid(hook(27*time.Hour), now) || EffectiveValid(hook(29*time.Hour), now) {
		t.Error("EffectiveValid does not apply the 28 h rule")
	}
}

// TestCheck judges real answers of a local receiver.
func TestCheck(t *testing.T) {
	t.Parallel()
	const secret = "consumer-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.URL.Query().Get("crc_token")
		switch r.URL.Path {
		case "/ok":
			if r.URL.Query().Get("keep") != "1" {
				token = "query lost"
			}
			json.NewEncoder(w).Encode(map[string]string{"response_token": Sign(secret, []byte(token))})
		case "/wrong":
			json.NewEncoder(w).Encode(map[string]string{"response_token": Sign("other", []byte(token))})
		case "/empty":
			w.Write([]byte(`{}`))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		case "/slow":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		url           string
		ok, permanent bool
	}{
		{srv.URL + "/ok?keep=1", true, false},
		{srv.URL + "/wrong", false, true},
		{srv.URL + "/empty", false, true},
		{srv.URL + "/redirect", false, true},
		{srv.URL + "/missing", false, false},
		{srv.URL + "/slow", false, false},
		{tlsSrv.URL + "/ok", false, true},
		{"http://127.0.0.1:1/", false, false},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		o := Check(ctx, client, tt.url, secret)
		cancel()
		if o.OK != tt.ok || o.Permanent != tt.permanent || (o.Failure == "") != tt.ok {
			t.Errorf("Check(%s) = %+v, want ok %v permanent %v", tt.url, o, tt.ok, tt.permanent)
		}
	}
}
