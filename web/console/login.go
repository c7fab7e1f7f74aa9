package console

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
)

// loginData is the login page's.
type loginData struct {
	Base
	Next, Username, Message string
}

// loginPage shows the login form (a logged-in user goes on to the console).
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if _, ok, err := s.viewer(r); err != nil {
		s.kit.Fail(w, r, err)
		return
	} else if ok {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	sess := s.kit.Sessions.Load(r)
	s.kit.Sessions.Save(w, sess)
	b := s.base(nil, "Log in", "")
	b.CSRF = s.kit.Sessions.CSRFToken(sess)
	s.render(w, r, http.StatusOK, "login", "", loginData{Base: b, Next: next})
}

// loginPost checks the form (throttled per user and per address, as the
// consent pages) and starts a new session.
func (s *Server) loginPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	sess := s.kit.Sessions.Load(r)
	if err := r.ParseForm(); err != nil || !s.kit.Sessions.CheckCSRF(r, sess) {
		s.problem(w, r, nil, http.StatusForbidden, "This form has expired",
			"The form was sent without a valid security token. Reload the login page and try again.")
		return
	}
	ctx := r.Context()
	username := strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("username")), "@")
	b := s.base(nil, "Log in", "")
	b.CSRF = s.kit.Sessions.CSRFToken(sess)
	page := loginData{Base: b, Next: safeNext(r.PostFormValue("next")), Username: username}
	addr := web.ClientAddress(r)
	ok, retry, err := s.kit.Throttle.Attempt(ctx, username, addr)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(retry.Seconds()+0.5)))
		page.Message = "Too many failed logins. Wait a few minutes and try again."
		s.render(w, r, http.StatusTooManyRequests, "login", "", page)
		return
	}
	var user storage.User
	var hash string
	if utf8.ValidString(username) && !strings.ContainsRune(username, 0) {
		user, hash, err = s.store.UserPassword(ctx, username)
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.kit.Fail(w, r, err)
		return
	}
	if !web.CheckPassword(hash, r.PostFormValue("password")) || !mayLogIn(user) {
		page.Message = "The username and password do not match."
		s.render(w, r, http.StatusUnauthorized, "login", "", page)
		return
	}
	if err := s.kit.Throttle.Succeeded(ctx, username, addr); err != nil {
		s.log.WarnContext(ctx, "clear login throttle", "error", err)
	}
	s.kit.Sessions.Save(w, s.kit.Sessions.Login(user.ID))
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// logout ends the session: a fresh anonymous one replaces it.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, v viewer) {
	s.kit.Sessions.Save(w, s.kit.Sessions.Login(0))
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}
