package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseSignatureBases(t *testing.T) {
	tests := []struct {
		raw     string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{" , ", nil, ""},
		{DevSignatureBases, []string{"https://api.x.com", "https://ads-api.x.com", "https://upload.x.com"}, ""},
		{"HTTPS://API.X.COM/, http://localhost:9000", []string{"https://API.X.COM", "http://localhost:9000"}, ""},
		{"api.x.com", nil, `"api.x.com"`},
		{"ftp://api.x.com", nil, "http(s)://host"},
		{"https://api.x.com/2", nil, "without path"},
		{"https://api.x.com?x=1", nil, "without path, query"},
		{"https://user:pw@api.x.com", nil, "credentials"},
		{"https://api.x.com,https://", nil, `"https://"`},
		{"https://%zz", nil, "not a URL"},
	}
	for _, tt := range tests {
		got, err := ParseSignatureBases(tt.raw)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		var names []string
		for _, u := range got {
			names = append(names, u.String())
		}
		if err != nil || strings.Join(names, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%q: %v %v, want %v", tt.raw, names, err, tt.want)
		}
	}
}

// TestSignatureBases: with signature bases configured, a signature over
// one of them (same path and parameters) is accepted besides the public
// URL's; another host, another path or no setting is refused, and the
// nonce and timestamp checks still apply.
func TestSignatureBases(t *testing.T) {
	const public = "http://localhost:8080"
	replayed := signed{signBase: "https://api.x.com", nonce: "replayed-nonce"}
	tests := []struct {
		name   string
		bases  string
		reqs   []signed
		status []int
		detail string
	}{
		{"public URL still accepted", DevSignatureBases, []signed{{signBase: public}}, []int{200}, ""},
		{"api.x.com", DevSignatureBases, []signed{{signBase: "https://api.x.com"}}, []int{200}, ""},
		{"upload.x.com with a form body", DevSignatureBases, []signed{{method: "POST", target: "/1.1/media/upload.json",
			form: map[string][]string{"command": {"INIT"}}, signBase: "https://upload.x.com"}}, []int{200}, ""},
		{"default port spelled out", "https://api.x.com:443", []signed{{signBase: "https://api.x.com"}}, []int{200}, ""},
		{"off by default", "", []signed{{signBase: "https://api.x.com"}}, []int{401}, "http://localhost:8080/2/users/me"},
		{"host not listed", "https://ads-api.x.com", []signed{{signBase: "https://api.x.com"}}, []int{401}, "https://ads-api.x.com/2/users/me"},
		{"http is not https", "https://api.x.com", []signed{{signBase: "http://api.x.com"}}, []int{401}, ""},
		{"another path", DevSignatureBases, []signed{{signBase: "https://api.x.com/v9"}}, []int{401}, ""},
		{"nonce reused", DevSignatureBases, []signed{replayed, replayed}, []int{200, 401}, "nonce"},
		{"stale timestamp", DevSignatureBases, []signed{{signBase: "https://api.x.com", at: testNow.Add(-MaxClockSkew - time.Minute)}}, []int{401}, "oauth_timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(newFakeStore(), &memNonces{}, public, func() time.Time { return testNow }, quietWriter)
			if err != nil {
				t.Fatal(err)
			}
			bases, err := ParseSignatureBases(tt.bases)
			if err != nil {
				t.Fatal(err)
			}
			h := a.AcceptSignatureBases(bases).Middleware(UserContext)(echo)
			for i, s := range tt.reqs {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, s.request(t))
				if rec.Code != tt.status[i] {
					t.Fatalf("request %d: %d %s, want %d", i, rec.Code, rec.Body, tt.status[i])
				}
				if rec.Code != http.StatusOK && !strings.Contains(rec.Body.String(), tt.detail) {
					t.Errorf("request %d: %s does not mention %q", i, rec.Body, tt.detail)
				}
			}
		})
	}
}
