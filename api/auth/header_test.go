package auth

import (
	"maps"
	"testing"
)

func TestParseOAuthParams(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr bool
	}{
		{name: "platform example", in: `oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_signature="tnnArxj06cWHq44gCs1OSKk%2FjLY%3D", oauth_version="1.0"`,
			want: map[string]string{"oauth_consumer_key": "xvz1evFS4wEEPTGEFPHBog", "oauth_signature": "tnnArxj06cWHq44gCs1OSKk/jLY=", "oauth_version": "1.0"}},
		{name: "realm and folded whitespace", in: "realm=\"Photos\",\r\n\t oauth_token = \"a\" ,oauth_nonce=\"b\"",
			want: map[string]string{"realm": "Photos", "oauth_token": "a", "oauth_nonce": "b"}},
		{name: "no spaces", in: `a="1",b="2"`, want: map[string]string{"a": "1", "b": "2"}},
		{name: "empty elements and trailing comma", in: `, a="1",, b="2",`, want: map[string]string{"a": "1", "b": "2"}},
		{name: "plus is not a space", in: `a="x+y%20z"`, want: map[string]string{"a": "x+y z"}},
		{name: "empty value", in: `oauth_token=""`, want: map[string]string{"oauth_token": ""}},
		{name: "empty header", in: "  ", want: map[string]string{}},
		{name: "duplicate name", in: `a="1", a="2"`, wantErr: true},
		{name: "unquoted value", in: `a=1`, wantErr: true},
		{name: "unterminated quote", in: `a="1`, wantErr: true},
		{name: "missing equals", in: `a`, wantErr: true},
		{name: "empty name", in: `="1"`, wantErr: true},
		{name: "missing comma", in: `a="1" b="2"`, wantErr: true},
		{name: "bad escape", in: `a="%zz"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOAuthParams(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSplitAuthorization(t *testing.T) {
	tests := []struct{ in, scheme, creds string }{
		{"Bearer abc", "bearer", "abc"},
		{"  bEaReR   abc  ", "bearer", "abc"},
		{`OAuth a="1"`, "oauth", `a="1"`},
		{"OAuth", "oauth", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		scheme, creds := splitAuthorization(tt.in)
		if scheme != tt.scheme || creds != tt.creds {
			t.Errorf("splitAuthorization(%q) = %q, %q; want %q, %q", tt.in, scheme, creds, tt.scheme, tt.creds)
		}
	}
}

func TestCredentialsFrom(t *testing.T) {
	valid := func() map[string]string {
		return map[string]string{
			"oauth_consumer_key": "ck", "oauth_token": "tok", "oauth_nonce": "n1",
			"oauth_timestamp": "1700000000", "oauth_signature_method": "HMAC-SHA1",
			"oauth_signature": "sig", "oauth_version": "1.0", "realm": "r",
		}
	}
	tests := []struct {
		name    string
		mutate  func(map[string]string)
		wantErr bool
	}{
		{name: "valid", mutate: func(map[string]string) {}},
		{name: "version omitted", mutate: func(p map[string]string) { delete(p, "oauth_version") }},
		{name: "missing token", mutate: func(p map[string]string) { delete(p, "oauth_token") }, wantErr: true},
		{name: "missing signature", mutate: func(p map[string]string) { p["oauth_signature"] = "" }, wantErr: true},
		{name: "PLAINTEXT", mutate: func(p map[string]string) { p["oauth_signature_method"] = "PLAINTEXT" }, wantErr: true},
		{name: "version 2.0", mutate: func(p map[string]string) { p["oauth_version"] = "2.0" }, wantErr: true},
		{name: "timestamp not a number", mutate: func(p map[string]string) { p["oauth_timestamp"] = "soon" }, wantErr: true},
		{name: "non-ASCII nonce", mutate: func(p map[string]string) { p["oauth_nonce"] = "nonce☃" }, wantErr: true},
		{name: "control character in nonce", mutate: func(p map[string]string) { p["oauth_nonce"] = "a\x00b" }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid()
			tt.mutate(p)
			creds, err := credentialsFrom(p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if _, ok := creds.signed["realm"]; ok {
				t.Error("realm must not be signed")
			}
			if _, ok := creds.signed["oauth_signature"]; ok {
				t.Error("oauth_signature must not be signed")
			}
			if creds.signed.Get("oauth_nonce") != "n1" || creds.timestamp != 1700000000 {
				t.Errorf("credentials = %+v", creds)
			}
		})
	}
}
