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

// loopbackHosts are the spellings of the local machine a client may use
// for a public URL on localhost (AcceptLoopbackSpellings).
var loopbackHosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}

// loopbackBase is the base URL of r over the loopback spelling the client
// used, when public is on a loopback host and r addresses another spelling
// of it (same port): a client of a development server that calls
// http://127.0.0.1:8080 signs over that, not over http://localhost:8080.
// False when r's host is not such a spelling.
func loopbackBase(r *http.Request, public *url.URL) (string, bool) {
	if public == nil || !loopbackHosts[strings.ToLower(public.Hostname())] {
		return "", false
	}
	host, port := splitHost(requestHost(r))
	if !loopbackHosts[strings.ToLower(host)] || strings.EqualFold(host, public.Hostname()) ||
		portOrDefault(public.Scheme, port) != portOrDefault(public.Scheme, public.Port()) {
		return "", false
	}
	alias := *public
	alias.Host = net.JoinHostPort(host, portOrDefault(public.Scheme, port))
	return baseURL(r, &alias), true
}

// splitHost splits host[:port] (IPv6 in brackets); port is "" when absent.
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// portOrDefault is port, or the scheme's default port when it is empty.
func portOrDefault(scheme, port string) string {
	switch {
	case port != "":
		return port
	case strings.EqualFold(scheme, "https"):
		return "443"
	}
	return "80"
}
