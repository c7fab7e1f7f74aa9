package adsx

import (
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// single is the one-object envelope.
type single struct {
	Request request `json:"request"`
	Data    any     `json:"data"`
}

type request struct {
	Params map[string]any `json:"params"`
}

// list is the list envelope; total_count only when asked for.
type list[R any] struct {
	Request    request `json:"request"`
	Data       []R     `json:"data"`
	NextCursor *string `json:"next_cursor"`
	TotalCount *int64  `json:"total_count,omitempty"`
}

// WriteData answers {request:{params}, data} with status.
func WriteData(w http.ResponseWriter, p *Params, status int, data any) error {
	return httpx.WriteJSON(w, status, single{Request: request{Params: p.Echo()}, Data: data})
}

// WriteList answers one page: {request, data, next_cursor, total_count?},
// each item rendered by render.
func WriteList[T, R any](w http.ResponseWriter, k Kit, p *Params, page storage.Page[T], render func(T) R) error {
	out := list[R]{Request: request{Params: p.Echo()}, Data: make([]R, 0, len(page.Items)), TotalCount: page.Total}
	for _, it := range page.Items {
		out.Data = append(out.Data, render(it))
	}
	if page.Next != nil {
		c := k.Cursors.encode(*page.Next, p.fingerprint)
		out.NextCursor = &c
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// TimeFormat is how ads timestamps are rendered: ISO 8601 UTC, seconds.
const TimeFormat = "2006-01-02T15:04:05Z"

// Time renders t in TimeFormat.
func Time(t time.Time) string { return t.UTC().Format(TimeFormat) }

// OptTime renders an optional time (nil stays null).
func OptTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}
