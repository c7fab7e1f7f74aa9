package console

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/aviary-dev/aviary/domain/faults"
)

// Faults is the deployment's faults on demand (docs/faults.md): the store
// /_aviary/faults uses (storage/faultsredis), wired by cmd so the API's
// hook reads a change at once.
type Faults interface {
	List(ctx context.Context) ([]faults.Fault, error)
	Create(ctx context.Context, f faults.Fault) (faults.Fault, error)
	Delete(ctx context.Context, id string) (bool, error)
	Clear(ctx context.Context, appID int64) (int, error)
}

// faultsData is the faults page's.
type faultsData struct {
	Base
	Faults      []faultRow
	Apps        []appOption
	Kinds       []string
	Flash       string
	Error       string
	Unavailable bool
}

type faultRow struct {
	faults.Fault
	AppName string
}

type appOption struct {
	ID   int64
	Name string
}

// faultsPage lists the faults of the viewer's apps (an administrator's:
// every fault) with their hits, and the form to add one.
func (s *Server) faultsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderFaults(w, r, v, http.StatusOK, r.URL.Query().Get("flash"), "")
}

func (s *Server) renderFaults(w http.ResponseWriter, r *http.Request, v viewer, status int, flash, problem string) {
	d := faultsData{Base: s.base(&v, "Faults", "faults"), Kinds: faults.Kinds(), Flash: flash, Error: problem}
	names, err := s.appNames(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	for id, name := range names {
		d.Apps = append(d.Apps, appOption{ID: id, Name: name})
	}
	slices.SortFunc(d.Apps, func(a, b appOption) int { return strings.Compare(a.Name, b.Name) })
	if s.cfg.Faults == nil {
		d.Unavailable = true
		s.render(w, r, status, "faults", "", d)
		return
	}
	all, err := s.cfg.Faults.List(r.Context())
	if err != nil {
		s.log.WarnContext(r.Context(), "console: list faults", "error", err)
		d.Unavailable = true
	}
	for _, f := range all {
		name, ok := names[f.AppID]
		switch {
		case f.AppID == 0:
			name = "every app"
		case !ok:
			name = "app " + strconv.FormatInt(f.AppID, 10) // an administrator's view of an app made outside the console's list
		}
		if ok || v.Admin {
			d.Faults = append(d.Faults, faultRow{Fault: f, AppName: name})
		}
	}
	s.render(w, r, status, "faults", "", d)
}

// appNames are the viewer's apps by id.
func (s *Server) appNames(ctx context.Context, v viewer) (map[int64]string, error) {
	apps, err := s.visibleApps(ctx, v)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(apps))
	for _, a := range apps {
		out[a.ID] = a.Name
	}
	return out, nil
}

// faultFromForm builds the fault the form asks for, for one of the
// viewer's apps (an administrator may leave the app empty: every app).
func faultFromForm(r *http.Request, names map[int64]string, admin bool) (faults.Fault, error) {
	var f faults.Fault
	if raw := strings.TrimSpace(r.PostFormValue("app")); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if _, ok := names[id]; err != nil || !ok {
			return f, errors.New("choose one of your apps")
		}
		f.AppID = id
	} else if !admin {
		return f, errors.New("choose one of your apps")
	}
	f.Match.Method = strings.TrimSpace(r.PostFormValue("method"))
	f.Match.Route = strings.TrimSpace(r.PostFormValue("route"))
	f.Effect.Kind = faults.Kind(r.PostFormValue("type"))
	var err error
	if f.Effect.Kind == faults.Status {
		if f.Effect.Status, err = formInt(r, "status"); err != nil {
			return f, err
		}
	}
	if f.Effect.LatencyMS, err = formInt(r, "latency_ms"); err != nil {
		return f, err
	}
	if f.Effect.AfterMS, err = formInt(r, "after_ms"); err != nil {
		return f, err
	}
	count, err := formInt(r, "count")
	if err != nil {
		return f, err
	}
	f.Count = int64(count)
	if raw := strings.TrimSpace(r.PostFormValue("probability")); raw != "" {
		if f.Probability, err = strconv.ParseFloat(raw, 64); err != nil {
			return f, errors.New("probability must be a number above 0 and at most 1")
		}
	}
	if err := f.Normalize(); err != nil {
		return f, errors.New(strings.TrimPrefix(err.Error(), faults.ErrInvalid.Error()+": "))
	}
	return f, nil
}

// formInt is a whole number field; empty is 0.
func formInt(r *http.Request, name string) (int, error) {
	raw := strings.TrimSpace(r.PostFormValue(name))
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, errors.New(name + " must be a whole number")
	}
	return n, nil
}

// createFault adds a fault for one of the viewer's apps.
func (s *Server) createFault(w http.ResponseWriter, r *http.Request, v viewer) {
	if s.cfg.Faults == nil {
		s.renderFaults(w, r, v, http.StatusServiceUnavailable, "", "Faults are not available here.")
		return
	}
	names, err := s.appNames(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	f, err := faultFromForm(r, names, v.Admin)
	if err != nil {
		s.renderFaults(w, r, v, http.StatusBadRequest, "", "The fault was not added: "+err.Error()+".")
		return
	}
	f, err = s.cfg.Faults.Create(r.Context(), f)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/faults?flash="+urlQueryEscape("Fault "+f.ID+" added."), http.StatusSeeOther)
}

// deleteFault removes one fault of the viewer's apps (any, for an
// administrator); another user's fault is not found.
func (s *Server) deleteFault(w http.ResponseWriter, r *http.Request, v viewer) {
	if s.cfg.Faults == nil {
		s.notFound(w, r, v)
		return
	}
	names, err := s.appNames(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	all, err := s.cfg.Faults.List(r.Context())
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	id := r.PathValue("fault")
	i := slices.IndexFunc(all, func(f faults.Fault) bool { return f.ID == id })
	if i < 0 {
		s.notFound(w, r, v)
		return
	}
	if _, mine := names[all[i].AppID]; !v.Admin && !mine {
		s.notFound(w, r, v)
		return
	}
	if _, err := s.cfg.Faults.Delete(r.Context(), id); err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/faults?flash="+urlQueryEscape("Fault "+id+" deleted."), http.StatusSeeOther)
}

// clearFaults removes every fault of the viewer's apps; an administrator's
// clears every fault of the deployment.
func (s *Server) clearFaults(w http.ResponseWriter, r *http.Request, v viewer) {
	if s.cfg.Faults == nil {
		s.notFound(w, r, v)
		return
	}
	n := 0
	if v.Admin {
		c, err := s.cfg.Faults.Clear(r.Context(), 0)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		n = c
	} else {
		names, err := s.appNames(r.Context(), v)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		for id := range names {
			c, err := s.cfg.Faults.Clear(r.Context(), id)
			if err != nil {
				s.kit.Fail(w, r, err)
				return
			}
			n += c
		}
	}
	http.Redirect(w, r, "/console/faults?flash="+urlQueryEscape(strconv.Itoa(n)+" faults cleared."), http.StatusSeeOther)
}
