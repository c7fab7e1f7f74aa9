package api_test

import (
	"context"
	"github.com/aviary-dev/aviary/api/apitest"
	"strings"
	"testing"
)

// TestMalformedInput: input Go's libraries would silently repair or redirect
// is refused in the API's own envelope, naming the parameter or field.
func TestMalformedInput(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	const js = "application/json"
	tests := []struct {
		name, method, path, authz string
		body                      []byte
		status                    int
		contentType               string // response Content-Type
		want                      string // substring of the response body
		params                    []string
	}{
		// Post text: invalid UTF-8 would be stored as U+FFFD, lone surrogates too.
		{"invalid UTF-8 text", "POST", "/2/tweets", "oauth:author", []byte("{\"text\":\"caf\xe9\"}"), 400, "application/problem+json", "valid UTF-8", []string{"text"}},
		{"invalid UTF-8 in a field name", "POST", "/2/tweets", "oauth:author", []byte("{\"te\xffxt\":\"ok\"}"), 400, "application/problem+json", "valid UTF-8", []string{"body"}},
		{"lone high surrogate", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"a\ud800b"}`), 400, "application/problem+json", "surrogate", []string{"text"}},
		{"lone low surrogate", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"\uDC00"}`), 400, "application/problem+json", "surrogate", []string{"text"}},
		{"reversed surrogate pair", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"\udc00\ud800"}`), 400, "application/problem+json", "surrogate", []string{"text"}},
		{"job name with invalid UTF-8", "POST", "/2/compliance/jobs", b.Bearer, []byte("{\"type\":\"users\",\"name\":\"\xc3\"}"), 400, "application/problem+json", "valid UTF-8", []string{"name"}},
		{"whitespace-only text", "POST", "/2/tweets", "oauth:author", []byte(`{"text":" \t\n\u00a0\u3000"}`), 400, "application/problem+json", "text", []string{"text"}},
		{"invisible-only text", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"\u200b\ufeff"}`), 400, "application/problem+json", "text", []string{"text"}},
		// Accepted neighbours of the refused input.
		{"surrogate pair is an emoji", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"\ud83d\ude00"}`), 201, "application/json; charset=utf-8", "\U0001F600", nil},
		{"escaped backslash before u", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"\\ud800"}`), 201, "application/json; charset=utf-8", `\\ud800`, nil},
		{"text with surrounding spaces", "POST", "/2/tweets", "oauth:author", []byte(`{"text":"  hi  "}`), 201, "application/json; charset=utf-8", `"text":"  hi  "`, nil},
		// Query strings net/url drops silently.
		{"malformed escape in a known parameter", "GET", "/2/compliance/jobs?type=%zz", b.Bearer, nil, 400, "application/problem+json", "malformed", []string{"type"}},
		{"malformed escape in a field list", "GET", "/2/compliance/jobs?type=users&compliance_job.fields=id%2", b.Bearer, nil, 400, "application/problem+json", "malformed", []string{"compliance_job.fields"}},
		{"semicolon separator", "GET", "/2/compliance/jobs?type=users;status=failed", b.Bearer, nil, 400, "application/problem+json", "malformed", []string{"type"}},
		{"malformed escape in a parameter name", "GET", "/2/compliance/jobs?type=users&%zz=1", b.Bearer, nil, 400, "application/problem+json", "malformed", []string{"%zz"}},
		// Non-clean paths: ServeMux would redirect (301) with an HTML body
		// (the "redirect:" prefix sends them without following redirects).
		{"double slash", "GET", "redirect://", b.Bearer, nil, 404, "application/problem+json", "about:blank", nil},
		{"dot segment", "POST", "redirect:/2/./tweets", b.Bearer, []byte(`{"text":"hi"}`), 404, "application/problem+json", "about:blank", nil},
		{"empty segment", "GET", "redirect:/2//compliance/jobs?type=users", b.Bearer, nil, 404, "application/problem+json", "about:blank", nil},
		{"dot-dot segment", "GET", "redirect:/2/compliance/../compliance/jobs?type=users", b.Bearer, nil, 404, "application/problem+json", "about:blank", nil},
		{"trailing dot", "DELETE", "redirect:/2/tweets/1/.", b.Bearer, nil, 404, "application/problem+json", "about:blank", nil},
		{"ads path keeps the ads envelope", "GET", "redirect:/12/accounts//x", b.Bearer, nil, 404, "application/json; charset=utf-8", "ROUTE_NOT_FOUND", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctype := ""
			if tt.body != nil {
				ctype = js
			}
			var r apitest.Reply
			if path, ok := strings.CutPrefix(tt.path, "redirect:"); ok {
				r = b.Call(t, tt.method, path, tt.authz, ctype, tt.body)
			} else {
				r = b.Call(t, tt.method, tt.path, tt.authz, ctype, tt.body)
			}
			if r.Status != tt.status || r.Header.Get("Content-Type") != tt.contentType || !strings.Contains(r.Raw, tt.want) {
				t.Fatalf("%d %q %s; want %d %q containing %q", r.Status, r.Header.Get("Content-Type"), r.Raw, tt.status, tt.contentType, tt.want)
			}
			if got := apitest.ParamNames(r.Body); strings.Join(got, ",") != strings.Join(tt.params, ",") {
				t.Errorf("parameters %v, want %v: %s", got, tt.params, r.Raw)
			}
			if r.Status == 201 {
				data := r.Body["data"].(map[string]any)
				id, _ := apitest.StrconvID(data["id"].(string))
				p, err := b.DB.PostByID(context.Background(), id)
				if err != nil || p.Text != data["text"] || strings.ContainsRune(p.Text, '\uFFFD') {
					t.Errorf("stored post %+v %v; answered %v", p, err, data)
				}
			}
		})
	}
}
