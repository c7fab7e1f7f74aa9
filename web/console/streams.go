package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// EndStreams tells every API replica (this one included) to end the
// connections of app that ids names, which are marked for termination
// already: cmd wires the stream hub's Terminate, the control DELETE
// /2/connections publishes on the Redis bus.
type EndStreams func(ctx context.Context, appID int64, connIDs []string) error

// streamListSize is how many open connections the page shows.
const streamListSize = 200

// streamsData is the streaming connections page's.
type streamsData struct {
	Base
	Conns []streamRow
	Flash string
}

type streamRow struct {
	storage.StreamConnection
	AppName string
}

// streamsPage lists the open streaming connections of the viewer's apps
// (an administrator's: every app's), on every API replica: the connection
// records each replica's hub keeps and renews.
func (s *Server) streamsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	names, err := s.appNames(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	conns, err := s.store.ConsoleStreamConnections(r.Context(), keys(names), v.Admin, streamListSize)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := streamsData{Base: s.base(&v, "Stream connections", "streams")}
	if k := r.URL.Query().Get("killed"); ids.IsUUID(k) {
		d.Flash = "Connection " + k + " is ending: its client gets the operational-disconnect error."
	}
	for _, c := range conns {
		d.Conns = append(d.Conns, streamRow{StreamConnection: c, AppName: appName(names, c.AppID)})
	}
	s.render(w, r, http.StatusOK, "streams", "", d)
}

// killStream ends an open connection of the path's visible {app} the way
// DELETE /2/connections does: the record is marked for termination and
// the hubs are told at once (the one holding it, on whichever replica,
// ends it with the operational-disconnect error, ForceDisconnect); a lost
// message is carried out by that hub's next heartbeat poll. Another app's
// or a closed connection is not found.
func (s *Server) killStream(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	id := strings.ToLower(r.PathValue("conn"))
	if !ids.IsUUID(id) {
		s.notFound(w, r, v)
		return
	}
	killed, err := s.store.RequestStreamTermination(r.Context(), storage.ConnectionTermination{AppID: app.ID, IDs: []string{id}})
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if len(killed) == 0 {
		s.problem(w, r, &v, http.StatusNotFound, "No such connection", "This connection is not open (it may have ended already), or it is not yours to end.")
		return
	}
	if s.cfg.EndStreams != nil {
		if err := s.cfg.EndStreams(r.Context(), app.ID, killed); err != nil {
			s.log.WarnContext(r.Context(), "console: announcing a stream termination failed; the holder's poll ends it", "error", err)
		}
	}
	s.log.InfoContext(r.Context(), "console: stream connection killed", "app_id", app.ID, "connection", id)
	http.Redirect(w, r, "/console/streams?killed="+id, http.StatusSeeOther)
}
