package auth

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SignRequest signs r with OAuth 1.0a HMAC-SHA1 and sets its Authorization
// header. publicBaseURL is the server's public base URL as configured on the
// server (empty: derived from r — its URL scheme and host for a client
// request, r.TLS / X-Forwarded-Proto and r.Host for a server-side one). The
// query and any application/x-www-form-urlencoded body are signed; the body
// is read and restored. An empty nonce is replaced by a random one. An empty
// token signs with the consumer credentials only.
func SignRequest(r *http.Request, publicBaseURL, consumerKey, consumerSecret, token, tokenSecret string, now time.Time, nonce string) error {
	public, err := parsePublicBase(publicBaseURL)
	if err != nil {
		return err
	}
	if nonce == "" {
		if nonce, err = randomNonce(); err != nil {
			return err
		}
	}
	params, err := requestParams(r)
	if err != nil {
		return fmt.Errorf("auth: sign request: %w", err)
	}
	oauth := map[string]string{
		"oauth_consumer_key":     consumerKey,
		"oauth_nonce":            nonce,
		"oauth_signature_method": SignatureMethod,
		"oauth_timestamp":        strconv.FormatInt(now.Unix(), 10),
		"oauth_version":          "1.0",
	}
	if token != "" {
		oauth["oauth_token"] = token
	}
	for name, v := range oauth {
		params.Add(name, v)
	}
	oauth["oauth_signature"] = Sign(SignatureBaseString(r.Method, baseURL(r, public), params), consumerSecret, tokenSecret)
	r.Header.Set("Authorization", oauthHeader(oauth))
	return nil
}

// oauthHeader renders params as an "OAuth" Authorization header value with
// sorted, percent-encoded, quoted pairs.
func oauthHeader(params map[string]string) string {
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = PercentEncode(name) + `="` + PercentEncode(params[name]) + `"`
	}
	return "OAuth " + strings.Join(parts, ", ")
}

func randomNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: generate nonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}
