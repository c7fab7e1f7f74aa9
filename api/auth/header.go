package auth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Authorization schemes, compared case-insensitively.
const (
	schemeBearer = "bearer"
	schemeOAuth  = "oauth"
)

var errMalformedHeader = errors.New("malformed OAuth Authorization header")

// splitAuthorization splits an Authorization header value into its
// lowercased scheme and the credentials that follow it.
func splitAuthorization(h string) (scheme, credentials string) {
	h = strings.TrimSpace(h)
	scheme, credentials, _ = strings.Cut(h, " ")
	return strings.ToLower(scheme), strings.TrimSpace(credentials)
}

// parseOAuthParams parses the credentials of an "OAuth" Authorization header
// (RFC 5849 §3.5.1): comma-separated name="value" pairs, optional linear
// whitespace around every element, values percent-decoded ('+' is kept as
// is). Empty list elements are tolerated; duplicate names are not.
func parseOAuthParams(s string) (map[string]string, error) {
	params := make(map[string]string)
	for {
		s = strings.TrimLeft(s, " \t\r\n,")
		if s == "" {
			return params, nil
		}
		name, value, rest, err := nextOAuthParam(s)
		if err != nil {
			return nil, err
		}
		if _, dup := params[name]; dup {
			return nil, fmt.Errorf("%w: duplicate parameter %q", errMalformedHeader, name)
		}
		params[name] = value
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest != "" && rest[0] != ',' {
			return nil, fmt.Errorf("%w: expected ',' after %q", errMalformedHeader, name)
		}
		s = rest
	}
}

// nextOAuthParam reads one name="value" pair from the start of s.
func nextOAuthParam(s string) (name, value, rest string, err error) {
	name, rest, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n,\"") {
		return "", "", "", fmt.Errorf("%w: expected name=\"value\"", errMalformedHeader)
	}
	rest = strings.TrimLeft(rest, " \t\r\n")
	if rest == "" || rest[0] != '"' {
		return "", "", "", fmt.Errorf("%w: value of %q must be quoted", errMalformedHeader, name)
	}
	raw, rest, ok := strings.Cut(rest[1:], `"`)
	if !ok {
		return "", "", "", fmt.Errorf("%w: unterminated value of %q", errMalformedHeader, name)
	}
	value, err = url.PathUnescape(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: value of %q: %v", errMalformedHeader, name, err)
	}
	return name, value, rest, nil
}
