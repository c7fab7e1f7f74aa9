package auth

import (
	"encoding/base64"
	"errors"
	"maps"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
)

// FuzzParseOAuthParams checks the OAuth 1.0a Authorization header parser:
//   - every refusal wraps errMalformedHeader (the authenticator's 401);
//   - every accepted header, printed again in the canonical form
//     (name="percent-encoded value", comma-separated), parses to the same
//     parameters;
//   - the credentials read from accepted parameters are either complete
//     or refused with a 401 *apierr.Error, never another error.
//
// Crashers it finds are kept in testdata/fuzz/FuzzParseOAuthParams.
func FuzzParseOAuthParams(f *testing.F) {
	for _, s := range []string{
		`oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", ` +
			`oauth_signature="tnnArxj06cWHq44gCs1OSKk%2FjLY%3D", oauth_signature_method="HMAC-SHA1", ` +
			`oauth_timestamp="1318622958", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", oauth_version="1.0"`,
		"realm=\"Photos\",\r\n\t oauth_token = \"a\" ,oauth_nonce=\"b\"", `a="1",b="2"`, `, a="1",, b="2",`,
		`a="x+y%20z"`, `oauth_token=""`, "  ", `a="1", a="2"`, `a=1`, `a="1`, `a`, `="1"`, `a="1" b="2"`, `a="%zz"`,
		`a="%"`, `a="\"`, "a=\"\xff\"", "\va=\"1\"", `oauth_timestamp="-1"`, `oauth_version="2.0"`, `a="%00"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		params, err := parseOAuthParams(header)
		if err != nil {
			if !errors.Is(err, errMalformedHeader) {
				t.Fatalf("parseOAuthParams(%q): error %v does not wrap errMalformedHeader", header, err)
			}
			return
		}
		canonical := formatOAuthParams(params)
		again, err := parseOAuthParams(canonical)
		if err != nil || !maps.Equal(again, params) {
			t.Fatalf("parseOAuthParams(%q) = %q, printed as %q, reads back as %q, %v", header, params, canonical, again, err)
		}
		for _, needToken := range []bool{true, false} {
			creds, err := parseCredentials(params, needToken)
			if err != nil {
				checkStatus(t, header, err, 401)
				continue
			}
			if creds.timestamp <= 0 || !isCredential(creds.consumerKey) || (needToken && !isCredential(creds.token)) {
				t.Fatalf("parseCredentials(%q) accepted %+v", params, creds)
			}
			if creds.signed.Has("oauth_signature") || creds.signed.Has("realm") {
				t.Fatalf("parseCredentials(%q): signed parameters %v hold oauth_signature or realm", params, creds.signed)
			}
		}
	})
}

// formatOAuthParams prints params as an OAuth header's credentials, names
// sorted.
func formatOAuthParams(params map[string]string) string {
	parts := make([]string, 0, len(params))
	for _, name := range slices.Sorted(maps.Keys(params)) {
		parts = append(parts, name+`="`+PercentEncode(params[name])+`"`)
	}
	return strings.Join(parts, ", ")
}

// checkStatus fails unless err is an *apierr.Error of status.
func checkStatus(t *testing.T, input string, err error, status int) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != status {
		t.Fatalf("%q: error %T %v, want an *apierr.Error %d", input, err, err, status)
	}
}

// FuzzAuthorization checks the split of an Authorization header into its
// scheme and credentials (Bearer and OAuth): the scheme is lower case
// without white space, the credentials carry none at either end, splitting
// "<scheme> <credentials>" again gives the same pair, and a header the
// authenticator does not take is a 401 *apierr.Error. One header or two
// are sent (two are refused).
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F",
		"bearer  x ", "BEARER\tx", "OAuth oauth_consumer_key=\"x\"", "oauth", "Basic dXNlcjpwYXNz", "", " ", "Bearer", "Bearer\u00a0x",
		"Bearer \x00", "\xffBearer x", "Digest realm=\"x\"", "Bearer x y z"} {
		f.Add(s, false)
	}
	f.Add("Bearer a", true)
	f.Fuzz(func(t *testing.T, header string, twice bool) {
		scheme, creds := splitAuthorization(header)
		if scheme != strings.ToLower(scheme) || strings.ContainsRune(scheme, ' ') {
			t.Fatalf("splitAuthorization(%q): scheme %q", header, scheme)
		}
		if creds != strings.TrimSpace(creds) {
			t.Fatalf("splitAuthorization(%q): credentials %q carry white space", header, creds)
		}
		if scheme != "" && creds != "" && !strings.ContainsFunc(scheme, isSpace) {
			s2, c2 := splitAuthorization(scheme + " " + creds)
			if s2 != scheme || c2 != creds {
				t.Fatalf("splitAuthorization(%q) = %q, %q; joined again: %q, %q", header, scheme, creds, s2, c2)
			}
		}
		r := httptest.NewRequest("GET", "/2/tweets", nil)
		r.Header["Authorization"] = []string{header}
		if twice {
			r.Header.Add("Authorization", header)
		}
		s, c, err := authorization(r)
		if err != nil {
			checkStatus(t, header, err, 401)
			return
		}
		if twice || (s != schemeBearer && s != schemeOAuth) || s != scheme || c != creds {
			t.Fatalf("authorization(%q, twice %v) accepted %q, %q", header, twice, s, c)
		}
	})
}

// isSpace is what strings.TrimSpace trims.
func isSpace(r rune) bool { return strings.TrimSpace(string(r)) == "" }

// FuzzSignatureBaseString checks RFC 5849's signature base string over
// arbitrary methods, URLs and parameters:
//   - PercentEncode leaves only unreserved bytes and %XX, and decodes back;
//   - the base string is the upper-cased method, then two '&'-separated
//     parts decoding to the URL and the normalized parameters;
//   - the normalized parameters are every pair but oauth_signature,
//     encoded, sorted by name then value;
//   - the signature is a base64 HMAC-SHA1 (20 bytes), the same when the
//     parameters are given in another order.
func FuzzSignatureBaseString(f *testing.F) {
	f.Add("post", "https://api.x.com/1.1/statuses/update.json",
		"include_entities=true&status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21&oauth_consumer_key=xvz1evFS4wEEPTGEFPHBog&oauth_nonce=kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1318622958&oauth_token=370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb&oauth_version=1.0",
		"kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw", "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
	f.Add("GET", "http://example.com:8080/a%20b", "a=1&a=0&b=&c&oauth_signature=x&%E2%9C%93=%F0%9F%98%80", "", "")
	f.Add("get", "", "a+b=c+d&~-._=%7E", "sec&ret", "tok%en")
	f.Add("DELETE", "https://ads-api.x.com/12/accounts/18ce54d4x5t", "\xff=\x00", "\xff", "")
	f.Fuzz(func(t *testing.T, method, baseURL, query, consumerSecret, tokenSecret string) {
		params, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		for _, s := range []string{method, baseURL, query} {
			checkPercentEncode(t, s)
		}
		base := SignatureBaseString(method, baseURL, params)
		// The method is not encoded (RFC 5849 3.4.1.1), and '&' is an HTTP
		// token character: only the two encoded parts are split.
		rest, ok := strings.CutPrefix(base, strings.ToUpper(method)+"&")
		parts := strings.Split(rest, "&")
		if !ok || len(parts) != 2 {
			t.Fatalf("base string %q is not %q and two encoded parts", base, strings.ToUpper(method))
		}
		if decode(t, parts[0]) != baseURL {
			t.Fatalf("base string %q does not hold the URL %q", base, baseURL)
		}
		checkNormalized(t, params, decode(t, parts[1]))
		sig := Sign(base, consumerSecret, tokenSecret)
		raw, err := base64.StdEncoding.DecodeString(sig)
		if err != nil || len(raw) != 20 {
			t.Fatalf("Sign = %q: not a base64 HMAC-SHA1 (%v)", sig, err)
		}
		reordered := url.Values{}
		for _, name := range slices.Backward(slices.Sorted(maps.Keys(params))) {
			reordered[name] = slices.Clone(params[name])
			slices.Reverse(reordered[name])
		}
		if again := Sign(SignatureBaseString(method, baseURL, reordered), consumerSecret, tokenSecret); again != sig {
			t.Fatalf("parameters in another order sign as %q, not %q", again, sig)
		}
	})
}

// checkPercentEncode checks PercentEncode(s)'s alphabet and that it
// decodes back to s.
func checkPercentEncode(t *testing.T, s string) {
	t.Helper()
	enc := PercentEncode(s)
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		if c == '%' {
			if i+2 >= len(enc) || !strings.ContainsRune("0123456789ABCDEF", rune(enc[i+1])) || !strings.ContainsRune("0123456789ABCDEF", rune(enc[i+2])) {
				t.Fatalf("PercentEncode(%q) = %q: bad escape at %d", s, enc, i)
			}
			i += 2
			continue
		}
		if !isUnreserved(c) {
			t.Fatalf("PercentEncode(%q) = %q: byte %q left as is", s, enc, c)
		}
	}
	if decode(t, enc) != s {
		t.Fatalf("PercentEncode(%q) = %q decodes to %q", s, enc, decode(t, enc))
	}
}

func decode(t *testing.T, s string) string {
	t.Helper()
	d, err := url.PathUnescape(s)
	if err != nil {
		t.Fatalf("%q does not percent-decode: %v", s, err)
	}
	return d
}

// checkNormalized checks the normalized parameter string against params.
func checkNormalized(t *testing.T, params url.Values, normalized string) {
	t.Helper()
	var want [][2]string
	for name, values := range params {
		if name == "oauth_signature" {
			continue
		}
		for _, v := range values {
			want = append(want, [2]string{PercentEncode(name), PercentEncode(v)})
		}
	}
	slices.SortFunc(want, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	var got [][2]string
	if normalized != "" {
		for pair := range strings.SplitSeq(normalized, "&") {
			name, value, ok := strings.Cut(pair, "=")
			if !ok {
				t.Fatalf("normalized %q: pair %q has no '='", normalized, pair)
			}
			got = append(got, [2]string{name, value})
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("normalized %q, want the pairs %q", normalized, want)
	}
}

// FuzzParseSignatureBases checks AVIARY_OAUTH_SIGNATURE_BASES' parser:
// every accepted base is http(s)://host with nothing else, and the list
// printed again parses to the same bases.
func FuzzParseSignatureBases(f *testing.F) {
	for _, s := range []string{DevSignatureBases, "", " , ", "HTTPS://API.X.COM:443/", "http://localhost:8080",
		"ftp://x", "https://u:p@x", "https://x/a", "https://x?", "https://x#f", "https://[::1]:99", "https://x,\x7f", "//x", "https:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		bases, err := ParseSignatureBases(raw)
		if err != nil {
			return
		}
		printed := make([]string, len(bases))
		for i, b := range bases {
			if (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.Path != "" || b.RawQuery != "" || b.User != nil {
				t.Fatalf("ParseSignatureBases(%q) accepted %#v", raw, b)
			}
			printed[i] = b.String()
		}
		again, err := ParseSignatureBases(strings.Join(printed, ","))
		if err != nil || len(again) != len(bases) {
			t.Fatalf("ParseSignatureBases(%q) printed as %q reads back as %v, %v", raw, printed, again, err)
		}
		for i := range again {
			if *again[i] != *bases[i] {
				t.Fatalf("ParseSignatureBases(%q): base %v reads back as %v", raw, bases[i], again[i])
			}
		}
	})
}
