package auth

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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

// TestLoopbackSpellings: a client signs over the URL it calls. With the
// public URL on localhost, a development server (AcceptLoopbackSpellings)
// accepts signatures over 127.0.0.1 and [::1] too, same scheme and port;
// without it, or for another host or port, the 401 names the base URL the
// signature was checked against.
func TestLoopbackSpellings(t *testing.T) {
	tests := []struct {
		name, public, called string
		loopback             bool
		wantStatus           int
		inDetail             string
	}{
		{"127.0.0.1 in development", "http://localhost:8080", "http://127.0.0.1:8080", true, 200, ""},
		{"[::1] in development", "http://localhost:8080", "http://[::1]:8080", true, 200, ""},
		{"LOCALHOST for 127.0.0.1 in development", "http://127.0.0.1:8080/api", "http://LOCALHOST:8080", true, 200, ""},
		{"the public URL itself", "http://localhost:8080", "http://localhost:8080", true, 200, ""},
		{"https default port", "https://localhost", "https://127.0.0.1:443", true, 200, ""},
		{"127.0.0.1 outside development", "http://localhost:8080", "http://127.0.0.1:8080", false, 401,
			"checked against the base URL http://localhost:8080/2/tweets (the server's public URL"},
		{"another port", "http://localhost:8080", "http://127.0.0.1:9090", true, 401, "http://localhost:8080/2/tweets"},
		{"another scheme", "http://localhost:8080", "https://127.0.0.1:8080", true, 401,
			"http://localhost:8080/2/tweets and http://127.0.0.1:8080/2/tweets"},
		{"a public URL not on loopback", "http://aviary.test:8080", "http://127.0.0.1:8080", true, 401, "http://aviary.test:8080/2/tweets"},
		{"a non-loopback host", "http://localhost:8080", "http://10.0.0.1:8080", true, 401, "http://localhost:8080/2/tweets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(newFakeStore(), &memNonces{}, tt.public, nil, quietWriter)
			if err != nil {
				t.Fatal(err)
			}
			if tt.loopback {
				a = a.AcceptLoopbackSpellings()
			}
			prefix := ""
			if strings.HasSuffix(tt.public, "/api") { // a proxy strips it before the server
				prefix = "/api"
			}
			req := httptest.NewRequest(http.MethodGet, tt.called+prefix+"/2/tweets?ids=1", nil)
			if err := SignRequest(req, "", ck1, cs1, at1, ts1, time.Now(), ""); err != nil {
				t.Fatal(err)
			}
			req.URL.Path = "/2/tweets"
			rec := httptest.NewRecorder()
			a.Middleware(UserContext)(echo).ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantStatus != 200 {
				p := assertProblem(t, rec, tt.wantStatus, "")
				if d := fmt.Sprint(p["detail"]); !strings.Contains(d, tt.inDetail) {
					t.Errorf("detail %q, want it to contain %q", d, tt.inDetail)
				}
			}
		})
	}
}
