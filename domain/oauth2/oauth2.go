// Package oauth2 holds the platform's OAuth 2.0 rules that the web tier
// (the authorization server) and the API tier (scope enforcement) share:
// the scope names, parsing a scope parameter, PKCE, and the scopes an
// OAuth 1.0a token stands for (docs/oauth.md).
package oauth2

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Lifetimes (docs/oauth.md, "Decisions").
const (
	// AccessTTL is an access token's life: two hours, expires_in 7200.
	AccessTTL = 2 * time.Hour
	// RefreshTTL is a refresh token's life when not rotated before.
	RefreshTTL = 180 * 24 * time.Hour
	// CodeTTL is an authorization code's life, the platform's 30 seconds.
	CodeTTL = 30 * time.Second
)

// Scope names.
const (
	TweetRead          = "tweet.read"
	TweetWrite         = "tweet.write"
	TweetModerateWrite = "tweet.moderate.write"
	UsersEmail         = "users.email"
	UsersRead          = "users.read"
	FollowsRead        = "follows.read"
	FollowsWrite       = "follows.write"
	OfflineAccess      = "offline.access"
	SpaceRead          = "space.read"
	MuteRead           = "mute.read"
	MuteWrite          = "mute.write"
	LikeRead           = "like.read"
	LikeWrite          = "like.write"
	ListRead           = "list.read"
	ListWrite          = "list.write"
	BlockRead          = "block.read"
	BlockWrite         = "block.write"
	BookmarkRead       = "bookmark.read"
	BookmarkWrite      = "bookmark.write"
	DMRead             = "dm.read"
	DMWrite            = "dm.write"
	MediaWrite         = "media.write"
	FollowRead         = "follow.read"
	BroadcastRead      = "broadcast.read"
)

// Scope is one scope with what the consent page says it allows.
type Scope struct {
	Name, Description string
}

// Scopes are the scopes an app may request, in the order the consent page
// lists them; Describe gives their wording.
var Scopes = []Scope{
	{TweetRead, "Read posts you can see, including those of protected accounts."},
	{TweetWrite, "Post and repost for you."},
	{TweetModerateWrite, "Hide and unhide replies to your posts."},
	{UsersRead, "See any account you can see, including protected accounts."},
	{UsersEmail, "See your email address."},
	{FollowsRead, "See who follows you and whom you follow."},
	{FollowsWrite, "Follow and unfollow accounts for you."},
	{FollowRead, "Receive your follow activity events."},
	{SpaceRead, "See Spaces you can see."},
	{MuteRead, "See accounts you muted."},
	{MuteWrite, "Mute and unmute accounts for you."},
	{LikeRead, "See posts you liked and likes you can see."},
	{LikeWrite, "Like and unlike posts for you."},
	{ListRead, "See lists you created or belong to."},
	{ListWrite, "Create and manage lists for you."},
	{BlockRead, "See accounts you blocked."},
	{BlockWrite, "Block and unblock accounts for you."},
	{BookmarkRead, "See your bookmarks."},
	{BookmarkWrite, "Add and remove bookmarks."},
	{DMRead, "Read direct messages you can see."},
	{DMWrite, "Send and manage direct messages for you."},
	{MediaWrite, "Upload media."},
	{BroadcastRead, "Receive events about your broadcasts."},
	{OfflineAccess, "Stay connected until you revoke access (a refresh token)."},
}

// Known reports whether name is a scope.
func Known(name string) bool {
	return slices.ContainsFunc(Scopes, func(s Scope) bool { return s.Name == name })
}

// Describe returns the scopes of names with their wording, in Scopes order.
func Describe(names []string) []Scope {
	var out []Scope
	for _, s := range Scopes {
		if slices.Contains(names, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// ParseScope splits a scope parameter (names separated by spaces; a '+'
// left by a client that did not encode the space counts as one) into
// distinct names in Scopes order. An empty parameter or an unknown name is
// an error naming it.
func ParseScope(param string) ([]string, error) {
	fields := strings.FieldsFunc(param, func(r rune) bool { return r == ' ' || r == '+' || r == '\t' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("scope is missing")
	}
	for _, f := range fields {
		if !Known(f) {
			return nil, fmt.Errorf("unknown scope %q", f)
		}
	}
	var out []string
	for _, s := range Scopes {
		if slices.Contains(fields, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out, nil
}

// Join renders scopes as the token response's scope string.
func Join(scopes []string) string { return strings.Join(scopes, " ") }

// Subset reports whether every scope of want is in have.
func Subset(want, have []string) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// Missing returns the scopes of want that have lacks.
func Missing(want, have []string) []string {
	var out []string
	for _, s := range want {
		if !slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	return out
}

// PKCE methods (RFC 7636).
const (
	MethodS256  = "S256"
	MethodPlain = "plain"
)

// ChallengeMethod normalizes a code_challenge_method parameter, matched
// case-insensitively as widely used clients send "s256"; "" is plain (RFC
// 7636 section 4.3).
func ChallengeMethod(param string) (string, error) {
	switch {
	case param == "" || strings.EqualFold(param, MethodPlain):
		return MethodPlain, nil
	case strings.EqualFold(param, MethodS256):
		return MethodS256, nil
	}
	return "", fmt.Errorf("unsupported code_challenge_method %q (want S256 or plain)", param)
}

// ValidChallenge reports whether a code_challenge (or a code_verifier) has
// RFC 7636's form: 43 to 128 unreserved characters. The platform's own
// examples use short plain challenges ("challenge"), so only the character
// set and the upper bound are required of challenges; verifiers follow the
// same rule.
func ValidChallenge(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// VerifyPKCE reports whether verifier answers challenge under method.
func VerifyPKCE(method, challenge, verifier string) bool {
	if !ValidChallenge(verifier) {
		return false
	}
	want := verifier
	if method == MethodS256 {
		sum := sha256.Sum256([]byte(verifier))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

// HashSecret is how codes, tokens and client secrets are stored and
// compared: their SHA-256 (they are long random strings, so a fast hash is
// enough and lookups stay indexable).
func HashSecret(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// oauth1Level is the OAuth 1.0a access level that covers a scope.
type oauth1Level int

const (
	// oauth1Read: any token, on the API and in a token exchange.
	oauth1Read oauth1Level = iota + 1
	// oauth1Write: a read-write token, on the API and in an exchange
	// (Aviary's read-write level stands for the platform's "read, write
	// and Direct Messages" too, hence dm.read here).
	oauth1Write
	// oauth1APIOnly: a read-write token on the API, never granted by an
	// exchange (bookmarks, Spaces, email: the user never authorized them
	// under OAuth 1.0a; docs/oauth.md, "Token exchange").
	oauth1APIOnly
)

// oauth1Levels is the one table both OAuth1Scopes and ExchangeScopes read,
// so a token of either level carries the same scopes on the API as its
// exchange grants (read-write: plus the API-only ones). Every scope of
// Scopes has a row (TestOAuth1LevelsCover).
var oauth1Levels = map[string]oauth1Level{
	TweetRead: oauth1Read, UsersRead: oauth1Read, FollowsRead: oauth1Read, FollowRead: oauth1Read,
	MuteRead: oauth1Read, BlockRead: oauth1Read, ListRead: oauth1Read, LikeRead: oauth1Read,
	BroadcastRead: oauth1Read, OfflineAccess: oauth1Read,

	TweetWrite: oauth1Write, TweetModerateWrite: oauth1Write, FollowsWrite: oauth1Write, LikeWrite: oauth1Write,
	ListWrite: oauth1Write, MuteWrite: oauth1Write, BlockWrite: oauth1Write, MediaWrite: oauth1Write,
	DMRead: oauth1Write, DMWrite: oauth1Write,

	BookmarkRead: oauth1APIOnly, BookmarkWrite: oauth1APIOnly, SpaceRead: oauth1APIOnly, UsersEmail: oauth1APIOnly,
}

// oauth1Select returns the scopes whose level keep accepts, in Scopes
// order.
func oauth1Select(keep func(oauth1Level) bool) []string {
	var out []string
	for _, s := range Scopes {
		if keep(oauth1Levels[s.Name]) {
			out = append(out, s.Name)
		}
	}
	return out
}

// OAuth1Scopes are the scopes an OAuth 1.0a access token stands for on the
// API, in Scopes order: a read token the read rows of oauth1Levels (what
// its exchange grants; no write scope, no dm.read), a read-write token
// every scope.
func OAuth1Scopes(canWrite bool) []string {
	return oauth1Select(func(l oauth1Level) bool { return l == oauth1Read || canWrite })
}

// Token exchange (RFC 8693) of an OAuth 1.0a access token, as the
// platform names it.
const (
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeOAuth1    = "urn:x:params:oauth:token-type:oauth1_token"
)

// ExchangeScopes are the scopes a token exchange grants for an OAuth 1.0a
// token of the access level (canWrite: read-write), in Scopes order:
// what the user authorized, never more, and always offline.access. Scopes
// the original authorization did not cover (bookmarks, Spaces, email) are
// not granted.
func ExchangeScopes(canWrite bool) []string {
	return oauth1Select(func(l oauth1Level) bool { return l == oauth1Read || canWrite && l == oauth1Write })
}
