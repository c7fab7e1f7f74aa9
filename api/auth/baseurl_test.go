package auth

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name, public, target, host, proto string
		tls                               bool
		want                              string
	}{
		{name: "RFC 5849 3.4.1.2 example 1", target: "/r%20v/X?id=123", host: "EXAMPLE.COM:80", want: "http://example.com/r%20v/X"},
		{name: "RFC 5849 3.4.1.2 example 2", public: "HTTPS://www.example.net:8080", target: "/?q=1", host: "internal:9000", want: "https://www.example.net:8080/"},
		{name: "https default port dropped", target: "/2/users/me", host: "api.test:443", tls: true, want: "https://api.test/2/users/me"},
		{name: "http port kept on https", target: "/a", host: "api.test:80", tls: true, want: "https://api.test:80/a"},
		{name: "forwarded proto", target: "/a", host: "api.test", proto: "HTTPS, http", want: "https://api.test/a"},
		{name: "bogus forwarded proto ignored", target: "/a", host: "api.test", proto: "gopher", want: "http://api.test/a"},
		{name: "public base with prefix and slash", public: "https://Aviary.Example/api/", target: "/2/tweets", host: "x", want: "https://aviary.example/api/2/tweets"},
		{name: "public base beats forwarded proto", public: "http://aviary.example", target: "/2/tweets", host: "x", proto: "https", want: "http://aviary.example/2/tweets"},
		{name: "ipv6 default port", target: "/a", host: "[::1]:80", want: "http://[::1]/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			public, err := parsePublicBase(tt.public)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			r.Host = tt.host
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := baseURL(r, public); got != tt.want {
				t.Errorf("baseURL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePublicBaseRejects(t *testing.T) {
	for _, raw := range []string{"api.example.com", "ftp://api.example.com", "https://", "https://a.example?x=1", "http://a.example/#frag", "://"} {
		if _, err := parsePublicBase(raw); err == nil {
			t.Errorf("parsePublicBase(%q) succeeded, want error", raw)
		}
	}
}
