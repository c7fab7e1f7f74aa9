// Package inspect serves Aviary's side-effect-free inspection endpoints
// under /_aviary/ (docs/aviary-endpoints.md): what a test suite wants to
// see of the server's state that the platform's API does not show. Each
// answers the calling app's records only.
package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
)

// Store is the record access of the inspection endpoints
// (storage/postgres.DB).
type Store interface {
	AppEventsAfter(ctx context.Context, appID, after int64, typePrefix string, limit int) ([]events.Event, error)
}

// Module is the inspection feature.
type Module struct {
	Store Store
}

// New builds the module.
func New(st Store) *Module { return &Module{Store: st} }

// Page sizes of GET /_aviary/events.
const (
	defaultPage = 100
	maxPage     = 1000
)

// Routes lists the inspection endpoints: app-only bearer token, 900 reads
// per 15 minutes per app (a test polls them).
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET /_aviary/events", Auth: auth.BearerOnly, Query: []string{"since_seq", "type", "max_results", "pagination_token"},
			Limit: httpx.Limit{Name: "aviary_events", Requests: 900, Scope: httpx.PerApp}, Response: eventsPage{}, Handle: m.events},
	}
}

// event is one log event as /_aviary/events shows it.
type event struct {
	Seq       string          `json:"seq"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	UserID    string          `json:"user_id,omitempty"`
	SubjectID string          `json:"subject_id,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

type eventsMeta struct {
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

type eventsPage struct {
	Data []event    `json:"data"`
	Meta eventsMeta `json:"meta"`
}

// events answers GET /_aviary/events: the events of the event log that the
// calling app's requests appended, oldest first, after since_seq (or the
// page before's next_token, the last seq it held), of the types starting
// with type when given ("post." or "like.create").
func (m *Module) events(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	q := httpx.ReadQuery(r)
	after := q.ID("since_seq")
	if tok, ok := q.String("pagination_token"); ok {
		seq, err := strconv.ParseInt(tok, 10, 64)
		if err != nil || seq < 0 {
			q.Fail("pagination_token", "The `pagination_token` query parameter value ["+tok+"] is not a token this endpoint gave out", tok)
		}
		after = max(after, seq)
	}
	prefix, _ := q.String("type")
	limit := q.Int("max_results", 1, maxPage, defaultPage)
	if err := q.Err(); err != nil {
		return err
	}
	evs, err := m.Store.AppEventsAfter(r.Context(), app.ID, after, prefix, limit)
	if err != nil {
		return fmt.Errorf("inspect events of app %d: %w", app.ID, err)
	}
	page := eventsPage{Data: make([]event, 0, len(evs)), Meta: eventsMeta{ResultCount: len(evs)}}
	for _, e := range evs {
		page.Data = append(page.Data, event{Seq: e.ID(), Type: string(e.Type), CreatedAt: render.FormatTime(e.CreatedAt),
			UserID: optionalID(e.UserID), SubjectID: optionalID(e.SubjectID), Payload: e.Payload})
	}
	if len(evs) == limit {
		page.Meta.NextToken = evs[len(evs)-1].ID()
	}
	return httpx.WriteJSON(w, http.StatusOK, page)
}

// optionalID is id in decimal, "" for 0.
func optionalID(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}
