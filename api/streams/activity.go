package streams

import (
	"context"
	"net/http"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// activityRoutes is GET /2/activity/stream (docs/activity.md, "Events and
// delivery"): an app-only bearer's persistent stream of its activity
// subscriptions' events, one envelope a line.
func (m *Module) activityRoutes() []httpx.Endpoint {
	return []httpx.Endpoint{{
		Pattern: "GET /2/activity/stream",
		Auth:    auth.BearerOnly,
		Limit:   httpx.Limit{Name: "activity_stream", Requests: 50, Scope: httpx.PerApp},
		Query:   []string{"backfill_minutes", "start_time", "end_time"},
		Handle:  m.activityStream,
	}}
}

// activityStream answers GET /2/activity/stream: a connection record under
// the app's limit for activity_stream (TooManyConnections over it), then
// each activity event the hub routes to the app as one JSON line, "\r\n"
// when idle, until the client goes, the hub ends it (termination through
// the connections endpoints, shutdown) or a write fails. The backfill
// parameters are checked and refused when used: Aviary does not backfill
// the activity stream yet (docs/activity.md).
func (m *Module) activityStream(w http.ResponseWriter, r *http.Request) error {
	if err := checkActivityBackfill(r); err != nil {
		return err
	}
	return m.open(w, r, storage.EndpointActivityStream, func(ctx context.Context, s *streamWriter, conn *Conn) (string, error) {
		return m.serve(ctx, s, conn, render.Options{}, 0)
	})
}

// checkActivityBackfill checks backfill_minutes (0 to 5), start_time and
// end_time as the platform types them, then refuses a backfill asked for
// (backfill_minutes above 0, a start_time or an end_time): the activity
// stream is live only for now, and a client told so does not wait for
// events that will not come.
func checkActivityBackfill(r *http.Request) error {
	q := httpx.ReadQuery(r)
	backfill := q.Int("backfill_minutes", 0, MaxBackfillMinutes, 0)
	_, start := q.Time("start_time")
	_, end := q.Time("end_time")
	if err := q.Err(); err != nil {
		return err
	}
	for _, p := range []struct {
		name  string
		asked bool
	}{{"backfill_minutes", backfill > 0}, {"start_time", start}, {"end_time", end}} {
		if p.asked {
			q.Fail(p.name, "The `"+p.name+"` query parameter is not supported by this server's activity stream yet (live events only).", q.Raw(p.name))
		}
	}
	return q.Err()
}
