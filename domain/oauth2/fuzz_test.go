package oauth2

import (
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// FuzzParseScope checks the scope parameter and the PKCE parameters:
//   - an accepted scope lists known names, each once, in Scopes order,
//     and Join prints it as a parameter that parses to the same list;
//   - ChallengeMethod gives S256 or plain, exactly for those names (any
//     case) and the empty one;
//   - ValidChallenge takes 1 to 128 unreserved characters, and a valid
//     verifier answers its own S256 and plain challenges.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"tweet.read users.read offline.access", "tweet.read+users.read", "tweet.read\ttweet.read",
		"", " ", "+", "tweet.read unknown", "TWEET.READ", "tweet.read\u00a0users.read", "dm.read dm.write like.read like.write"} {
		f.Add(s, "S256", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	}
	f.Add("tweet.read", "plain", "challenge")
	f.Add("tweet.read", "s256", "~.-_")
	f.Add("tweet.read", "", strings.Repeat("a", 129))
	f.Add("tweet.read", "S-256", "a b")
	f.Fuzz(func(t *testing.T, scope, method, verifier string) {
		if got, err := ParseScope(scope); err == nil {
			if len(got) == 0 {
				t.Fatalf("ParseScope(%q) accepted no scope", scope)
			}
			order := make([]int, len(got))
			for i, s := range got {
				order[i] = slices.IndexFunc(Scopes, func(x Scope) bool { return x.Name == s })
				if !Known(s) || order[i] < 0 || (i > 0 && order[i] <= order[i-1]) {
					t.Fatalf("ParseScope(%q) = %q: not known names in Scopes order, each once", scope, got)
				}
			}
			again, err := ParseScope(Join(got))
			if err != nil || !slices.Equal(again, got) {
				t.Fatalf("ParseScope(%q) = %q, joined reads back as %q, %v", scope, got, again, err)
			}
		}
		m, err := ChallengeMethod(method)
		switch {
		case method == "" || strings.EqualFold(method, MethodPlain):
			if err != nil || m != MethodPlain {
				t.Fatalf("ChallengeMethod(%q) = %q, %v", method, m, err)
			}
		case strings.EqualFold(method, MethodS256):
			if err != nil || m != MethodS256 {
				t.Fatalf("ChallengeMethod(%q) = %q, %v", method, m, err)
			}
		case err == nil:
			t.Fatalf("ChallengeMethod(%q) accepted as %q", method, m)
		}
		checkVerifier(t, verifier)
	})
}

func checkVerifier(t *testing.T, v string) {
	t.Helper()
	unreserved := v != "" && len(v) <= 128 && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") == ""
	if ValidChallenge(v) != unreserved {
		t.Fatalf("ValidChallenge(%q) = %v", v, !unreserved)
	}
	if !unreserved {
		if VerifyPKCE(MethodPlain, v, v) {
			t.Fatalf("VerifyPKCE accepted the malformed verifier %q", v)
		}
		return
	}
	sum := sha256.Sum256([]byte(v))
	s256 := base64.RawURLEncoding.EncodeToString(sum[:])
	if !VerifyPKCE(MethodPlain, v, v) || !VerifyPKCE(MethodS256, s256, v) || VerifyPKCE(MethodS256, s256, v+"a") {
		t.Fatalf("VerifyPKCE(%q) against its own challenges", v)
	}
}
