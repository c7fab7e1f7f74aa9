package oauth2

import (
	"slices"
	"testing"
)

func TestVerifyPKCE(t *testing.T) {
	// RFC 7636 appendix B.
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	const s256 = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	tests := []struct {
		name, method, challenge, verifier string
		want                              bool
	}{
		{"S256", MethodS256, s256, verifier, true},
		{"S256 wrong verifier", MethodS256, s256, verifier + "x", false},
		{"S256 challenge sent as verifier", MethodS256, s256, s256, false},
		{"plain", MethodPlain, "challenge", "challenge", true},
		{"plain mismatch", MethodPlain, "challenge", "challengf", false},
		{"verifier with a forbidden character", MethodPlain, "a b", "a b", false},
		{"empty verifier", MethodPlain, "", "", false},
	}
	for _, tt := range tests {
		if got := VerifyPKCE(tt.method, tt.challenge, tt.verifier); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestChallengeMethod(t *testing.T) {
	for in, want := range map[string]string{"S256": MethodS256, "s256": MethodS256, "plain": MethodPlain, "PLAIN": MethodPlain, "": MethodPlain} {
		if got, err := ChallengeMethod(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := ChallengeMethod("S512"); err == nil {
		t.Error("S512 accepted")
	}
}

func TestParseScope(t *testing.T) {
	got, err := ParseScope("offline.access users.read+tweet.read tweet.read")
	if want := []string{TweetRead, UsersRead, OfflineAccess}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
	for _, bad := range []string{"", "  ", "tweet.read admin"} {
		if _, err := ParseScope(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if Subset([]string{TweetWrite}, []string{TweetRead}) || !Subset(nil, nil) {
		t.Error("Subset")
	}
	if read := OAuth1Scopes(false); slices.Contains(read, TweetWrite) || !slices.Contains(read, TweetRead) {
		t.Errorf("read-only OAuth 1.0a scopes %v", read)
	}
	if rw := OAuth1Scopes(true); !slices.Contains(rw, TweetWrite) || !slices.Contains(rw, MediaWrite) {
		t.Errorf("read-write OAuth 1.0a scopes %v", rw)
	}
}
