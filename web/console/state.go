package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// ResetResult is what a state reset did (api/state.Result, through cmd).
type ResetResult struct {
	Surfaces []string
	// Removed counts the rows removed, all tables together.
	Removed int64
	Cleared []string
}

// ResetState resets every surface of the sandbox, keeping the bootstrap
// app, user, ad account and their credentials: cmd wires the function
// `aviary admin reset` and POST /_aviary/state/reset run.
type ResetState func(ctx context.Context) (ResetResult, error)

// stateData is the state reset page's.
type stateData struct {
	Base
	Confirm     bool
	Flash       string
	Unavailable bool
}

// statePage offers the reset (administrators only; others: not found).
func (s *Server) statePage(w http.ResponseWriter, r *http.Request, v viewer) {
	if !v.Admin {
		s.notFound(w, r, v)
		return
	}
	d := stateData{Base: s.base(&v, "Sandbox state", "state"), Flash: r.URL.Query().Get("flash"),
		Confirm: r.URL.Query().Get("confirm") == "1", Unavailable: s.cfg.ResetState == nil}
	s.render(w, r, http.StatusOK, "state", "", d)
}

// resetState runs the reset once the administrator confirmed it (the
// confirm page's form carries confirm=reset); without it, the confirm
// page.
func (s *Server) resetState(w http.ResponseWriter, r *http.Request, v viewer) {
	if !v.Admin || s.cfg.ResetState == nil {
		s.notFound(w, r, v)
		return
	}
	if r.PostFormValue("confirm") != "reset" {
		http.Redirect(w, r, "/console/state?confirm=1", http.StatusSeeOther)
		return
	}
	res, err := s.cfg.ResetState(r.Context())
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	msg := "State reset (" + strings.Join(res.Surfaces, ", ") + "): " + strconv.FormatInt(res.Removed, 10) + " records removed"
	if len(res.Cleared) > 0 {
		msg += "; cleared " + strings.Join(res.Cleared, ", ")
	}
	http.Redirect(w, r, "/console/state?flash="+urlQueryEscape(msg+"."), http.StatusSeeOther)
}
