package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
)

// Authenticator verifies request credentials against a Store.
type Authenticator struct {
	store  Store
	nonces NonceStore
	public *url.URL
	now    func() time.Time
	writer apierr.Writer
	// loopback: see AcceptLoopbackSpellings.
	loopback bool
	// bases: see AcceptSignatureBases.
	bases []*url.URL
}

// New returns an Authenticator. publicBaseURL is the scheme, host and
// optional path prefix clients address (for example
// "https://api.example.com"); OAuth 1.0a signatures are computed over it plus
// the request path. When it is empty the base URL comes from each request:
// the scheme from r.TLS or X-Forwarded-Proto, the host from r.Host. now is
// the clock (nil means time.Now); w renders failures.
func New(store Store, nonces NonceStore, publicBaseURL string, now func() time.Time, w apierr.Writer) (*Authenticator, error) {
	if store == nil || nonces == nil {
		return nil, errors.New("auth: New needs a Store and a NonceStore")
	}
	public, err := parsePublicBase(publicBaseURL)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Authenticator{store: store, nonces: nonces, public: public, now: now, writer: w}, nil
}

// AcceptLoopbackSpellings makes a also accept OAuth 1.0a signatures over
// the other loopback spellings of a public base URL on a loopback host
// (localhost, 127.0.0.1, [::1], same scheme, port and path): a development
// server's clients sign over whichever one they call. Call it before
// serving; it returns a.
func (a *Authenticator) AcceptLoopbackSpellings() *Authenticator {
	a.loopback = true
	return a
}

// readOnlyDetail is the detail of the 403 a read-only token gets from an
// endpoint that writes.
const readOnlyDetail = "Your client app is not configured with the appropriate oauth1 app permissions for this endpoint."

// errNoPrincipal means requireWrite was mounted without authentication.
var errNoPrincipal = errors.New("auth: no Principal in the request context; mount requireWrite inside require")

// requireWrite admits only callers that may write: app-only bearer tokens
// and OAuth 1.0a tokens with access level read-write. A read-only token is
// answered with 403 Forbidden. It reads the Principal, so it must run inside
// require (without it it answers 500).
func (a *Authenticator) requireWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PrincipalFrom(r.Context())
		if !ok {
			a.writer.Write(w, r, errNoPrincipal)
			return
		}
		if !p.CanWrite() {
			a.writer.Write(w, r, apierr.Forbidden(readOnlyDetail))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Authenticate identifies the caller of r from any credential kind.
func (a *Authenticator) Authenticate(r *http.Request) (Principal, error) {
	return a.authenticate(r, AppOrUser)
}

func (a *Authenticator) require(next http.Handler, req Requirement) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r, req)
		if err != nil {
			a.writer.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// authenticate identifies the caller and checks that its credential kind
// is accepted and, for user context, that it carries req's scopes.
func (a *Authenticator) authenticate(r *http.Request, req Requirement) (Principal, error) {
	scheme, credentials, err := authorization(r)
	if err != nil {
		return Principal{}, err
	}
	if !slices.ContainsFunc(req.Accept, func(c Credential) bool { return c.scheme() == scheme }) {
		return Principal{}, unsupported(kindOfScheme(scheme), req)
	}
	var p Principal
	if scheme == schemeBearer {
		p, err = a.bearer(r.Context(), credentials)
	} else {
		p, err = a.oauth1(r, credentials)
	}
	if err != nil {
		return Principal{}, err
	}
	if !req.accepts(p.Kind()) {
		return Principal{}, unsupported(p.Kind(), req)
	}
	// OAuth 1.0a tokens carry every scope of their access level; a
	// read-only one meets a writing endpoint's refusal (requireWrite) with
	// the platform's OAuth 1.0a wording, so only OAuth 2.0 tokens are
	// checked here.
	if p.Method == MethodOAuth2 && len(req.Scopes) > 0 {
		if missing := oauth2.Missing(req.Scopes, p.Scopes); len(missing) > 0 {
			return Principal{}, missingScopes(missing)
		}
	}
	return p, nil
}

// kindOfScheme is the credential kind a refusal names for a scheme the
// endpoint does not take at all.
func kindOfScheme(scheme string) Credential {
	if scheme == schemeOAuth {
		return OAuth1User
	}
	return AppOnly
}

// missingScopes is the 403 unsupported-authentication a user token
// without an endpoint's scopes gets: its credential kind is accepted, but
// not without those scopes; the detail names them.
func missingScopes(missing []string) *apierr.Error {
	return apierr.UnsupportedAuthentication("Your OAuth 2.0 User Context access token is missing the scope" + plural(len(missing)) + " " +
		strings.Join(missing, ", ") + " that this endpoint requires; authorize the app again with " + pronoun(len(missing)) + ".")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// authorization returns the scheme and credentials of r's single
// Authorization header, or a 401 when it is absent or of an unknown scheme.
func authorization(r *http.Request) (scheme, credentials string, err error) {
	values := r.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return "", "", apierr.Unauthorized("The request has no Authorization header; send a bearer token or an OAuth 1.0a signature.")
	case 1:
	default:
		return "", "", apierr.Unauthorized("The request has more than one Authorization header.")
	}
	scheme, credentials = splitAuthorization(values[0])
	if scheme != schemeBearer && scheme != schemeOAuth {
		return "", "", apierr.Unauthorized("Unsupported Authorization scheme; use Bearer or OAuth.")
	}
	return scheme, credentials, nil
}

// unsupported is the 403 unsupported-authentication a credential of kind
// gets from an endpoint that does not accept it.
func unsupported(kind Credential, req Requirement) *apierr.Error {
	labels := make([]string, len(req.Accept))
	for i, c := range req.Accept {
		labels[i] = c.label()
	}
	return apierr.UnsupportedAuthentication("Authenticating with " + kind.label() + " is forbidden for this endpoint.  Supported authentication types are [" +
		strings.Join(labels, ", ") + "].")
}

// lookupError maps a store miss to a 401 with detail and wraps anything else
// so the writer logs it and renders 500.
func lookupError(err error, what, detail string) error {
	if errors.Is(err, storage.ErrNotFound) {
		return apierr.Unauthorized(detail)
	}
	return fmt.Errorf("auth: look up %s: %w", what, err)
}
