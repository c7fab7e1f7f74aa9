package oauth

import (
	"encoding/base64"
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzBasicAuth checks the token endpoints' client authentication header
// (Authorization: Basic, RFC 6749 section 2.3.1): basicAuth takes exactly
// the headers net/http reads as Basic; a client id it returns is storable
// (valid UTF-8 without NUL) or empty (refused as missing); and credentials
// form-encoded by the client, as the RFC asks, read back as sent.
func FuzzBasicAuth(f *testing.F) {
	for _, s := range []struct{ header, id, secret string }{
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("client:secret")), "client", "secret"},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("a%3Ab:c+d")), "a:b", "c d"},
		{"basic " + base64.StdEncoding.EncodeToString([]byte("\xff:\x00")), "\xff", ""},
		{"Basic !!", "", "%"}, {"Basic ", "%zz", "x"}, {"Bearer x", "", ""}, {"Basic " + base64.StdEncoding.EncodeToString([]byte("nocolon")), "", ""},
	} {
		f.Add(s.header, s.id, s.secret)
	}
	f.Fuzz(func(t *testing.T, header, id, secret string) {
		r := httptest.NewRequest("POST", "/2/oauth2/token", nil)
		r.Header.Set("Authorization", header)
		gotID, _, ok := basicAuth(r)
		_, _, netOK := r.BasicAuth()
		if ok != netOK || (gotID != "" && !storable(gotID)) {
			t.Fatalf("basicAuth(%q) = %q, %v", header, gotID, ok)
		}
		encoded := url.QueryEscape(id) + ":" + url.QueryEscape(secret)
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(encoded)))
		gotID, gotSecret, ok := basicAuth(r)
		wantID := id
		if !storable(id) {
			wantID = ""
		}
		if !ok || gotID != wantID || gotSecret != secret {
			t.Fatalf("basicAuth of %q:%q form-encoded = %q, %q, %v", id, secret, gotID, gotSecret, ok)
		}
	})
}
