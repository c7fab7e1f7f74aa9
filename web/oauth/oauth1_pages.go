package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
)

// oauth1Flow is a validated visit of /oauth/authorize or /oauth/authenticate.
type oauth1Flow struct {
	token        storage.OAuth1RequestToken
	app          storage.App
	authenticate bool   // /oauth/authenticate
	force        bool   // force_login=true
	screenName   string // screen_name: pre-fills the login form
	action       string // this URL: the forms post to it
}

// oauth1Consent is the data of the OAuth 1.0a consent page.
type oauth1Consent struct {
	AppName, Action, CSRF, Username, Callback string
	Write, PIN                                bool
}

// oauth1Result is the data of the PIN and cancelled pages.
type oauth1Result struct {
	AppName, PIN string
}

// parseOAuth1Flow reads and checks the page's query; a refusal is a
// *requestError shown as an error page (never redirected).
func (s *Server) parseOAuth1Flow(r *http.Request) (oauth1Flow, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return oauth1Flow{}, &requestError{description: "The authorization URL's query could not be read."}
	}
	if !storableValues(q) {
		return oauth1Flow{}, &requestError{description: "A parameter of the authorization URL is not valid UTF-8 text."}
	}
	if _, ok := q["oauth_callback"]; ok {
		return oauth1Flow{}, &requestError{description: "oauth_callback is not accepted here: the app sends it to POST /oauth/request_token, and the callback registered then is used."}
	}
	f := oauth1Flow{authenticate: r.URL.Path == "/oauth/authenticate", force: strings.EqualFold(q.Get("force_login"), "true"),
		screenName: strings.TrimPrefix(q.Get("screen_name"), "@"), action: r.URL.Path + "?" + r.URL.RawQuery}
	token := q.Get("oauth_token")
	if token == "" {
		return f, &requestError{description: "oauth_token is missing: the app must send you here with the request token it obtained."}
	}
	f.token, err = s.oauth1.Store.RequestToken(r.Context(), token)
	if errors.Is(err, storage.ErrNotFound) {
		return f, &requestError{description: "This request token is unknown. Go back to the app and start again."}
	}
	if err != nil {
		return f, err
	}
	if !f.token.Pending(s.now()) {
		return f, &requestError{description: "This request token has expired or was already used. Go back to the app and start again."}
	}
	if f.app, err = s.oauth1.Store.AppByID(r.Context(), f.token.AppID); err != nil {
		return f, err
	}
	return f, nil
}

func (s *Server) refuseOAuth1(w http.ResponseWriter, r *http.Request, err error) {
	var re *requestError
	if !errors.As(err, &re) {
		s.kit.Fail(w, r, err)
		return
	}
	s.kit.Error(w, r, http.StatusBadRequest, "This authorization link does not work", re.description)
}

// oauth1Page serves GET /oauth/authorize and /oauth/authenticate: the
// login form (no session, or force_login=true), else the consent page, or
// straight back to the app when authenticate may skip consent.
func (s *Server) oauth1Page(w http.ResponseWriter, r *http.Request) {
	f, err := s.parseOAuth1Flow(r)
	if err != nil {
		s.refuseOAuth1(w, r, err)
		return
	}
	sess := s.kit.Sessions.Load(r)
	user, ok, err := s.sessionUser(r, sess)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if !ok || f.force {
		if f.force && ok {
			sess = s.kit.Sessions.Login(0) // forced login: a fresh anonymous session
		}
		s.kit.Sessions.Save(w, sess)
		s.kit.Render(w, r, http.StatusOK, "login", loginPage{AppName: f.app.Name, Action: f.action,
			CSRF: s.kit.Sessions.CSRFToken(sess), Username: f.screenName})
		return
	}
	s.kit.Sessions.Save(w, sess)
	s.consentOrSkip(w, r, f, sess, user)
}

// consentOrSkip shows the consent page, or approves at once on
// /oauth/authenticate when the app enables sign-in, the user already
// approved at least this access level, and force_login is not set.
func (s *Server) consentOrSkip(w http.ResponseWriter, r *http.Request, f oauth1Flow, sess web.Session, user storage.User) {
	if f.authenticate && f.app.SignInEnabled && !f.force {
		level, err := s.oauth1.Store.ApprovedAccess(r.Context(), f.app.ID, user.ID)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.kit.Fail(w, r, err)
			return
		}
		if err == nil && covers(level, f.token.AccessLevel) {
			s.approve(w, r, f, user)
			return
		}
	}
	s.kit.Render(w, r, http.StatusOK, "oauth1_consent", oauth1Consent{AppName: f.app.Name, Action: f.action,
		CSRF: s.kit.Sessions.CSRFToken(sess), Username: user.Username, Callback: f.token.Callback,
		Write: f.token.AccessLevel == storage.AccessReadWrite, PIN: f.token.Callback == oob})
}

// covers reports whether an approved access level includes wanted.
func covers(approved, wanted string) bool {
	return approved == storage.AccessReadWrite || approved == wanted
}

// oauth1PagePost handles the pages' forms: login, allow, deny (CSRF
// checked first).
func (s *Server) oauth1PagePost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	f, err := s.parseOAuth1Flow(r)
	if err != nil {
		s.refuseOAuth1(w, r, err)
		return
	}
	sess, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	switch r.PostFormValue("action") {
	case "login":
		s.oauth1Login(w, r, f, sess)
	case "allow":
		user, ok, err := s.sessionUser(r, sess)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		if !ok {
			http.Redirect(w, r, f.action, http.StatusSeeOther)
			return
		}
		s.approve(w, r, f, user)
	case "deny":
		s.deny(w, r, f)
	default:
		s.kit.Error(w, r, http.StatusBadRequest, "Unknown action", "The form asked for something this page does not do.")
	}
}

// oauth1Login checks the login form (the OAuth 2.0 page's throttled check)
// and then shows the consent page: directly after a forced login (which
// must not skip consent), else by sending the browser back to the page.
func (s *Server) oauth1Login(w http.ResponseWriter, r *http.Request, f oauth1Flow, sess web.Session) {
	user, ok := s.checkLogin(w, r, f.app.Name, f.action, sess)
	if !ok {
		return
	}
	next := s.kit.Sessions.Login(user.ID)
	s.kit.Sessions.Save(w, next)
	if f.force {
		s.consentOrSkip(w, r, f, next, user)
		return
	}
	http.Redirect(w, r, f.action, http.StatusSeeOther)
}

// approve authorizes the request token for user and sends the verifier
// to the app: to its callback, or shown as a PIN for oob.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, f oauth1Flow, user storage.User) {
	verifier, err := verifierFor(f.token.Callback)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	err = s.oauth1.Store.AuthorizeRequestToken(r.Context(), f.token.Token, user.ID, oauth2.HashSecret(verifier), s.now())
	if errors.Is(err, storage.ErrNotFound) {
		s.refuseOAuth1(w, r, &requestError{description: "This request token has expired or was already used. Go back to the app and start again."})
		return
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if f.token.Callback == oob {
		s.kit.Render(w, r, http.StatusOK, "oauth1_pin", oauth1Result{AppName: f.app.Name, PIN: verifier})
		return
	}
	http.Redirect(w, r, withParams(f.token.Callback, url.Values{"oauth_token": {f.token.Token}, "oauth_verifier": {verifier}}), http.StatusSeeOther)
}

// deny spends the request token and tells the app, as the platform does,
// with denied=<token> (oob: a page saying so).
func (s *Server) deny(w http.ResponseWriter, r *http.Request, f oauth1Flow) {
	if err := s.oauth1.Store.DenyRequestToken(r.Context(), f.token.Token, s.now()); err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.kit.Fail(w, r, err)
		return
	}
	if f.token.Callback == oob {
		s.kit.Render(w, r, http.StatusOK, "oauth1_denied", oauth1Result{AppName: f.app.Name})
		return
	}
	http.Redirect(w, r, withParams(f.token.Callback, url.Values{"denied": {f.token.Token}}), http.StatusSeeOther)
}

// withParams appends params to target's query.
func withParams(target string, params url.Values) string {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + params.Encode()
}
