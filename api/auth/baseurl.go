package auth

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// parsePublicBase validates the configured public base URL. Empty means
// "derive from each request" and yields nil.
func parsePublicBase(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("auth: parse public base URL %q: %w", raw, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("auth: public base URL %q must be http(s)://host[/path] without query", raw)
	}
	return u, nil
}

// baseURL returns the RFC 5849 §3.4.1.2 base string URI of r: the public
// base URL (or the request's own scheme and host when public is nil)
// followed by the request's escaped path.
func baseURL(r *http.Request, public *url.URL) string {
	if public != nil {
		prefix := strings.TrimRight(public.EscapedPath(), "/")
		return origin(public.Scheme, public.Host) + prefix + escapedPath(r)
	}
	return origin(requestScheme(r), requestHost(r)) + escapedPath(r)
}

// requestScheme is the scheme the client used: the URL's own scheme on a
// client request, else https for TLS connections, else X-Forwarded-Proto
// from a terminating proxy, else http.
func requestScheme(r *http.Request) string {
	if r.URL.Scheme != "" {
		return r.URL.Scheme
	}
	if r.TLS != nil {
		return "https"
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	if proto = strings.ToLower(strings.TrimSpace(proto)); proto == "https" || proto == "http" {
		return proto
	}
	return "http"
}

func requestHost(r *http.Request) string {
	if r.Host != "" {
		return r.Host
	}
	return r.URL.Host
}

func escapedPath(r *http.Request) string {
	if p := r.URL.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// origin lowercases scheme and host and drops the scheme's default port.
func origin(scheme, host string) string {
	scheme, host = strings.ToLower(scheme), strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil && isDefaultPort(scheme, port) {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return scheme + "://" + host
}

func isDefaultPort(scheme, port string) bool {
	return (scheme == "http" && port == "80") || (scheme == "https" && port == "443")
}
