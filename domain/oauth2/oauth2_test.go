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
}

// TestOAuth1Scopes: what an OAuth 1.0a token carries on the API; a read
// token carries exactly what its exchange grants (dm.read, bookmarks,
// Spaces and email are not read-level), a read-write token everything.
func TestOAuth1Scopes(t *testing.T) {
	all := make([]string, len(Scopes))
	for i, s := range Scopes {
		all[i] = s.Name
	}
	tests := []struct {
		name       string
		canWrite   bool
		want, lack []string
	}{
		{"read", false, ExchangeScopes(false), []string{TweetWrite, DMRead, DMWrite, BookmarkRead, SpaceRead, UsersEmail, MediaWrite}},
		{"read-write", true, all, nil},
	}
	for _, tt := range tests {
		got := OAuth1Scopes(tt.canWrite)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: OAuth1Scopes = %v, want %v", tt.name, got, tt.want)
		}
		for _, s := range tt.lack {
			if slices.Contains(got, s) {
				t.Errorf("%s: OAuth1Scopes grants %s", tt.name, s)
			}
		}
	}
}

// TestOAuth1LevelsCover: every scope has an OAuth 1.0a level, and the
// table names no unknown scope.
func TestOAuth1LevelsCover(t *testing.T) {
	for _, s := range Scopes {
		if oauth1Levels[s.Name] == 0 {
			t.Errorf("scope %s has no OAuth 1.0a level", s.Name)
		}
	}
	for name := range oauth1Levels {
		if !Known(name) {
			t.Errorf("oauth1Levels names unknown scope %s", name)
		}
	}
}

func TestExchangeScopes(t *testing.T) {
	tests := []struct {
		name       string
		canWrite   bool
		have, lack []string
	}{
		{"read", false, []string{TweetRead, UsersRead, FollowsRead, FollowRead, MuteRead, BlockRead, ListRead, LikeRead, BroadcastRead, OfflineAccess},
			[]string{TweetWrite, MediaWrite, LikeWrite, DMRead, BookmarkRead, SpaceRead, UsersEmail}},
		{"read-write", true, []string{TweetRead, TweetWrite, MediaWrite, LikeWrite, DMRead, DMWrite, OfflineAccess, BroadcastRead},
			[]string{BookmarkRead, BookmarkWrite, SpaceRead, UsersEmail}},
	}
	for _, tt := range tests {
		got := ExchangeScopes(tt.canWrite)
		if m := Missing(tt.have, got); len(m) > 0 {
			t.Errorf("%s: %v lacks %v", tt.name, got, m)
		}
		for _, s := range tt.lack {
			if slices.Contains(got, s) {
				t.Errorf("%s: %v grants %s", tt.name, got, s)
			}
		}
		// Never more than the OAuth 1.0a token itself carries on the API.
		if m := Missing(got, OAuth1Scopes(tt.canWrite)); len(m) > 0 {
			t.Errorf("%s: exchange grants %v beyond the OAuth 1.0a token's scopes", tt.name, m)
		}
		if _, err := ParseScope(Join(got)); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// TestScopesDescribed: every scope the API checks has consent wording.
func TestScopesDescribed(t *testing.T) {
	for _, name := range []string{TweetRead, TweetWrite, UsersRead, MediaWrite, OfflineAccess, LikeWrite, MuteRead, BlockRead, BroadcastRead, FollowRead} {
		if d := Describe([]string{name}); len(d) != 1 || d[0].Description == "" {
			t.Errorf("%s: %v", name, d)
		}
	}
}
