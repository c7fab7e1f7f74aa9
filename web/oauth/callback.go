package oauth

import (
	"errors"
	"net/url"
	"strings"
)

// unsafeSchemes are URL schemes a browser runs or reads locally instead
// of handing them to an app: never a callback.
var unsafeSchemes = map[string]bool{"javascript": true, "vbscript": true, "data": true, "file": true, "blob": true, "about": true}

// CheckCallback reports why uri cannot be a registered callback of an app
// (aviary admin callback add): oob (OAuth 1.0a's PIN flow), or an absolute
// URL without a fragment (RFC 6749 section 3.1.2) whose scheme is http,
// https or an app's custom scheme (myapp://cb), never one a browser runs
// itself (javascript:, data:, ...). The pages check it again before any
// redirect, so an entry stored before the check is never followed.
func CheckCallback(uri string) error {
	if uri == oob {
		return nil
	}
	if !storable(uri) || strings.ContainsAny(uri, " \t\r\n") {
		return errors.New("a callback URL is text without spaces or control characters")
	}
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return errors.New("the callback is not a URL")
	case !u.IsAbs():
		return errors.New("a callback is oob or an absolute URL (scheme://...)")
	case u.Fragment != "" || strings.Contains(uri, "#"):
		return errors.New("a callback URL has no fragment (#...)")
	case unsafeSchemes[strings.ToLower(u.Scheme)]:
		return errors.New("a callback URL's scheme may not be " + u.Scheme + ": (browsers run it themselves)")
	}
	return nil
}
