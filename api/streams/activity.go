package streams

import (
	"context"
	"fmt"
	"net/http"
	"time"

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
// the app's limit for activity_stream (TooManyConnections over it), the
// backfill asked for (backfill_minutes or start_time: what the activity
// stream of Redis still holds of the app's events since then), then each
// activity event the hub routes to the app as one JSON line, "\r\n" when
// idle, until the client goes, the hub ends it (termination through the
// connections endpoints, shutdown) or a write fails.
func (m *Module) activityStream(w http.ResponseWriter, r *http.Request) error {
	since, err := m.activityBackfillSince(r)
	if err != nil {
		return err
	}
	return m.open(w, r, storage.EndpointActivityStream, func(ctx context.Context, s *streamWriter, conn *Conn) (string, error) {
		if !since.IsZero() {
			floor, err := m.activityBackfill(ctx, s, conn.AppID, since)
			if err != nil {
				return m.failed(ctx, s, err)
			}
			conn.floor = floor
		}
		return m.serve(ctx, s, conn, render.Options{}, 0)
	})
}

// activityBackfillSince reads backfill_minutes (0 to 5) and start_time
// (RFC 3339, not with backfill_minutes, at most MaxBackfillMinutes before
// the request, as backfill_minutes is: the backfill reads the Redis stream
// of every app, so its reach is bounded) and returns the time the backfill
// starts at (zero: none). end_time is checked and refused: the stream is
// open-ended (docs/activity.md).
func (m *Module) activityBackfillSince(r *http.Request) (time.Time, error) {
	q := httpx.ReadQuery(r)
	minutes := q.Int("backfill_minutes", 0, MaxBackfillMinutes, 0)
	start, hasStart := q.Time("start_time")
	_, hasEnd := q.Time("end_time")
	if err := q.Err(); err != nil {
		return time.Time{}, err
	}
	switch {
	case hasEnd:
		q.Fail("end_time", "The `end_time` query parameter is not supported by this server's activity stream (it is open-ended).", q.Raw("end_time"))
	case hasStart && minutes > 0:
		q.Fail("start_time", "The `start_time` and `backfill_minutes` query parameters can not be used together.", q.Raw("start_time"))
	case hasStart && start.Before(m.Clock().Add(-MaxBackfillMinutes*time.Minute)):
		q.Fail("start_time", fmt.Sprintf("The `start_time` query parameter value [%s] is more than %d minutes before the request.",
			q.Raw("start_time"), MaxBackfillMinutes), q.Raw("start_time"))
	case hasStart:
		return start, nil
	case minutes > 0:
		return m.Clock().Add(-time.Duration(minutes) * time.Minute), nil
	}
	return time.Time{}, q.Err()
}

// activityBackfill writes the app's activity events published to the
// activity stream since since, oldest first, and returns the (seq,
// subscription) of the last one written: the live deliveries up to it,
// queued meanwhile, are skipped.
func (m *Module) activityBackfill(ctx context.Context, s *streamWriter, app int64, since time.Time) ([2]int64, error) {
	var floor [2]int64
	after := ""
	for {
		ds, err := m.Hub.Bus.ActivitySince(ctx, since, after, backfillBatch)
		if err != nil {
			return floor, fmt.Errorf("activity backfill: %w", err)
		}
		for _, d := range ds {
			after = d.StreamID
			a := d.Activity
			if a.AppID != app || a.Seq == 0 || !beyond(floor, a.Seq, a.SubscriptionID) {
				continue // another app's, or a re-offered batch's repeat
			}
			if err := s.write(append(append(make([]byte, 0, len(a.Body)+2), a.Body...), '\r', '\n')); err != nil {
				return floor, err
			}
			floor = [2]int64{a.Seq, a.SubscriptionID}
		}
		if len(ds) < backfillBatch {
			return floor, nil
		}
	}
}
