package streams

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// connectionFields are the fields of a Connection object.
var connectionFields = []string{"client_ip", "connected_at", "disconnect_reason", "disconnected_at", "endpoint_name", "id"}

// maxKillUUIDs is how many UUIDs DELETE /2/connections takes.
const maxKillUUIDs = 100

func (m *Module) connectionRoutes() []httpx.Endpoint {
	limit := httpx.Limit{Name: "connections", Requests: 50, Scope: httpx.PerApp}
	return []httpx.Endpoint{
		{
			Pattern: "GET /2/connections",
			Auth:    auth.BearerOnly,
			Limit:   limit,
			Query:   []string{"status", "endpoints", "max_results", "pagination_token", "connection.fields"},
			Handle:  m.listConnections,
		},
		{
			Pattern: "DELETE /2/connections/all",
			Auth:    auth.BearerOnly,
			Limit:   limit,
			Handle:  m.killAll,
		},
		{
			Pattern: "DELETE /2/connections/{endpoint_id}",
			Auth:    auth.BearerOnly,
			Limit:   limit,
			Handle:  m.killEndpoint,
		},
		{
			Pattern: "DELETE /2/connections",
			Auth:    auth.BearerOnly,
			Limit:   limit,
			Body:    httpx.JSONBody(httpx.DefaultMaxBody),
			Handle:  m.killByIDs,
		},
	}
}

// connection is a Connection object; only the fields asked for are set.
type connection struct {
	ID               string `json:"id"`
	EndpointName     string `json:"endpoint_name,omitempty"`
	ClientIP         string `json:"client_ip,omitempty"`
	ConnectedAt      string `json:"connected_at,omitempty"`
	DisconnectedAt   string `json:"disconnected_at,omitempty"`
	DisconnectReason string `json:"disconnect_reason,omitempty"`
}

type connectionsMeta struct {
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

type connectionsResponse struct {
	Data []connection    `json:"data,omitempty"`
	Meta connectionsMeta `json:"meta"`
}

// listConnections answers GET /2/connections: the app's connections,
// newest first, active ones by default.
func (m *Module) listConnections(w http.ResponseWriter, r *http.Request) error {
	q := httpx.ReadQuery(r)
	lq := storage.ConnectionQuery{
		AppID:     httpx.Principal(r).App.ID,
		Status:    q.Enum("status", []string{storage.ConnectionsActive, storage.ConnectionsInactive, storage.ConnectionsAll}, storage.ConnectionsActive),
		Endpoints: q.List("endpoints", storage.StreamEndpoints),
		Limit:     q.Int("max_results", 1, 100, 10),
	}
	if tok, ok := q.String("pagination_token"); ok {
		if !ids.IsUUID(tok) {
			q.Fail("pagination_token", "The `pagination_token` query parameter value ["+tok+"] is not a token this endpoint gave out", tok)
		}
		lq.After = strings.ToLower(tok)
	}
	fields := q.List("connection.fields", connectionFields)
	if err := q.Err(); err != nil {
		return err
	}
	want := lq.Limit
	lq.Limit++
	list, err := m.Store.StreamConnections(r.Context(), lq)
	if err != nil {
		return err
	}
	out := connectionsResponse{}
	if len(list) > want {
		list = list[:want]
		out.Meta.NextToken = list[want-1].ID
	}
	for _, c := range list {
		out.Data = append(out.Data, renderConnection(c, fields))
	}
	out.Meta.ResultCount = len(out.Data)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// renderConnection shows c with fields (every field when none is named).
func renderConnection(c storage.StreamConnection, fields []string) connection {
	has := func(f string) bool { return len(fields) == 0 || slices.Contains(fields, f) }
	out := connection{ID: c.ID}
	if has("endpoint_name") {
		out.EndpointName = c.Endpoint
	}
	if has("client_ip") {
		out.ClientIP = c.ClientIP
	}
	if has("connected_at") {
		out.ConnectedAt = httpx.FormatTime(c.ConnectedAt)
	}
	if has("disconnected_at") && c.DisconnectedAt != nil {
		out.DisconnectedAt = httpx.FormatTime(*c.DisconnectedAt)
	}
	if has("disconnect_reason") {
		out.DisconnectReason = c.DisconnectReason
	}
	return out
}

// killResult is one connection of a termination answer.
type killResult struct {
	UUID         string `json:"uuid"`
	Success      bool   `json:"success"`
	ErrorMessage string `json:"error_message,omitempty"`
}

type killData struct {
	SuccessfulKills int          `json:"successful_kills"`
	FailedKills     int          `json:"failed_kills"`
	Results         []killResult `json:"results"`
}

type killResponse struct {
	Data killData `json:"data"`
}

// killAll answers DELETE /2/connections/all.
func (m *Module) killAll(w http.ResponseWriter, r *http.Request) error {
	return m.kill(w, r, storage.ConnectionTermination{AppID: httpx.Principal(r).App.ID}, nil)
}

// killEndpoint answers DELETE /2/connections/{endpoint_id}.
func (m *Module) killEndpoint(w http.ResponseWriter, r *http.Request) error {
	endpoint := r.PathValue("endpoint_id")
	if !slices.Contains(storage.StreamEndpoints, endpoint) {
		return apierr.InvalidParam("endpoint_id", "The `endpoint_id` path parameter value ["+endpoint+"] is not one of "+joinQuoted(storage.StreamEndpoints), endpoint)
	}
	return m.kill(w, r, storage.ConnectionTermination{AppID: httpx.Principal(r).App.ID, Endpoint: endpoint}, nil)
}

type killRequest struct {
	UUIDs []string `json:"uuids" validate:"required,min=1,max=100,dive,required"`
}

// killByIDs answers DELETE /2/connections {"uuids": [...]}: a result per
// UUID, failed for those that are not open connections of the app.
func (m *Module) killByIDs(w http.ResponseWriter, r *http.Request) error {
	var req killRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	ids := make([]string, len(req.UUIDs)) // UUIDs are case-insensitive; the records' are lower case
	for i, u := range req.UUIDs {
		ids[i] = strings.ToLower(u)
	}
	return m.kill(w, r, storage.ConnectionTermination{AppID: httpx.Principal(r).App.ID, IDs: ids}, req.UUIDs)
}

// kill marks the connections t selects for termination, tells every
// replica, and answers with the count; asked lists the UUIDs named (those
// not killed fail).
func (m *Module) kill(w http.ResponseWriter, r *http.Request, t storage.ConnectionTermination, asked []string) error {
	killed, err := m.Store.RequestStreamTermination(r.Context(), t)
	if err != nil {
		return err
	}
	if len(killed) > 0 && m.Hub != nil {
		// The control names the records marked, not t's criteria: a stream
		// opened since the marking is not one this request ended.
		m.publish(r.Context(), bus.Control{AppID: t.AppID, Endpoint: t.Endpoint, ConnectionIDs: killed})
	}
	data := killData{Results: []killResult{}}
	for _, id := range killed {
		data.Results = append(data.Results, killResult{UUID: id, Success: true})
	}
	for _, id := range asked {
		if !slices.Contains(killed, strings.ToLower(id)) {
			data.Results = append(data.Results, killResult{UUID: id, ErrorMessage: "No active connection with this UUID."})
		}
	}
	data.SuccessfulKills = len(killed)
	data.FailedKills = len(data.Results) - len(killed)
	return httpx.WriteJSON(w, http.StatusOK, killResponse{Data: data})
}

// publish tells every replica at once; a failure is only logged, as each
// replica's poll finds the marked records within seconds.
func (m *Module) publish(ctx context.Context, c bus.Control) {
	if err := m.Hub.Terminate(ctx, c); err != nil {
		m.Logger.Warn("connections: publishing the termination failed; replicas will find it by polling", "err", err)
	}
}

func joinQuoted(list []string) string {
	out := "["
	for i, s := range list {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out + "]"
}
