package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
)

// Reply is an answer of the API: its status, headers, raw body and the
// body decoded as a JSON object (nil when it is not one).
type Reply struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// NoRedirects is a client that answers a redirect itself instead of
// following it: the API never redirects, so a test must see one if it does.
func NoRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Call sends a request; authz "oauth:<name>" signs it as that user
// ("oauth:author", a user of AddUser, anything else as the reader), any
// other non-empty authz is sent as the Authorization header.
func (b *Bundle) Call(t testing.TB, method, path, authz, contentType string, body []byte) Reply {
	t.Helper()
	req, err := http.NewRequest(method, b.Srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	switch {
	case strings.HasPrefix(authz, "oauth:"):
		tok := b.Token
		if authz == "oauth:author" {
			tok = b.AuthorToken
		}
		if named, ok := b.Tokens[strings.TrimPrefix(authz, "oauth:")]; ok {
			tok = named
		}
		if err := auth.SignRequest(req, "", b.App.ConsumerKey, b.App.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
			// Unsignable input (fuzzing): send it with a bogus signature.
			req.Header.Set("Authorization", `OAuth oauth_consumer_key="`+b.App.ConsumerKey+`"`)
		}
	case authz != "":
		req.Header.Set("Authorization", authz)
	}
	resp, err := NoRedirects().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}

// Create posts body as authz and returns the new post's id.
func (b *Bundle) Create(t testing.TB, authz string, body any) string {
	t.Helper()
	r := b.Call(t, "POST", "/2/tweets", authz, "application/json", JSONBody(body))
	if r.Status != 201 {
		t.Fatalf("create %v as %s: %d %s", body, authz, r.Status, r.Raw)
	}
	return r.Body["data"].(map[string]any)["id"].(string)
}

// Get sends GET path as authz and fails the test unless it is a 200.
func (b *Bundle) Get(t testing.TB, path, authz string) Reply {
	t.Helper()
	r := b.Call(t, "GET", path, authz, "", nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Raw)
	}
	return r
}

// JSONBody encodes v as JSON.
func JSONBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// ParamNames lists the parameter names of an invalid-request problem.
func ParamNames(body map[string]any) []string {
	var names []string
	errs, _ := body["errors"].([]any)
	for _, e := range errs {
		params, _ := e.(map[string]any)["parameters"].(map[string]any)
		for name := range params {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Obj walks a decoded JSON body: Obj(body, "data", "0", "id").
func Obj(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			fmt.Sscan(p, &i)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// CanonicalJSON re-encodes a JSON document with sorted keys.
func CanonicalJSON(t *testing.T, raw string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
