package oauth

import "testing"

func TestCheckCallback(t *testing.T) {
	tests := []struct {
		uri string
		ok  bool
	}{
		{"oob", true},
		{"http://localhost:8739/callback", true},
		{"https://app.example/cb?x=1", true},
		{"myapp://done", true},
		{"com.example.app:/oauth", true},
		{"OOB", false},
		{"relative/cb", false},
		{"/i/oauth2/cb", false},
		{"//evil.test/cb", false},
		{"https://app.example/cb#frag", false},
		{"https://app.example/cb#", false},
		{"javascript:alert(1)", false},
		{"JavaScript://%0aalert(1)", false},
		{"data:text/html,hi", false},
		{"file:///etc/passwd", false},
		{"https://app.example/\xff", false},
		{"https://app.example/cb x", false},
		{"", false},
	}
	for _, tt := range tests {
		if err := CheckCallback(tt.uri); (err == nil) != tt.ok {
			t.Errorf("CheckCallback(%q) = %v, want ok %v", tt.uri, err, tt.ok)
		}
	}
}
