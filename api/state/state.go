// Package state serves POST /_aviary/state/reset (docs/state.md): the
// operator's reset of the sandbox's records, behind the admin guard
// (api/admin). What a reset removes is the Resetter's business; the
// command wires storage/postgres with the Redis state and the Clearers of
// other features (faults, usage counters).
package state

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
)

// Surfaces a reset can name; "all" (or none) means every one.
var Surfaces = []string{"core", "ads", "events"}

// Result is the answer of a reset.
type Result struct {
	// Surfaces are the surfaces reset.
	Surfaces []string `json:"surfaces"`
	// Removed counts the rows removed per table (tables that lost none
	// are left out).
	Removed map[string]int64 `json:"removed"`
	// Cleared names the state outside the database that was cleared
	// (rate limits, faults, usage counters: each Clearer's Name).
	Cleared []string `json:"cleared"`
}

// Resetter resets the state of the given surfaces (all of them when
// surfaces holds "all"); the names are checked by Handler.
type Resetter interface {
	ResetState(ctx context.Context, surfaces []string) (Result, error)
}

// Clearer is state kept outside the database that a reset of one of its
// Surfaces (nil: any) clears: rate-limit counters, the faults of
// /_aviary/faults, usage counters and credits. Features outside this
// package register theirs in cmd/aviary (stateClearers) without this
// package importing them.
type Clearer struct {
	Name     string
	Surfaces []string
	Clear    func(ctx context.Context) error
}

// Applies reports whether a reset of surfaces clears c.
func (c Clearer) Applies(surfaces []string) bool {
	if len(c.Surfaces) == 0 {
		return true
	}
	for _, s := range c.Surfaces {
		if slices.Contains(surfaces, s) {
			return true
		}
	}
	return false
}

// Normalize checks surface names and expands "all" (or none) to every
// surface, sorted.
func Normalize(names []string) ([]string, error) {
	if len(names) == 0 || slices.Contains(names, "all") {
		return slices.Clone(Surfaces), nil
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(Surfaces, n) {
			return nil, apierr.InvalidParam("surfaces", "The surface "+n+" is not one of "+strings.Join(Surfaces, ", ")+" or all.", n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// maxBody bounds the request body.
const maxBody = 4 << 10

type request struct {
	Surfaces []string `json:"surfaces"`
}

// Handler answers POST /_aviary/state/reset: an optional JSON body
// {"surfaces": [...]}; 200 with {"data": Result}.
func Handler(r Resetter, errs apierr.Writer, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		surfaces, err := readSurfaces(req)
		if err == nil {
			var res Result
			if res, err = r.ResetState(req.Context(), surfaces); err == nil {
				log.InfoContext(req.Context(), "state reset", "surfaces", res.Surfaces, "removed", res.Removed, "cleared", res.Cleared)
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				_ = json.NewEncoder(w).Encode(map[string]Result{"data": res})
				return
			}
			log.ErrorContext(req.Context(), "state reset failed", "err", err)
		}
		errs.Write(w, req, err)
	})
}

func readSurfaces(req *http.Request) ([]string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, req.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierr.PayloadTooLarge(maxBody)
		}
		return nil, apierr.InvalidParam("body", "The request body could not be read.")
	}
	var in request
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, apierr.InvalidParam("body", "The body must be a JSON object like {\"surfaces\": [\"core\"]}.")
		}
	}
	return Normalize(in.Surfaces)
}
