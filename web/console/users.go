package console

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/web"
)

// usernamePattern is the platform's handle rule: 1 to 15 letters, digits
// and underscores.
var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)

// consoleStates are the account states the users page sets.
var consoleStates = map[string]bool{"protected": true, "unprotected": true, "suspended": true, "unsuspended": true}

// usersData is the users page's: every user for an administrator, the
// viewer alone for anyone else.
type usersData struct {
	Base
	Users                   []storage.User
	Username, Name, Message string
	Flash                   string
}

func (s *Server) users(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderUsers(w, r, v, http.StatusOK, usersData{Flash: userFlashes[r.URL.Query().Get("done")]})
}

var userFlashes = map[string]string{"created": "The user was created.", "state": "The account state was changed.",
	"verified": "The verified badge was changed."}

func (s *Server) renderUsers(w http.ResponseWriter, r *http.Request, v viewer, status int, d usersData) {
	d.Base = s.base(&v, "Users", "users")
	if !v.Admin {
		d.Users = []storage.User{v.User}
	} else {
		var err error
		if d.Users, err = s.store.ConsoleUsers(r.Context(), 500); err != nil {
			s.kit.Fail(w, r, err)
			return
		}
	}
	s.render(w, r, status, "users", "", d)
}

// adminOnly answers 403 unless the viewer is an administrator.
func (s *Server) adminOnly(w http.ResponseWriter, r *http.Request, v viewer) bool {
	if v.Admin {
		return true
	}
	s.problem(w, r, &v, http.StatusForbidden, "Administrators only",
		"Only a console administrator may do this (docs/console.md: aviary admin user admin NAME on).")
	return false
}

// createUser creates a user (as `aviary admin user create`) with an
// optional password to log in with.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request, v viewer) {
	if !s.adminOnly(w, r, v) {
		return
	}
	ctx := r.Context()
	d := usersData{Username: strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("username")), "@"),
		Name: strings.TrimSpace(r.PostFormValue("name"))}
	if !usernamePattern.MatchString(d.Username) || len(d.Name) > 50 {
		d.Message = "A username is 1 to 15 letters, digits or underscores; a name at most 50 characters."
		s.renderUsers(w, r, v, http.StatusBadRequest, d)
		return
	}
	u, err := s.store.CreateUser(ctx, d.Username, d.Name)
	if errors.Is(err, storage.ErrConflict) {
		d.Message = "That username is taken."
		s.renderUsers(w, r, v, http.StatusConflict, d)
		return
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if pw := r.PostFormValue("password"); pw != "" {
		hash, err := web.HashPassword(pw)
		if err == nil {
			err = s.store.SetUserPassword(ctx, u.ID, hash)
		}
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
	}
	http.Redirect(w, r, "/console/users?done=created", http.StatusSeeOther)
}

// pathUser is the path's {user} id.
func (s *Server) pathUser(w http.ResponseWriter, r *http.Request, v viewer) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("user"), 10, 64)
	if err != nil || id <= 0 {
		s.notFound(w, r, v)
		return 0, false
	}
	return id, true
}

// setUserState protects, unprotects, suspends or unsuspends a user (as
// `aviary admin user state`) and tells the credential caches.
func (s *Server) setUserState(w http.ResponseWriter, r *http.Request, v viewer) {
	if !s.adminOnly(w, r, v) {
		return
	}
	id, ok := s.pathUser(w, r, v)
	if !ok {
		return
	}
	state := r.PostFormValue("state")
	if !consoleStates[state] {
		s.renderUsers(w, r, v, http.StatusBadRequest, usersData{Message: "Unknown account state."})
		return
	}
	_, err := s.store.SetUserState(r.Context(), id, state, s.cfg.Now().UTC())
	if s.userChanged(w, r, v, id, err) {
		http.Redirect(w, r, "/console/users?done=state", http.StatusSeeOther)
	}
}

// setVerified sets the verified badge (as `aviary admin user verified`).
func (s *Server) setVerified(w http.ResponseWriter, r *http.Request, v viewer) {
	if !s.adminOnly(w, r, v) {
		return
	}
	id, ok := s.pathUser(w, r, v)
	if !ok {
		return
	}
	err := s.store.SetUserFlag(r.Context(), id, "verified", r.PostFormValue("verified") == "on")
	if s.userChanged(w, r, v, id, err) {
		http.Redirect(w, r, "/console/users?done=verified", http.StatusSeeOther)
	}
}

// userChanged answers a failed change of user id, or announces a done one
// (ok true: the caller redirects).
func (s *Server) userChanged(w http.ResponseWriter, r *http.Request, v viewer, id int64, err error) bool {
	if !s.found(w, r, v, err) {
		return false
	}
	s.notify(r.Context(), "user changed", func(ctx context.Context) error { return call(s.cfg.Notify.UserChanged, ctx, id) })
	return true
}
