package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/validation"
)

// ErrResponseStarted marks failures after the status line was sent; Adapt
// only logs them. Wrap it (with the cause) in such errors.
var ErrResponseStarted = errors.New("response already started")

// jsonContentType is the Content-Type header value of every JSON answer,
// one slice shared by them all (the header map takes it as is: nothing
// modifies a header value in place), so an answer does not allocate it.
var jsonContentType = []string{"application/json; charset=utf-8"}

// WriteJSON sends body as the JSON response with status.
func WriteJSON(w http.ResponseWriter, status int, body any) error {
	observe(w, status, body)
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return fmt.Errorf("encode response: %w: %w", ErrResponseStarted, err)
	}
	return nil
}

// TimeFormat is how the platform renders timestamps: UTC, milliseconds
// (render.TimeFormat, shared with the worker tier).
const TimeFormat = render.TimeFormat

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return render.FormatTime(t) }

// FormatID renders a core id as the API shows it (a decimal string).
func FormatID(id int64) string { return ids.Format(id) }

// Principal returns the authenticated caller. Every Endpoint is mounted
// behind its auth.Requirement, so its absence is a wiring bug (panic).
func Principal(r *http.Request) auth.Principal {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		panic("httpx: endpoint served without authentication")
	}
	return p
}

// PathID parses the path value name as a core id.
func PathID(r *http.Request, name string) (int64, error) {
	raw := r.PathValue(name)
	id, ok := validation.ParseID(raw)
	if !ok {
		return 0, FieldErrors([]validation.FieldError{validation.PathIDError(name, raw)})
	}
	return id, nil
}
