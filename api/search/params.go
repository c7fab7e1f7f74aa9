package search

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/searchquery"
)

// firstPost is the platform's earliest start_time.
var firstPost = time.Date(2006, 3, 21, 0, 0, 1, 0, time.UTC)

// endMargin is how far before the request end_time must lie, as on the
// platform (the newest seconds are still being indexed there).
const endMargin = 10 * time.Second

// window is the part of the archive a request covers.
type window struct {
	query            *searchquery.Query
	start, end       time.Time
	sinceID, untilID int64
	token            string
}

// parseWindow reads the parameters search and counts share: query,
// start_time, end_time, since_id, until_id and the page token, recording
// every problem in q, naming its parameter. A missing query is answered
// alone, as a missing parameter.
func parseWindow(q *httpx.Query, a archive, now time.Time) (window, error) {
	var w window
	raw := q.Required("query")
	if raw == "" {
		return w, q.Err()
	}
	parsed, err := searchquery.ParseSearch(raw, a.name, a.maxQuery)
	var refused *searchquery.Refusal
	switch {
	case errors.As(err, &refused):
		q.Fail("query", refused.Detail, raw)
	case err != nil:
		return w, fmt.Errorf("parse query: %w", err)
	default:
		w.query = parsed
	}
	w.start, w.end = parseTimes(q, a, now)
	w.sinceID = q.ID("since_id")
	w.untilID = q.ID("until_id")
	if w.sinceID != 0 && w.untilID != 0 && w.sinceID >= w.untilID {
		q.Fail("since_id", fmt.Sprintf("Invalid 'since_id':'%d'. 'since_id' must be smaller than 'until_id' (%d).", w.sinceID, w.untilID), q.Raw("since_id"))
	}
	w.token = tokenParam(q)
	return w, nil
}

// Settle is how long before the request a window without end_time ends.
// A post's id is taken when its transaction starts and is visible when it
// commits, so ids commit slightly out of order; leaving out the last
// moments means a client polling with since_id=<newest_id> never skips a
// post that committed after a newer one (the platform has a margin too).
const Settle = 2 * time.Second

// parseTimes reads start_time and end_time. Without end_time a request
// reaches up to Settle before now; an explicit end_time keeps the
// platform's rule of lying endMargin before the request. Without
// start_time the window is the archive's default one before the end,
// never reaching before the archive does.
func parseTimes(q *httpx.Query, a archive, now time.Time) (start, end time.Time) {
	earliest := firstPost
	if a.window > 0 {
		earliest = now.Add(-a.window)
	}
	end = now.Add(-Settle)
	endOK := true
	if t, ok := q.Time("end_time"); ok {
		if raw := q.Raw("end_time"); t.After(now.Add(-endMargin)) {
			q.Fail("end_time", fmt.Sprintf("Invalid 'end_time':'%s'. 'end_time' must be a minimum of %d seconds prior to the request time.", raw, int(endMargin.Seconds())), raw)
			endOK = false
		} else {
			end = t
		}
	} else if q.Has("end_time") {
		endOK = false
	}
	start = end.Add(-a.defaultWindow)
	if start.Before(earliest) {
		start = earliest
	}
	raw := q.Raw("start_time")
	t, ok := q.Time("start_time")
	switch {
	case !ok && q.Has("start_time"):
		return start, end
	case !ok:
	case t.Before(earliest):
		q.Fail("start_time", fmt.Sprintf("Invalid 'start_time':'%s'. 'start_time' must be on or after %s", raw, earliest.Format(time.RFC3339)), raw)
		return start, end
	default:
		start = t
	}
	switch {
	case end.After(start) || !endOK:
	case q.Has("end_time"):
		q.Fail("end_time", fmt.Sprintf("Invalid 'end_time':'%s'. 'end_time' must be after 'start_time' (%s).", q.Raw("end_time"), start.Format(time.RFC3339)), q.Raw("end_time"))
	default:
		q.Fail("start_time", fmt.Sprintf("Invalid 'start_time':'%s'. 'start_time' must be before the request time.", raw), raw)
	}
	return start, end
}

// tokenParam reads next_token or its alias pagination_token (both may be
// given only with the same value).
func tokenParam(q *httpx.Query) string {
	next, nextOK := q.String("next_token")
	pagination, paginationOK := q.String("pagination_token")
	switch {
	case nextOK && next == "":
		q.Fail("next_token", "The `next_token` query parameter can not be empty", next)
	case paginationOK && pagination == "":
		q.Fail("pagination_token", "The `pagination_token` query parameter can not be empty", pagination)
	case next != "" && pagination != "" && next != pagination:
		q.Fail("pagination_token", "Give `next_token` or `pagination_token`, not two different tokens", next, pagination)
	}
	if next != "" {
		return next
	}
	return pagination
}

// Page tokens are opaque to clients: base64url of "<kind>:<a>:<b>", the
// sort key and id a search page ended at, or the end of the counts page.
func encodeToken(kind string, a, b int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d", kind, a, b))
}

func decodeToken(raw, kind string, q *httpx.Query) (int64, int64) {
	bad := func() (int64, int64) {
		q.Fail("next_token", fmt.Sprintf("The `next_token` query parameter value [%s] is not a token this endpoint gave out", raw), raw)
		return 0, 0
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return bad()
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != kind {
		return bad()
	}
	x, err1 := strconv.ParseInt(parts[1], 10, 64)
	y, err2 := strconv.ParseInt(parts[2], 10, 64)
	// One spelling per token: leading zeros, a "+" sign or stray low bits
	// in the last base64 character would read as the same position.
	if err1 != nil || err2 != nil || y < 0 || encodeToken(kind, x, y) != raw {
		return bad()
	}
	return x, y
}
