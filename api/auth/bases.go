package auth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DevSignatureBases are the platform's API hosts whose signatures a
// development server accepts by default (AcceptSignatureBases;
// docs/oauth.md, "Signatures over the platform's hosts").
const DevSignatureBases = "https://api.x.com,https://ads-api.x.com,https://upload.x.com"

// ParseSignatureBases parses a comma-separated list of base URLs
// (scheme://host[:port], http or https, no path, query or fragment); an
// empty list is nil. The error names the entry at fault.
func ParseSignatureBases(raw string) ([]*url.URL, error) {
	var out []*url.URL
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		u, err := url.Parse(entry)
		if err != nil {
			return nil, fmt.Errorf("signature base %q is not a URL: %w", entry, err)
		}
		scheme := strings.ToLower(u.Scheme)
		if (scheme != "http" && scheme != "https") || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" ||
			u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return nil, fmt.Errorf("signature base %q must be http(s)://host[:port] without path, query or credentials (e.g. https://api.x.com)", entry)
		}
		out = append(out, &url.URL{Scheme: scheme, Host: u.Host})
	}
	return out, nil
}

// AcceptSignatureBases makes a also accept OAuth 1.0a signatures computed
// over one of bases (ParseSignatureBases) with the request's path and
// parameters: clients that sign for the platform's own hosts and reach
// Aviary through a redirected transport. Nonce and timestamp checks are
// unchanged. A signature made for the platform could be replayed here
// within the timestamp window, so this is for development only. Call it
// before serving; it returns a.
func (a *Authenticator) AcceptSignatureBases(bases []*url.URL) *Authenticator {
	a.bases = bases
	return a
}

// signedOverBases reports whether the signature was computed over one of
// the configured signature bases; checked lists the base URLs tried.
func (a *Authenticator) signedOverBases(r *http.Request, params url.Values, creds oauthCredentials, consumerSecret, tokenSecret string) (ok bool, checked []string) {
	for _, b := range a.bases {
		base := origin(b.Scheme, b.Host) + escapedPath(r)
		if signedOver(r.Method, base, params, creds.signature, consumerSecret, tokenSecret) {
			return true, nil
		}
		checked = append(checked, base)
	}
	return false, checked
}
