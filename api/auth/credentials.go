package auth

import (
	"net/url"
	"strconv"

	"github.com/aviary-dev/aviary/api/apierr"
)

// oauthCredentials are the protocol parameters of an OAuth 1.0a request.
type oauthCredentials struct {
	consumerKey string
	token       string
	nonce       string
	signature   string
	timestamp   int64
	// signed holds the header parameters that enter the signature base
	// string: all of them but oauth_signature and realm (RFC 5849 §3.4.1.3.1).
	signed url.Values
}

// requiredOAuthParams must appear in every OAuth 1.0a header.
var requiredOAuthParams = []string{
	"oauth_consumer_key", "oauth_token", "oauth_nonce", "oauth_timestamp",
	"oauth_signature_method", "oauth_signature",
}

// credentialsFrom validates parsed header parameters. Failures are 401s.
func credentialsFrom(params map[string]string) (oauthCredentials, error) {
	return parseCredentials(params, true)
}

// parseCredentials is credentialsFrom; without needToken, oauth_token may
// be absent (a request signed with consumer credentials only).
func parseCredentials(params map[string]string, needToken bool) (oauthCredentials, error) {
	for _, name := range requiredOAuthParams {
		if name == "oauth_token" && !needToken {
			continue
		}
		if params[name] == "" {
			return oauthCredentials{}, apierr.Unauthorized("The OAuth Authorization header is missing " + name + ".")
		}
	}
	if m := params["oauth_signature_method"]; m != SignatureMethod {
		return oauthCredentials{}, apierr.Unauthorized("Unsupported oauth_signature_method " + strconv.Quote(m) + "; use HMAC-SHA1.")
	}
	if v, ok := params["oauth_version"]; ok && v != "1.0" {
		return oauthCredentials{}, apierr.Unauthorized("Unsupported oauth_version " + strconv.Quote(v) + "; use 1.0.")
	}
	ts, err := strconv.ParseInt(params["oauth_timestamp"], 10, 64)
	if err != nil || ts <= 0 {
		return oauthCredentials{}, apierr.Unauthorized("oauth_timestamp must be a positive number of seconds since the Unix epoch.")
	}
	if !isPrintableASCII(params["oauth_nonce"]) {
		return oauthCredentials{}, apierr.Unauthorized("oauth_nonce must contain printable ASCII characters only.")
	}
	for _, name := range []string{"oauth_consumer_key", "oauth_token"} {
		if _, ok := params[name]; (ok || needToken) && !isCredential(params[name]) {
			return oauthCredentials{}, apierr.Unauthorized("Invalid " + name + ": it must contain printable ASCII characters only.")
		}
	}
	return oauthCredentials{
		consumerKey: params["oauth_consumer_key"],
		token:       params["oauth_token"],
		nonce:       params["oauth_nonce"],
		signature:   params["oauth_signature"],
		timestamp:   ts,
		signed:      signedHeaderParams(params),
	}, nil
}

func signedHeaderParams(params map[string]string) url.Values {
	signed := make(url.Values, len(params))
	for name, v := range params {
		if name != "oauth_signature" && name != "realm" {
			signed.Set(name, v)
		}
	}
	return signed
}

// isCredential reports whether s can be an issued key or token: non-empty
// printable ASCII without spaces. Anything else (invalid UTF-8, NUL, other
// control bytes, non-ASCII letters) is refused before it reaches the store,
// whose database would reject bytes it cannot decode as a server error.
func isCredential(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
