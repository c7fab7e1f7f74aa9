package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/web/oauth"
)

// maxAppName is the longest app name the console accepts.
const maxAppName = 64

// appsData is the apps page's.
type appsData struct {
	Base
	Apps    []storage.ConsoleApp
	Name    string
	Message string
}

func (s *Server) apps(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderApps(w, r, v, http.StatusOK, "", "")
}

func (s *Server) renderApps(w http.ResponseWriter, r *http.Request, v viewer, status int, name, message string) {
	apps, err := s.visibleApps(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, status, "apps", "", appsData{Base: s.base(&v, "Apps", "apps"), Apps: apps, Name: name, Message: message})
}

// secretData is the page that shows new credentials, once.
type secretData struct {
	Base
	App     storage.App
	Heading string
	Secrets []secretField
}

type secretField struct{ ID, Label, Value string }

// createApp registers an app owned by the viewer with a first bearer token
// and shows its credentials once (as `aviary admin app create`).
func (s *Server) createApp(w http.ResponseWriter, r *http.Request, v viewer) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || utf8.RuneCountInString(name) > maxAppName || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		s.renderApps(w, r, v, http.StatusBadRequest, name, "An app name is 1 to 64 characters.")
		return
	}
	ctx := r.Context()
	app, err := s.store.CreateApp(ctx, name, "")
	if errors.Is(err, storage.ErrConflict) {
		s.renderApps(w, r, v, http.StatusConflict, name, "An app with this name exists already; app names are unique.")
		return
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if err := s.store.SetAppOwner(ctx, app.ID, v.User.ID); err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	bearer, err := s.store.CreateBearerToken(ctx, app.ID)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.log.InfoContext(ctx, "console: app created", "app_id", app.ID, "user_id", v.User.ID)
	s.render(w, r, http.StatusCreated, "secret", "", secretData{Base: s.base(&v, "App created", "apps"), App: app,
		Heading: "App " + app.Name + " created", Secrets: []secretField{
			{"consumer-key", "API key (consumer key)", app.ConsumerKey},
			{"consumer-secret", "API key secret (consumer secret)", app.ConsumerSecret},
			{"bearer-token", "Bearer token", bearer.Token}}})
}

// appData is an app's page.
type appData struct {
	Base
	App          storage.App
	Bearer       []storage.ConsoleToken
	Access       []storage.ConsoleToken
	Grants       []storage.ConsoleGrant
	Callbacks    []string
	Webhooks     []storage.Webhook
	Flash        string
	Message      string
	CallbackForm string
}

func (s *Server) app(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	s.renderApp(w, r, v, app, http.StatusOK, appData{Flash: flashText(r.URL.Query().Get("done"))})
}

// flashes are the messages a redirect after a change shows (?done=).
var flashes = map[string]string{
	"bearer-revoked":   "The bearer token was revoked.",
	"token-revoked":    "The access token was revoked.",
	"grant-revoked":    "The OAuth 2.0 grant was revoked.",
	"callback-added":   "The callback URL was added.",
	"callback-removed": "The callback URL was removed.",
}

func flashText(key string) string { return flashes[key] }

func (s *Server) renderApp(w http.ResponseWriter, r *http.Request, v viewer, app storage.App, status int, d appData) {
	ctx := r.Context()
	var err error
	d.Base, d.App = s.base(&v, app.Name, "apps"), app
	if d.Bearer, err = s.store.AppBearerTokens(ctx, app.ID); err == nil {
		if d.Access, err = s.store.AppAccessTokens(ctx, app.ID); err == nil {
			if d.Grants, err = s.store.AppOAuth2Grants(ctx, app.ID); err == nil {
				if d.Callbacks, err = s.store.CallbackURLs(ctx, app.ID); err == nil {
					d.Webhooks, err = s.store.Webhooks(ctx, app.ID)
				}
			}
		}
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, status, "app", "", d)
}

// done redirects to the app's page with a flash message.
func done(w http.ResponseWriter, r *http.Request, app storage.App, key string) {
	http.Redirect(w, r, "/console/apps/"+ids.Format(app.ID)+"?done="+url.QueryEscape(key), http.StatusSeeOther)
}

func (s *Server) createBearer(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	t, err := s.store.CreateBearerToken(r.Context(), app.ID)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusCreated, "secret", "", secretData{Base: s.base(&v, "Bearer token created", "apps"), App: app,
		Heading: "New bearer token for " + app.Name, Secrets: []secretField{{"bearer-token", "Bearer token", t.Token}}})
}

func (s *Server) revokeBearer(w http.ResponseWriter, r *http.Request, v viewer) {
	s.revokeToken(w, r, v, true)
}

func (s *Server) revokeAccessToken(w http.ResponseWriter, r *http.Request, v viewer) {
	s.revokeToken(w, r, v, false)
}

// revokeToken revokes the app's bearer or access token named by the form's
// ref, as `aviary admin bearer|token revoke` does, and tells the caches.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, v viewer, bearer bool) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	ctx := r.Context()
	token, err := s.store.AppTokenByRef(ctx, app.ID, bearer, r.PostFormValue("ref"))
	if errors.Is(err, storage.ErrNotFound) {
		s.renderApp(w, r, v, app, http.StatusNotFound, appData{Message: "That token is not one of this app's live tokens (revoked already?)."})
		return
	}
	if err == nil {
		if bearer {
			err = s.store.RevokeBearerToken(ctx, token)
		} else {
			err = s.store.RevokeAccessToken(ctx, token)
		}
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) { // not found: revoked concurrently
		s.kit.Fail(w, r, err)
		return
	}
	if bearer {
		s.notify(ctx, "bearer revoked", func(ctx context.Context) error { return call(s.cfg.Notify.BearerRevoked, ctx, token) })
		done(w, r, app, "bearer-revoked")
		return
	}
	s.notify(ctx, "access token revoked", func(ctx context.Context) error { return call(s.cfg.Notify.AccessTokenRevoked, ctx, token) })
	done(w, r, app, "token-revoked")
}

// call runs f(ctx, v) if f is set.
func call[T any](f func(context.Context, T) error, ctx context.Context, v T) error {
	if f == nil {
		return nil
	}
	return f(ctx, v)
}

// createAccessToken issues (or shows) the viewer's OAuth 1.0a access token
// for the app, as `aviary admin token create`.
func (s *Server) createAccessToken(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	level := r.PostFormValue("access")
	if level != storage.AccessRead && level != storage.AccessReadWrite {
		s.renderApp(w, r, v, app, http.StatusBadRequest, appData{Message: "Choose read or read-write access."})
		return
	}
	t, err := s.store.EnsureAccessToken(r.Context(), app.ID, v.User.ID, level)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusCreated, "secret", "", secretData{Base: s.base(&v, "Access token", "apps"), App: app,
		Heading: "OAuth 1.0a access token of @" + v.User.Username + " for " + app.Name + " (" + t.AccessLevel + ")",
		Secrets: []secretField{{"access-token", "Access token", t.Token}, {"access-token-secret", "Access token secret", t.Secret}}})
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	ctx := r.Context()
	id, _ := strconv.ParseInt(r.PostFormValue("grant"), 10, 64)
	err := s.store.RevokeOAuth2Grant(ctx, app.ID, id, s.cfg.Now())
	if errors.Is(err, storage.ErrNotFound) {
		s.renderApp(w, r, v, app, http.StatusNotFound, appData{Message: "That grant is not one of this app's live grants (revoked already?)."})
		return
	}
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	s.notify(ctx, "OAuth 2.0 grant revoked", s.cfg.Notify.OAuth2Revoked)
	done(w, r, app, "grant-revoked")
}

func (s *Server) addCallback(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	u := strings.TrimSpace(r.PostFormValue("callback"))
	if err := oauth.CheckCallback(u); err != nil || !utf8.ValidString(u) || strings.ContainsRune(u, 0) {
		msg := "That callback URL is not valid."
		if err != nil {
			msg = "That callback URL is not valid: " + err.Error() + "."
		}
		s.renderApp(w, r, v, app, http.StatusBadRequest, appData{Message: msg, CallbackForm: u})
		return
	}
	if err := s.store.AddCallbackURL(r.Context(), app.ID, u); err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	done(w, r, app, "callback-added")
}

func (s *Server) removeCallback(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	err := s.store.RemoveCallbackURL(r.Context(), app.ID, r.PostFormValue("callback"))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.kit.Fail(w, r, err)
		return
	}
	done(w, r, app, "callback-removed")
}
