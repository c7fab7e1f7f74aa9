package auth

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
)

var testNow = time.Unix(1_700_000_000, 0)

// quietWriter renders errors without logging the expected 500s.
var quietWriter = apierr.Writer{Logger: slog.New(slog.DiscardHandler)}

// signed describes an OAuth 1.0a request built with SignRequest; the zero
// value is a valid GET by token at1 of app ck1.
type signed struct {
	method, target string
	form           url.Values
	key, secret    string
	token, tsecret string
	at             time.Time
	nonce          string
	signBase       string // public base URL given to SignRequest
	proto          string // X-Forwarded-Proto sent
	after          func(*http.Request)
}

func (s signed) request(t *testing.T) *http.Request {
	t.Helper()
	s = s.withDefaults()
	var body io.Reader
	if s.form != nil {
		body = strings.NewReader(s.form.Encode())
	}
	r := httptest.NewRequest(s.method, s.target, body)
	if s.form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if s.proto != "" {
		r.Header.Set("X-Forwarded-Proto", s.proto)
	}
	if err := SignRequest(r, s.signBase, s.key, s.secret, s.token, s.tsecret, s.at, s.nonce); err != nil {
		t.Fatal(err)
	}
	if s.after != nil {
		s.after(r)
	}
	return r
}

func (s signed) withDefaults() signed {
	if s.method == "" {
		s.method = http.MethodGet
	}
	if s.target == "" {
		s.target = "/2/users/me?user.fields=created_at,name&expansions=pinned_tweet_id"
	}
	if s.key == "" {
		s.key = ck1
	}
	if s.secret == "" {
		s.secret = cs1
	}
	if s.token == "" {
		s.token = at1
	}
	if s.tsecret == "" {
		s.tsecret = ts1
	}
	if s.at.IsZero() {
		s.at = testNow
	}
	return s
}

func bearerRequest(header string) func(*testing.T) *http.Request {
	return func(*testing.T) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/2/tweets?ids=1", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		return r
	}
}

// echo reports the principal and any form value the handler can still read.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		http.Error(w, "no principal", http.StatusTeapot)
		return
	}
	user, token := int64(0), ""
	if p.User != nil {
		user = p.User.ID
	}
	if p.Token != nil {
		token = p.Token.Token
	}
	fmt.Fprintf(w, "%s app=%d user=%d token=%s status=%s", p.Method, p.App.ID, user, token, r.PostFormValue("status"))
})

type middleware func(*Authenticator, http.Handler) http.Handler

// requirement is the middleware Authenticator.Middleware builds for req.
func requirement(req Requirement) middleware {
	return func(a *Authenticator, next http.Handler) http.Handler { return a.Middleware(req)(next) }
}

var (
	requireApp    = requirement(AppOrUser)
	requireUser   = requirement(UserContext)
	requireBearer = requirement(BearerOnly)
)

func TestMiddleware(t *testing.T) {
	tests := []struct {
		name     string
		mw       middleware
		public   string // Authenticator's public base URL
		req      func(*testing.T) *http.Request
		status   int
		want     string // 200 body
		slug     string // problem slug for errors
		inDetail string // substring of the problem detail
	}{
		{name: "bearer on RequireApp", mw: requireApp, req: bearerRequest("Bearer " + bt1), status: 200, want: "bearer app=1 user=0 token= status="},
		{name: "bearer on RequireBearer, lowercase scheme", mw: requireBearer, req: bearerRequest("bearer " + bt1), status: 200, want: "bearer app=1 user=0 token= status="},
		{name: "unknown bearer", mw: requireApp, req: bearerRequest("Bearer nope"), status: 401, inDetail: "bearer token"},
		{name: "empty bearer", mw: requireApp, req: bearerRequest("Bearer"), status: 401, inDetail: "Malformed bearer"},
		{name: "no Authorization header", mw: requireApp, req: bearerRequest(""), status: 401, inDetail: "no Authorization header"},
		{name: "basic auth", mw: requireApp, req: bearerRequest("Basic dXNlcjpwYXNz"), status: 401, inDetail: "scheme"},
		{name: "two Authorization headers", mw: requireApp, status: 401, inDetail: "more than one", req: func(t *testing.T) *http.Request {
			r := bearerRequest("Bearer " + bt1)(t)
			r.Header.Add("Authorization", "Bearer "+bt1)
			return r
		}},
		{name: "bearer store failure", mw: requireApp, req: bearerRequest("Bearer boom"), status: 500},
		{name: "bearer on RequireUser", mw: requireUser, req: bearerRequest("Bearer " + bt1), status: 403, slug: apierr.SlugUnsupportedAuthentication},
		// User context takes OAuth 2.0 user tokens, which are bearer
		// tokens too: an unknown one is looked up and refused with 401;
		// where no bearer kind is accepted it is 403 before any lookup.
		{name: "unknown bearer on RequireUser", mw: requireUser, req: bearerRequest("Bearer nope"), status: 401},
		{name: "unknown bearer on OAuth1Only is 403", mw: requirement(OAuth1Only), req: bearerRequest("Bearer nope"), status: 403, slug: apierr.SlugUnsupportedAuthentication},

		{name: "oauth2 user token on RequireUser", mw: requireUser, req: bearerRequest("Bearer " + ot1), status: 200, want: "oauth2 app=2 user=10 token= status="},
		{name: "oauth2 user token on RequireApp", mw: requireApp, req: bearerRequest("Bearer " + ot1), status: 200, want: "oauth2 app=2 user=10 token= status="},
		{name: "oauth2 user token with the scopes", mw: requirement(UserContext.Needs("tweet.read", "users.read")), req: bearerRequest("Bearer " + ot1), status: 200,
			want: "oauth2 app=2 user=10 token= status="},
		{name: "oauth2 user token without tweet.write", mw: requirement(UserContext.Writes().Needs("tweet.read", "tweet.write")), req: bearerRequest("Bearer " + ot1),
			status: 403, slug: apierr.SlugUnsupportedAuthentication, inDetail: "missing the scope tweet.write"},
		{name: "oauth2 user token without two scopes", mw: requirement(UserContext.Needs("tweet.read", "like.write", "media.write")), req: bearerRequest("Bearer " + ot1),
			status: 403, slug: apierr.SlugUnsupportedAuthentication, inDetail: "scopes like.write, media.write"},
		{name: "oauth2 user token on RequireBearer", mw: requireBearer, req: bearerRequest("Bearer " + ot1), status: 403, slug: apierr.SlugUnsupportedAuthentication,
			inDetail: "OAuth 2.0 User Context"},
		{name: "oauth2 user token on OAuth1Only", mw: requirement(OAuth1Only), req: bearerRequest("Bearer " + ot1), status: 403, slug: apierr.SlugUnsupportedAuthentication},
		{name: "expired oauth2 token", mw: requireUser, req: bearerRequest("Bearer " + otExpired), status: 401},
		{name: "revoked oauth2 token", mw: requireUser, req: bearerRequest("Bearer " + otRevoked), status: 401},
		{name: "oauth2 refresh token is no access token", mw: requireUser, req: bearerRequest("Bearer " + otRefresh), status: 401},
		{name: "oauth2 token of a suspended user", mw: requireUser, req: bearerRequest("Bearer " + otSuspended), status: 403},
		{name: "read-only oauth1 token on a writing endpoint with scopes", mw: requirement(UserContext.Writes().Needs("tweet.write")), req: signed{token: atRead, tsecret: atRead}.request,
			status: 403, inDetail: "oauth1 app permissions"},
		{name: "read-only oauth1 token reads with scopes", mw: requirement(UserContext.Needs("tweet.read", "users.read")), req: signed{token: atRead, tsecret: atRead}.request,
			status: 200, want: "oauth1 app=1 user=11 token=" + atRead + " status="},
		{name: "app-only bearer skips scopes", mw: requirement(AppOrUser.Needs("tweet.read")), req: bearerRequest("Bearer " + bt1), status: 200, want: "bearer app=1 user=0 token= status="},
		{name: "oauth1 on RequireBearer", mw: requireBearer, req: signed{}.request, status: 403, slug: apierr.SlugUnsupportedAuthentication},

		{name: "oauth1 GET with query on RequireUser", mw: requireUser, req: signed{}.request, status: 200, want: "oauth1 app=1 user=10 token=" + at1 + " status="},
		{name: "oauth1 on RequireApp", mw: requireApp, req: signed{}.request, status: 200, want: "oauth1 app=1 user=10 token=" + at1 + " status="},
		{name: "oauth1 POST with form body", mw: requireUser, status: 200,
			req:  signed{method: http.MethodPost, target: "/2/tweets?x=1", form: url.Values{"status": {"Hello Ladies + Gentlemen, a signed OAuth request!"}, "a": {"2", "1"}}}.request,
			want: "oauth1 app=1 user=10 token=" + at1 + " status=Hello Ladies + Gentlemen, a signed OAuth request!"},
		{name: "oauth1 app 2", mw: requireUser, req: signed{key: ck2, secret: cs2, token: at2, tsecret: ts2}.request, status: 200, want: "oauth1 app=2 user=20 token=" + at2 + " status="},
		{name: "oauth1 timestamp 4 minutes old", mw: requireUser, req: signed{at: testNow.Add(-4 * time.Minute)}.request, status: 200, want: "oauth1 app=1 user=10 token=" + at1 + " status="},
		{name: "oauth1 behind TLS proxy", mw: requireUser, req: signed{proto: "https"}.request, status: 200, want: "oauth1 app=1 user=10 token=" + at1 + " status="},
		{name: "oauth1 signed for public base URL", mw: requireUser, public: "https://api.aviary.test", req: signed{signBase: "https://api.aviary.test/"}.request, status: 200, want: "oauth1 app=1 user=10 token=" + at1 + " status="},

		{name: "wrong consumer secret", mw: requireUser, req: signed{secret: "wrong"}.request, status: 401, inDetail: "oauth_signature"},
		{name: "wrong token secret", mw: requireUser, req: signed{tsecret: "wrong"}.request, status: 401, inDetail: "oauth_signature"},
		{name: "query tampered after signing", mw: requireUser, status: 401, inDetail: "oauth_signature",
			req: signed{after: func(r *http.Request) { r.URL.RawQuery += "&extra=1" }}.request},
		{name: "form body tampered after signing", mw: requireUser, status: 401, inDetail: "oauth_signature",
			req: signed{method: http.MethodPost, form: url.Values{"status": {"a"}}, after: func(r *http.Request) {
				r.Body = io.NopCloser(strings.NewReader("status=b"))
			}}.request},
		{name: "method changed after signing", mw: requireUser, status: 401, inDetail: "oauth_signature",
			req: signed{after: func(r *http.Request) { r.Method = http.MethodDelete }}.request},
		{name: "signed for another host", mw: requireUser, public: "https://api.aviary.test", req: signed{}.request, status: 401, inDetail: "oauth_signature"},
		{name: "signed as https, received as http", mw: requireUser, req: signed{signBase: "https://example.com"}.request, status: 401, inDetail: "oauth_signature"},
		{name: "token of another app", mw: requireUser, req: signed{token: at2, tsecret: ts2}.request, status: 401, inDetail: "oauth_token"},
		{name: "unknown token", mw: requireUser, req: signed{token: "nope", tsecret: "x"}.request, status: 401, inDetail: "oauth_token"},
		{name: "unknown consumer key", mw: requireUser, req: signed{key: "nope", secret: "x"}.request, status: 401, inDetail: "oauth_consumer_key"},
		{name: "token user deleted", mw: requireUser, req: signed{token: atGhost, tsecret: "ghost"}.request, status: 401, inDetail: "user"},
		{name: "user account deleted", mw: requireUser, req: signed{token: atDeleted, tsecret: atDeleted}.request, status: 401, inDetail: "no longer exists"},
		{name: "user account deactivated", mw: requireUser, req: signed{token: atDeactivated, tsecret: atDeactivated}.request, status: 401, inDetail: "deactivated"},
		{name: "user account deactivated on RequireApp", mw: requireApp, req: signed{token: atDeactivated, tsecret: atDeactivated}.request, status: 401, inDetail: "deactivated"},
		{name: "user account suspended", mw: requireUser, req: signed{token: atSuspended, tsecret: atSuspended}.request, status: 403,
			inDetail: "Your account is suspended and is not permitted to access this feature."},
		{name: "user account suspended on RequireApp", mw: requireApp, req: signed{token: atSuspended, tsecret: atSuspended}.request, status: 403, inDetail: "suspended"},
		{name: "deleted wins over suspended", mw: requireUser, req: signed{token: atGoneAndBanned, tsecret: atGoneAndBanned}.request, status: 401, inDetail: "no longer exists"},
		{name: "protected user is served", mw: requireUser, req: signed{token: atProtected, tsecret: atProtected}.request, status: 200,
			want: "oauth1 app=1 user=60 token=" + atProtected + " status="},
		{name: "read-only token can read", mw: requireUser, req: signed{token: atRead, tsecret: atRead}.request, status: 200,
			want: "oauth1 app=1 user=11 token=" + atRead + " status="},
		{name: "consumer store failure", mw: requireUser, req: signed{key: "boom", secret: "x"}.request, status: 500},
		{name: "stale timestamp", mw: requireUser, req: signed{at: testNow.Add(-6 * time.Minute)}.request, status: 401, inDetail: "oauth_timestamp"},
		{name: "future timestamp", mw: requireUser, req: signed{at: testNow.Add(6 * time.Minute)}.request, status: 401, inDetail: "oauth_timestamp"},
		{name: "non-ASCII nonce", mw: requireUser, req: signed{nonce: "nonce-é"}.request, status: 401, inDetail: "oauth_nonce"},
		{name: "PLAINTEXT method", mw: requireUser, status: 401, inDetail: "oauth_signature_method",
			req: signed{after: replaceInHeader(`oauth_signature_method="HMAC-SHA1"`, `oauth_signature_method="PLAINTEXT"`)}.request},
		{name: "oauth_version 2.0", mw: requireUser, status: 401, inDetail: "oauth_version",
			req: signed{after: replaceInHeader(`oauth_version="1.0"`, `oauth_version="2.0"`)}.request},
		{name: "no oauth_token", mw: requireUser, status: 401, inDetail: "oauth_token",
			req: signed{after: replaceInHeader(`oauth_token="`+at1+`"`, `oauth_token=""`)}.request},
		{name: "malformed OAuth header", mw: requireUser, req: bearerRequest(`OAuth oauth_consumer_key=ck1`), status: 401, inDetail: "parse"},
		// An unreadable query is the request's fault, not the signature's:
		// 400 invalid-request naming the parameter (as every endpoint answers).
		{name: "malformed query", mw: requireUser, status: 400, slug: apierr.SlugInvalidRequest,
			req: signed{after: func(r *http.Request) { r.URL.RawQuery = "a=%zz" }}.request},
		{name: "literal semicolon in the query", mw: requireUser, status: 400, slug: apierr.SlugInvalidRequest,
			req: signed{after: func(r *http.Request) { r.URL.RawQuery = "a=b;c" }}.request},
		{name: "form body over 1 MiB, declared", mw: requireUser, status: 413,
			req: signed{method: http.MethodPost, form: url.Values{"status": {"a"}}, after: withBigBody(int64(MaxFormBody) + 8)}.request},
		{name: "form body over 1 MiB, chunked", mw: requireUser, status: 413,
			req: signed{method: http.MethodPost, form: url.Values{"status": {"a"}}, after: withBigBody(-1)}.request},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveThrough(t, tt.public, tt.mw, tt.req(t), tt.status)
			if tt.status == http.StatusOK {
				if got := rec.Body.String(); got != tt.want {
					t.Errorf("body = %q, want %q", got, tt.want)
				}
				return
			}
			p := assertProblem(t, rec, tt.status, tt.slug)
			if !strings.Contains(fmt.Sprint(p["detail"]), tt.inDetail) {
				t.Errorf("detail = %q, want it to mention %q", p["detail"], tt.inDetail)
			}
		})
	}
}

// serveThrough sends req through middleware mw of a fresh Authenticator
// (fake store, in-memory nonces, fixed clock) and checks the status.
func serveThrough(t *testing.T, public string, mw func(*Authenticator, http.Handler) http.Handler, req *http.Request, status int) *httptest.ResponseRecorder {
	t.Helper()
	a, err := New(newFakeStore(), &memNonces{}, public, func() time.Time { return testNow }, quietWriter)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	mw(a, echo).ServeHTTP(rec, req)
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	return rec
}

// withBigBody replaces the body by one just over MaxFormBody.
func withBigBody(contentLength int64) func(*http.Request) {
	return func(r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader("status=" + strings.Repeat("x", MaxFormBody)))
		r.ContentLength = contentLength
	}
}

func replaceInHeader(old, repl string) func(*http.Request) {
	return func(r *http.Request) {
		h := r.Header.Get("Authorization")
		if !strings.Contains(h, old) {
			panic("test header lacks " + old)
		}
		r.Header.Set("Authorization", strings.Replace(h, old, repl, 1))
	}
}

// assertProblem checks rec holds a Problem JSON body with the given status
// and slug and returns it.
func assertProblem(t *testing.T, rec *httptest.ResponseRecorder, status int, slug string) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem body %q: %v", rec.Body, err)
	}
	if p["type"] != quietWriter.TypeURI(slug) {
		t.Errorf("type = %v, want %s", p["type"], quietWriter.TypeURI(slug))
	}
	if title, _ := p["title"].(string); title == "" {
		t.Errorf("title missing in %v", p)
	}
	if p["status"] != float64(status) {
		t.Errorf("status field = %v, want %d", p["status"], status)
	}
	return p
}

func TestRequireWrite(t *testing.T) {
	withAuth := func(mw middleware) func(*Authenticator, http.Handler) http.Handler {
		return func(a *Authenticator, next http.Handler) http.Handler { return mw(a, a.requireWrite(next)) }
	}
	post := func(token, secret string) func(*testing.T) *http.Request {
		return signed{method: http.MethodPost, target: "/2/tweets", token: token, tsecret: secret}.request
	}
	tests := []struct {
		name   string
		mw     func(*Authenticator, http.Handler) http.Handler
		req    func(*testing.T) *http.Request
		status int
		detail string // exact problem detail for errors
	}{
		{"read-write token", withAuth(requireUser), post(at1, ts1), 200, ""},
		{"read-only token", withAuth(requireUser), post(atRead, atRead), 403, readOnlyDetail},
		{"read-only token on RequireApp", withAuth(requireApp), post(atRead, atRead), 403, readOnlyDetail},
		{"app-only bearer", withAuth(requireApp), bearerRequest("Bearer " + bt1), 200, ""},
		{"suspended user is refused by authentication", withAuth(requireUser), post(atSuspended, atSuspended), 403,
			"Your account is suspended and is not permitted to access this feature."},
		{"no authentication in front", (*Authenticator).requireWrite, post(atRead, atRead), 500, "Something went wrong. Try again later."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveThrough(t, "", tt.mw, tt.req(t), tt.status)
			if tt.status == http.StatusOK {
				return
			}
			p := assertProblem(t, rec, tt.status, "")
			if p["detail"] != tt.detail {
				t.Errorf("detail = %q, want %q", p["detail"], tt.detail)
			}
			if tt.status == http.StatusForbidden && p["title"] != "Forbidden" {
				t.Errorf("title = %q, want Forbidden", p["title"])
			}
		})
	}
}
