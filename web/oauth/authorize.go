package oauth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/web"
)

// maxState is the longest state parameter accepted (the platform's 500).
const maxState = 500

// authRequest is a validated authorization request.
type authRequest struct {
	app         storage.App
	client      storage.OAuth2Client
	redirectURI string
	state       string
	scopes      []string
	challenge   string
	method      string
	// action is the URL the pages' forms post to: this same request.
	action string
}

// requestError is an authorization request the server refuses. With
// redirect set the client gets it at its redirect_uri (RFC 6749 section
// 4.1.2.1); without, the user sees an error page (an unknown client or a
// redirect_uri that is not registered must never be redirected to).
type requestError struct {
	redirect    bool
	code        string // OAuth error code
	description string
}

func (e *requestError) Error() string { return e.code + ": " + e.description }

// parseAuthRequest validates the query of an authorization request.
func (s *Server) parseAuthRequest(r *http.Request) (authRequest, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return authRequest{}, &requestError{code: "invalid_request", description: "The authorization URL's query could not be read."}
	}
	for name, vs := range q {
		if len(vs) > 1 {
			return authRequest{}, &requestError{code: "invalid_request", description: "The parameter " + name + " is repeated."}
		}
	}
	if !storableValues(q) {
		return authRequest{}, &requestError{code: "invalid_request", description: "A parameter of the authorization URL is not valid UTF-8 text."}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return authRequest{}, &requestError{code: "invalid_request", description: "client_id is missing."}
	}
	client, app, err := s.store.OAuth2ClientByID(r.Context(), clientID)
	if errors.Is(err, storage.ErrNotFound) {
		return authRequest{}, &requestError{code: "invalid_client", description: "No app has this client_id."}
	}
	if err != nil {
		return authRequest{}, err
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		return authRequest{}, &requestError{code: "invalid_request", description: "redirect_uri is missing."}
	}
	registered, err := s.store.HasCallbackURL(r.Context(), app.ID, redirect)
	if err != nil {
		return authRequest{}, err
	}
	if !registered {
		return authRequest{}, &requestError{code: "invalid_request", description: "redirect_uri is not one of the app's registered callback URLs (they must match exactly)."}
	}
	if !absoluteRedirect(redirect) {
		return authRequest{}, &requestError{code: "invalid_request", description: "redirect_uri must be an absolute URL without a fragment (oob is for OAuth 1.0a's PIN flow)."}
	}
	ar := authRequest{app: app, client: client, redirectURI: redirect, state: q.Get("state"), action: r.URL.Path + "?" + r.URL.RawQuery}
	fail := func(code, description string) (authRequest, error) {
		return ar, &requestError{redirect: true, code: code, description: description}
	}
	if q.Get("response_type") != "code" {
		return fail("unsupported_response_type", "response_type must be code.")
	}
	if len(ar.state) > maxState {
		return fail("invalid_request", fmt.Sprintf("state is longer than %d characters.", maxState))
	}
	if ar.scopes, err = oauth2.ParseScope(q.Get("scope")); err != nil {
		return fail("invalid_scope", err.Error()+".")
	}
	if ar.method, err = oauth2.ChallengeMethod(q.Get("code_challenge_method")); err != nil {
		return fail("invalid_request", err.Error()+".")
	}
	ar.challenge = q.Get("code_challenge")
	if !oauth2.ValidChallenge(ar.challenge) {
		return fail("invalid_request", "code_challenge is missing or not made of 1 to 128 unreserved characters (PKCE is required).")
	}
	return ar, nil
}

// absoluteRedirect reports whether a registered callback may be an OAuth
// 2.0 redirect_uri: a callback URL (CheckCallback) but not oob, which is
// OAuth 1.0a's PIN flow (a relative entry would send the code to a path of
// Aviary's own).
func absoluteRedirect(uri string) bool {
	return uri != oob && CheckCallback(uri) == nil
}

// refuse answers a refused authorization request: at the client's
// redirect_uri when that is safe, else with an error page.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, ar authRequest, err error) {
	var re *requestError
	if !errors.As(err, &re) {
		s.kit.Fail(w, r, err)
		return
	}
	if !re.redirect {
		s.kit.Error(w, r, http.StatusBadRequest, "This authorization link does not work", re.description)
		return
	}
	s.redirect(w, r, ar, url.Values{"error": {re.code}, "error_description": {re.description}})
}

// redirect sends the browser to the client's redirect_uri with params and
// the request's state.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, ar authRequest, params url.Values) {
	if ar.state != "" {
		params.Set("state", ar.state)
	}
	target := ar.redirectURI
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	http.Redirect(w, r, target+sep+params.Encode(), http.StatusSeeOther)
}

// loginPage is the data of the login page.
type loginPage struct {
	AppName, Action, CSRF, Username, Message string
}

// consentPage is the data of the consent page.
type consentPage struct {
	AppName, Action, CSRF, Username, RedirectURI string
	Scopes                                       []oauth2.Scope
}

// authorize shows the login page (no session) or the consent page.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ar, err := s.parseAuthRequest(r)
	if err != nil {
		s.refuse(w, r, ar, err)
		return
	}
	sess := s.kit.Sessions.Load(r)
	s.kit.Sessions.Save(w, sess)
	user, ok, err := s.sessionUser(r, sess)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if !ok {
		s.kit.Render(w, r, http.StatusOK, "login", loginPage{AppName: ar.app.Name, Action: ar.action, CSRF: s.kit.Sessions.CSRFToken(sess)})
		return
	}
	s.kit.Render(w, r, http.StatusOK, "consent", consentPage{AppName: ar.app.Name, Action: ar.action, CSRF: s.kit.Sessions.CSRFToken(sess),
		Username: user.Username, RedirectURI: ar.redirectURI, Scopes: oauth2.Describe(ar.scopes)})
}

// sessionUser is the session's user if it may still log in.
func (s *Server) sessionUser(r *http.Request, sess web.Session) (storage.User, bool, error) {
	if !sess.LoggedIn() {
		return storage.User{}, false, nil
	}
	u, err := s.store.UserByID(r.Context(), sess.UserID)
	if errors.Is(err, storage.ErrNotFound) {
		return u, false, nil
	}
	if err != nil {
		return u, false, err
	}
	return u, mayLogIn(u), nil
}

// mayLogIn reports whether a user's account may log in and authorize apps.
func mayLogIn(u storage.User) bool {
	return u.DeletedAt == nil && u.DeactivatedAt == nil && u.SuspendedAt == nil
}

// authorizePost handles the pages' forms: login, allow, deny. Every one
// needs the session's CSRF token.
func (s *Server) authorizePost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	ar, err := s.parseAuthRequest(r)
	if err != nil {
		s.refuse(w, r, ar, err)
		return
	}
	sess, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	switch r.PostFormValue("action") {
	case "login":
		s.login(w, r, ar, sess)
	case "allow":
		s.allow(w, r, ar, sess)
	case "deny":
		s.redirect(w, r, ar, url.Values{"error": {"access_denied"}, "error_description": {"The user denied the request."}})
	default:
		s.kit.Error(w, r, http.StatusBadRequest, "Unknown action", "The form asked for something this page does not do.")
	}
}

// checkForm reads a page's form and its session, and refuses (403) a form
// without the session's CSRF token; ok is false when it answered.
func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) (web.Session, bool) {
	sess := s.kit.Sessions.Load(r)
	if err := r.ParseForm(); err != nil || !s.kit.Sessions.CheckCSRF(r, sess) {
		s.kit.Error(w, r, http.StatusForbidden, "This form has expired",
			"The form was sent without a valid security token (it may be too old, or sent from another site). Go back, reload the page and try again.")
		return web.Session{}, false
	}
	return sess, true
}

// login checks the login form (throttled per user and per address) and,
// on success, starts a new session and shows the consent page again.
func (s *Server) login(w http.ResponseWriter, r *http.Request, ar authRequest, sess web.Session) {
	user, ok := s.checkLogin(w, r, ar.app.Name, ar.action, sess)
	if !ok {
		return
	}
	s.kit.Sessions.Save(w, s.kit.Sessions.Login(user.ID))
	http.Redirect(w, r, ar.action, http.StatusSeeOther)
}

// checkLogin checks the login form (throttled per user and per address).
// On failure it has answered (the form again, with a message) and ok is
// false.
func (s *Server) checkLogin(w http.ResponseWriter, r *http.Request, appName, action string, sess web.Session) (storage.User, bool) {
	ctx := r.Context()
	username := strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("username")), "@")
	addr := web.ClientAddress(r)
	page := loginPage{AppName: appName, Action: action, CSRF: s.kit.Sessions.CSRFToken(sess), Username: username}
	ok, retry, err := s.kit.Throttle.Attempt(ctx, username, addr)
	if err != nil {
		s.kit.Fail(w, r, err)
		return storage.User{}, false
	}
	if !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(retry.Seconds()+0.5)))
		page.Message = "Too many failed logins. Wait a few minutes and try again."
		s.kit.Render(w, r, http.StatusTooManyRequests, "login", page)
		return storage.User{}, false
	}
	var user storage.User
	var hash string
	if storable(username) { // else no user has it: a failed login, same cost
		user, hash, err = s.store.UserPassword(ctx, username)
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.kit.Fail(w, r, err)
		return storage.User{}, false
	}
	if !web.CheckPassword(hash, r.PostFormValue("password")) || !mayLogIn(user) {
		// Attempt counted this failure already.
		page.Message = "The username and password do not match."
		s.kit.Render(w, r, http.StatusUnauthorized, "login", page)
		return storage.User{}, false
	}
	if err := s.kit.Throttle.Succeeded(ctx, username, addr); err != nil {
		s.log.WarnContext(ctx, "clear login throttle", "error", err)
	}
	return user, true
}

// allow issues a code for the logged-in user and sends it to the client.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, ar authRequest, sess web.Session) {
	user, ok, err := s.sessionUser(r, sess)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if !ok {
		http.Redirect(w, r, ar.action, http.StatusSeeOther)
		return
	}
	code, err := ids.Token(48)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	err = s.store.CreateOAuth2Code(r.Context(), code, storage.OAuth2Code{AppID: ar.app.ID, UserID: user.ID, RedirectURI: ar.redirectURI,
		Scopes: ar.scopes, Challenge: ar.challenge, Method: ar.method, ExpiresAt: s.now().Add(oauth2.CodeTTL)})
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.redirect(w, r, ar, url.Values{"code": {code}})
}
