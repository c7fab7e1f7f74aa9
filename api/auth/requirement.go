package auth

import (
	"net/http"
	"slices"
)

// Credential is a kind of credential a route accepts.
type Credential string

// The credential kinds Aviary verifies.
const (
	// AppOnly is an OAuth 2.0 app-only bearer token.
	AppOnly Credential = "app-only"
	// OAuth1User is an OAuth 1.0a user-context HMAC-SHA1 signature.
	OAuth1User Credential = "oauth1-user"
	// OAuth2User is an OAuth 2.0 user access token (authorization code
	// with PKCE), sent as a bearer token; it carries scopes.
	OAuth2User Credential = "oauth2-user"
)

// scheme is the Authorization scheme a credential kind comes in.
func (c Credential) scheme() string {
	if c == OAuth1User {
		return schemeOAuth
	}
	return schemeBearer
}

// label is how refusals name a credential kind, as the platform does.
func (c Credential) label() string {
	switch c {
	case AppOnly:
		return "OAuth 2.0 Application-Only"
	case OAuth1User:
		return "OAuth 1.0a User Context"
	case OAuth2User:
		return "OAuth 2.0 User Context"
	}
	return string(c)
}

// Requirement is what an endpoint demands of its caller: which credential
// kinds it accepts, whether it writes (read-only tokens are refused), and,
// for OAuth 2.0 user tokens, which scopes it needs. It is a value on the
// endpoint, evaluated by Authenticator.Middleware.
type Requirement struct {
	// Accept lists the credential kinds the endpoint takes; a request with
	// another kind gets 403 unsupported-authentication.
	Accept []Credential
	// Write refuses callers that may not write (read-only access tokens).
	Write bool
	// Scopes are the OAuth 2.0 scopes a user-context token must carry
	// (all of them); a token without one is refused with 403. OAuth 1.0a
	// tokens carry every scope of their access level (Principal.Scopes),
	// app-only tokens are not checked.
	Scopes []string
	// Public admits requests without authenticating a caller: Verify
	// checks the credential the request itself carries (a signed URL). No
	// Principal is stored, so such an endpoint's rate limit is counted per
	// resource. A public requirement accepts no credential kind and does
	// not write; build it with Signed.
	Public bool
	// Verify checks a public request before anything else runs (so a
	// refused request costs no rate-limit quota); its error is rendered.
	// Required with Public.
	Verify func(r *http.Request) error
}

// Common requirements; endpoints add Write (see Writes) where they change
// data.
var (
	// BearerOnly admits app-only bearer tokens.
	BearerOnly = Requirement{Accept: []Credential{AppOnly}}
	// UserContext admits user-context requests: OAuth 1.0a signatures and
	// OAuth 2.0 user access tokens.
	UserContext = Requirement{Accept: []Credential{OAuth1User, OAuth2User}}
	// OAuth1Only admits OAuth 1.0a user-context requests only (the ads
	// API, which takes no OAuth 2.0).
	OAuth1Only = Requirement{Accept: []Credential{OAuth1User}}
	// AppOrUser admits all three kinds.
	AppOrUser = Requirement{Accept: []Credential{AppOnly, OAuth1User, OAuth2User}}
)

// Signed admits requests without an Authorization header to an endpoint
// whose URL carries its own signature, which verify checks (the compliance
// upload URLs). An Authorization header that is sent is ignored.
func Signed(verify func(r *http.Request) error) Requirement {
	return Requirement{Public: true, Verify: verify}
}

// Needs returns r requiring the OAuth 2.0 scopes (in addition to any it
// already names).
func (r Requirement) Needs(scopes ...string) Requirement {
	r.Scopes = append(slices.Clip(r.Scopes), scopes...)
	return r
}

// Writes returns r for an endpoint that writes.
func (r Requirement) Writes() Requirement {
	r.Write = true
	return r
}

// accepts reports whether kind is one of r's credential kinds.
func (r Requirement) accepts(kind Credential) bool {
	return slices.Contains(r.Accept, kind)
}

// Middleware enforces req: it authenticates the caller with one of the
// accepted credential kinds (401/403 otherwise), stores the Principal in the
// request context and, for a writing endpoint, refuses read-only callers
// with 403 before anything else (a refused write costs no rate-limit quota).
// A public requirement (Signed) runs its Verify instead and stores no
// Principal. It panics on a requirement that accepts nothing, or a public
// one without Verify or that also names credential kinds or writes, at
// wiring time.
func (a *Authenticator) Middleware(req Requirement) func(http.Handler) http.Handler {
	if req.Public {
		if len(req.Accept) > 0 || req.Write || req.Verify == nil {
			panic("auth: a public Requirement needs Verify and takes no credential kinds and no write access")
		}
		return func(next http.Handler) http.Handler { return a.verify(req.Verify, next) }
	}
	if len(req.Accept) == 0 {
		panic("auth: Requirement accepts no credential kind")
	}
	return func(next http.Handler) http.Handler {
		if req.Write {
			next = a.requireWrite(next)
		}
		return a.require(next, req)
	}
}

// verify runs a public requirement's check before next.
func (a *Authenticator) verify(check func(*http.Request) error, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := check(r); err != nil {
			a.writer.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
