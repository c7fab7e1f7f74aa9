package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL checks the webhook URL rule: a refusal wraps ErrURL; an
// accepted URL is at most MaxURLLength long, absolute, without user info,
// fragment or white space, and https without a port unless its host:port
// is on the allow-list (then http works too); building the CRC request
// for it succeeds and carries the crc_token.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com/webhook", "https://example.com/w?x=1", "http://example.com/w",
		"https://example.com:8443/w", "http://localhost:3000/webhook", "https://user:pw@example.com/", "https://example.com/#f",
		"https://exa mple.com", "//example.com", "https:example.com", "mailto:a@b", "https://[::1]/", "https://169.254.169.254/latest",
		"https://example.com/" + strings.Repeat("a", MaxURLLength), "", "https://%zz", "HTTPS://EXAMPLE.COM/", "http://dev.example/w"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	allow := func(hp string) bool { return hp == "localhost:3000" || hp == "dev.example:80" }
	f.Fuzz(func(t *testing.T, raw string, withAllowList bool) {
		var allowed Allowed
		if withAllowList {
			allowed = allow
		}
		err := CheckURL(raw, allowed)
		if err != nil {
			if !errors.Is(err, ErrURL) {
				t.Fatalf("CheckURL(%q) = %v, which does not wrap ErrURL", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || len(raw) > MaxURLLength || u.Host == "" || u.User != nil || u.Fragment != "" || strings.ContainsAny(raw, " \t\r\n") {
			t.Fatalf("CheckURL(%q) accepted it", raw)
		}
		onList := withAllowList && allow(hostPort(u))
		if !onList && (u.Scheme != "https" || u.Port() != "") {
			t.Fatalf("CheckURL(%q) accepted a URL off the allow-list that is not https without a port", raw)
		}
		req, err := crcRequest(t.Context(), raw, "tok")
		if err != nil || req.URL.Query().Get("crc_token") != "tok" {
			t.Fatalf("crcRequest(%q) = %v, %v", raw, req, err)
		}
	})
}

// FuzzJudge checks the reading of a receiver's CRC answer: only a 2xx
// whose JSON response_token is exactly the expected one passes; a 3xx or
// a wrong token fails for good; every failure says why.
func FuzzJudge(f *testing.F) {
	want := Sign("secret", []byte("tok"))
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"response_token":"` + want + `"}`}, {200, `{"response_token":"sha256=x"}`}, {200, `{}`}, {200, ``},
		{200, `{"response_token":"` + want + `","response_token":"x"}`}, {200, `{"Response_Token":"` + want + `"}`},
		{204, `{"response_token":"` + want + `"} trailing`}, {302, `{"response_token":"` + want + `"}`}, {500, ``},
		{200, `{"response_token":"` + strings.Replace(want, "=", `\u003d`, 1) + `"}`}, {200, `[` + want + `]`}, {99, ""},
	} {
		f.Add(s.status, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		resp := &http.Response{StatusCode: status, Body: io.NopCloser(bytes.NewReader(body))}
		o := judge(resp, want)
		if o.OK == (o.Failure != "") || (o.OK && o.Permanent) {
			t.Fatalf("judge(%d, %q) = %+v", status, body, o)
		}
		var answer struct {
			ResponseToken string `json:"response_token"`
		}
		passes := status >= 200 && status <= 299 && len(body) <= maxCRCBody &&
			json.Unmarshal(body, &answer) == nil && answer.ResponseToken == want
		if o.OK != passes {
			t.Fatalf("judge(%d, %q) = %+v, want OK %v", status, body, o, passes)
		}
		if status >= 300 && status <= 399 && !o.Permanent {
			t.Fatalf("judge(%d) = %+v: a redirect fails for good", status, o)
		}
	})
}
