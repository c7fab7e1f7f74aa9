package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
)

// SignatureMethod is the only oauth_signature_method accepted.
const SignatureMethod = "HMAC-SHA1"

// SignatureBaseString builds the RFC 5849 §3.4.1 signature base string:
// the uppercased method, the percent-encoded base URL and the percent-encoded
// normalized parameters, joined by '&'. baseURL must already be normalized
// (see §3.4.1.2: lowercase scheme and host, default port dropped, no query).
// params holds decoded names and values (query, form body and oauth_*
// protocol parameters, but not the header's realm); an oauth_signature entry
// is ignored.
func SignatureBaseString(method, baseURL string, params url.Values) string {
	return strings.ToUpper(method) + "&" + PercentEncode(baseURL) + "&" + PercentEncode(normalizeParams(params))
}

// Sign computes the base64 HMAC-SHA1 signature of base with the key
// pct(consumerSecret) & pct(tokenSecret) (RFC 5849 §3.4.2).
func Sign(base, consumerSecret, tokenSecret string) string {
	key := PercentEncode(consumerSecret) + "&" + PercentEncode(tokenSecret)
	mac := hmac.New(sha1.New, []byte(key))
	mac.Write([]byte(base))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// normalizeParams encodes every name and value, sorts the pairs by encoded
// name then encoded value, and joins them as name=value&... (§3.4.1.3.2).
func normalizeParams(params url.Values) string {
	pairs := make([][2]string, 0, len(params))
	for name, values := range params {
		if name == "oauth_signature" {
			continue
		}
		encName := PercentEncode(name)
		for _, v := range values {
			pairs = append(pairs, [2]string{encName, PercentEncode(v)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p[0] + "=" + p[1]
	}
	return strings.Join(parts, "&")
}
