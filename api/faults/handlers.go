package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/faults"
)

// Path is where the faults endpoints are served.
const Path = "/_aviary/faults"

// maxBody caps a fault's JSON.
const maxBody = 16 << 10

// scope is who asks: an admin (any app) or one app.
type scope struct {
	admin bool
	app   int64
}

type scopeKey struct{}

// Handler serves /_aviary/faults and /_aviary/faults/{id}: an admin with
// basic auth (Deps.Admin) or an app with its bearer token.
func (m *Module) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+Path, m.adapt(m.create))
	mux.Handle("GET "+Path, m.adapt(m.list))
	mux.Handle("DELETE "+Path, m.adapt(m.clear))
	mux.Handle("GET "+Path+"/{id}", m.adapt(m.get))
	mux.Handle("DELETE "+Path+"/{id}", m.adapt(m.delete))
	mux.Handle("/", m.adapt(func(w http.ResponseWriter, r *http.Request) error {
		return apierr.RouteNotFound(r.URL.Path)
	}))
	asApp := m.Auth.Middleware(auth.BearerOnly)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := httpx.Principal(r)
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope{app: p.App.ID})))
	}))
	var asAdmin http.Handler
	if m.Admin != nil {
		asAdmin = m.Admin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope{admin: true})))
		}))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asAdmin != nil && strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "basic ") {
			asAdmin.ServeHTTP(w, r)
			return
		}
		asApp.ServeHTTP(w, r)
	})
}

func (m *Module) adapt(h httpx.HandlerFunc) http.Handler { return httpx.Adapt(m.Errors, m.Logger, h) }

func scopeOf(r *http.Request) scope {
	s, _ := r.Context().Value(scopeKey{}).(scope)
	return s
}

// createRequest is the body of POST /_aviary/faults.
type createRequest struct {
	// AppID names the app (admin only; an app's faults are its own).
	AppID       string        `json:"app_id"`
	Match       faults.Match  `json:"match"`
	Effect      faults.Effect `json:"effect"`
	Probability float64       `json:"probability"`
	Count       int64         `json:"count"`
	// ExpiresInSeconds (or ExpiresAt) ends the fault.
	ExpiresInSeconds int       `json:"expires_in_seconds"`
	ExpiresAt        time.Time `json:"expires_at"`
}

type one struct {
	Data faults.Fault `json:"data"`
}

type many struct {
	Data []faults.Fault `json:"data"`
	Meta struct {
		ResultCount int `json:"result_count"`
	} `json:"meta"`
}

// create answers POST /_aviary/faults: 201 with the fault.
func (m *Module) create(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return invalidRequest("body", "The request body is not a fault: "+err.Error())
	}
	f, err := m.fault(req, scopeOf(r))
	if err != nil {
		return err
	}
	f, err = m.Store.Create(r.Context(), f)
	if err != nil {
		return fmt.Errorf("create fault: %w", err)
	}
	m.Reload(r.Context())
	return httpx.WriteJSON(w, http.StatusCreated, one{Data: f})
}

// fault builds the fault a request asks for in the caller's scope.
func (m *Module) fault(req createRequest, s scope) (faults.Fault, error) {
	f := faults.Fault{AppID: s.app, Match: req.Match, Effect: req.Effect, Probability: req.Probability, Count: req.Count,
		ExpiresAt: req.ExpiresAt}
	if req.AppID != "" {
		id, err := strconv.ParseInt(req.AppID, 10, 64)
		if err != nil || id <= 0 {
			return f, invalidRequest("app_id", "app_id must be an app's id")
		}
		if !s.admin && id != s.app {
			return f, apierr.Forbidden("An app may set faults for its own requests only.")
		}
		f.AppID = id
	}
	if req.ExpiresInSeconds < 0 {
		return f, invalidRequest("expires_in_seconds", "expires_in_seconds must not be negative")
	}
	if req.ExpiresInSeconds > 0 {
		f.ExpiresAt = m.Clock().Add(time.Duration(req.ExpiresInSeconds) * time.Second).UTC().Truncate(time.Second)
	}
	if err := f.Normalize(); err != nil {
		return f, invalidRequest("effect", strings.TrimPrefix(err.Error(), faults.ErrInvalid.Error()+": "))
	}
	return f, nil
}

// list answers GET /_aviary/faults: the caller's faults (an admin's: all,
// or one app's with ?app_id=), each with its hits.
func (m *Module) list(w http.ResponseWriter, r *http.Request) error {
	s, err := m.listScope(r)
	if err != nil {
		return err
	}
	all, err := m.Store.List(r.Context())
	if err != nil {
		return fmt.Errorf("list faults: %w", err)
	}
	var out many
	out.Data = []faults.Fault{}
	for _, f := range all {
		if visible(f, s) {
			out.Data = append(out.Data, f)
		}
	}
	out.Meta.ResultCount = len(out.Data)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// listScope narrows an admin's list or clear to ?app_id= when given.
func (m *Module) listScope(r *http.Request) (scope, error) {
	s := scopeOf(r)
	raw := r.URL.Query().Get("app_id")
	if raw == "" {
		return s, nil
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return s, invalidRequest("app_id", "app_id must be an app's id")
	}
	if !s.admin && id != s.app {
		return s, apierr.Forbidden("An app sees its own faults only.")
	}
	return scope{app: id}, nil
}

// visible reports whether the caller in s sees (and may delete) f.
func visible(f faults.Fault, s scope) bool { return s.admin || f.AppID == s.app }

// get answers GET /_aviary/faults/{id}.
func (m *Module) get(w http.ResponseWriter, r *http.Request) error {
	f, err := m.find(r)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, one{Data: f})
}

// find is the fault of the path, if the caller sees it.
func (m *Module) find(r *http.Request) (faults.Fault, error) {
	id := r.PathValue("id")
	all, err := m.Store.List(r.Context())
	if err != nil {
		return faults.Fault{}, fmt.Errorf("read fault %s: %w", id, err)
	}
	for _, f := range all {
		if f.ID == id && visible(f, scopeOf(r)) {
			return f, nil
		}
	}
	return faults.Fault{}, apierr.NotFound("fault", "id", id)
}

// delete answers DELETE /_aviary/faults/{id}.
func (m *Module) delete(w http.ResponseWriter, r *http.Request) error {
	f, err := m.find(r)
	if err != nil {
		return err
	}
	if _, err := m.Store.Delete(r.Context(), f.ID); err != nil {
		return fmt.Errorf("delete fault %s: %w", f.ID, err)
	}
	m.Reload(r.Context())
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]bool{"deleted": true}})
}

// clear answers DELETE /_aviary/faults: an app's faults, or (admin) all of
// them or one app's with ?app_id=.
func (m *Module) clear(w http.ResponseWriter, r *http.Request) error {
	s, err := m.listScope(r)
	if err != nil {
		return err
	}
	app := s.app
	if s.admin {
		app = 0
	}
	n, err := m.Store.Clear(r.Context(), app)
	if err != nil {
		return fmt.Errorf("clear faults: %w", err)
	}
	m.Reload(r.Context())
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]int{"deleted": n}})
}

func invalidRequest(param, msg string) error { return apierr.InvalidParam(param, msg) }
