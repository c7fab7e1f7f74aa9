package search

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/validation"
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

// problems collects a request's parameter errors, so that all of them are
// answered at once.
type problems struct{ errs []apierr.ParamError }

func (p *problems) fail(param, msg string, values ...string) {
	p.errs = append(p.errs, apierr.Param(param, msg, values...))
}

// err is the invalid-request of the collected errors, nil when none.
func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return apierr.InvalidRequest(p.errs...)
}

// parseWindow reads the parameters search and counts share: query,
// start_time, end_time, since_id, until_id and the page token, reporting
// every problem to p, naming its parameter. A missing query is answered
// alone, as a missing parameter.
func parseWindow(q url.Values, a archive, now time.Time, p *problems) (window, error) {
	var w window
	raw := q.Get("query")
	if raw == "" {
		return w, apierr.MissingParam("query")
	}
	if n := utf8.RuneCountInString(raw); n > a.maxQuery {
		p.fail("query", fmt.Sprintf("The `query` query parameter is %d characters long; the %s search takes at most %d.", n, a.name, a.maxQuery), raw)
	} else if parsed, err := searchquery.Parse(raw); err != nil {
		var qe *searchquery.Error
		if !errors.As(err, &qe) {
			return w, fmt.Errorf("parse query: %w", err)
		}
		msg := "There were errors processing your request: " + qe.Reason
		if !strings.Contains(qe.Reason, "position") {
			msg += fmt.Sprintf(" (at position %d)", qe.Pos)
		}
		p.fail("query", msg, raw)
	} else {
		w.query = parsed
	}
	w.start, w.end = parseTimes(q, a, now, p)
	w.sinceID = idParam(q, "since_id", p)
	w.untilID = idParam(q, "until_id", p)
	if w.sinceID != 0 && w.untilID != 0 && w.sinceID >= w.untilID {
		p.fail("since_id", fmt.Sprintf("Invalid 'since_id':'%d'. 'since_id' must be smaller than 'until_id' (%d).", w.sinceID, w.untilID), q.Get("since_id"))
	}
	w.token = tokenParam(q, p)
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
func parseTimes(q url.Values, a archive, now time.Time, p *problems) (start, end time.Time) {
	earliest := firstPost
	if a.window > 0 {
		earliest = now.Add(-a.window)
	}
	end = now.Add(-Settle)
	endOK := true
	if v, ok, msg := timeParam(q, "end_time"); ok {
		switch {
		case msg != "":
			p.fail("end_time", msg, v.raw)
			endOK = false
		case v.t.After(now.Add(-endMargin)):
			p.fail("end_time", fmt.Sprintf("Invalid 'end_time':'%s'. 'end_time' must be a minimum of %d seconds prior to the request time.", v.raw, int(endMargin.Seconds())), v.raw)
			endOK = false
		default:
			end = v.t
		}
	}
	start = end.Add(-a.defaultWindow)
	if start.Before(earliest) {
		start = earliest
	}
	v, given, msg := timeParam(q, "start_time")
	switch {
	case !given:
	case msg != "":
		p.fail("start_time", msg, v.raw)
		return start, end
	case v.t.Before(earliest):
		p.fail("start_time", fmt.Sprintf("Invalid 'start_time':'%s'. 'start_time' must be on or after %s", v.raw, earliest.Format(time.RFC3339)), v.raw)
		return start, end
	default:
		start = v.t
	}
	switch {
	case end.After(start) || !endOK:
	case q.Has("end_time"):
		p.fail("end_time", fmt.Sprintf("Invalid 'end_time':'%s'. 'end_time' must be after 'start_time' (%s).", q.Get("end_time"), start.Format(time.RFC3339)), q.Get("end_time"))
	default:
		p.fail("start_time", fmt.Sprintf("Invalid 'start_time':'%s'. 'start_time' must be before the request time.", v.raw), v.raw)
	}
	return start, end
}

type timeValue struct {
	raw string
	t   time.Time
}

// timeParam reads an RFC 3339 time (YYYY-MM-DDTHH:mm:ssZ); msg says what is
// wrong with a malformed one.
func timeParam(q url.Values, name string) (timeValue, bool, string) {
	if !q.Has(name) {
		return timeValue{}, false, ""
	}
	v := timeValue{raw: q.Get(name)}
	t, err := time.Parse(time.RFC3339Nano, v.raw)
	if err != nil {
		return v, true, fmt.Sprintf("The `%s` query parameter value [%s] is not a valid RFC 3339 time (YYYY-MM-DDTHH:mm:ssZ)", name, v.raw)
	}
	v.t = t.UTC()
	return v, true, ""
}

func idParam(q url.Values, name string, p *problems) int64 {
	if !q.Has(name) {
		return 0
	}
	id, ok := validation.ParseID(q.Get(name))
	if !ok {
		p.fail(name, fmt.Sprintf("The `%s` query parameter value [%s] does not match %s", name, q.Get(name), validation.IDPattern), q.Get(name))
	}
	return id
}

// tokenParam reads next_token or its alias pagination_token (both may be
// given only with the same value).
func tokenParam(q url.Values, p *problems) string {
	next, pagination := q.Get("next_token"), q.Get("pagination_token")
	switch {
	case q.Has("next_token") && next == "":
		p.fail("next_token", "The `next_token` query parameter can not be empty", next)
	case q.Has("pagination_token") && pagination == "":
		p.fail("pagination_token", "The `pagination_token` query parameter can not be empty", pagination)
	case next != "" && pagination != "" && next != pagination:
		p.fail("pagination_token", "Give `next_token` or `pagination_token`, not two different tokens", next, pagination)
	}
	if next != "" {
		return next
	}
	return pagination
}

// intParam reads an integer parameter in [lo, hi], def when absent.
func intParam(q url.Values, name string, lo, hi, def int, p *problems) int {
	if !q.Has(name) {
		return def
	}
	raw := q.Get(name)
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi || raw[0] < '0' || raw[0] > '9' {
		p.fail(name, fmt.Sprintf("The `%s` query parameter value [%s] is not between %d and %d", name, q.Get(name), lo, hi), q.Get(name))
	}
	return n
}

// enumParam reads a parameter that takes one of allowed, def when absent.
func enumParam(q url.Values, name string, allowed []string, def string, p *problems) string {
	if !q.Has(name) {
		return def
	}
	v := q.Get(name)
	if e := validation.Enum(name, v, allowed); e != nil {
		p.fail(name, e.Message, v)
	}
	return v
}

// Page tokens are opaque to clients: base64url of "<kind>:<a>:<b>", the
// sort key and id a search page ended at, or the end of the counts page.
func encodeToken(kind string, a, b int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d", kind, a, b))
}

func decodeToken(raw, kind string, p *problems) (int64, int64) {
	bad := func() (int64, int64) {
		p.fail("next_token", fmt.Sprintf("The `next_token` query parameter value [%s] is not a token this endpoint gave out", raw), raw)
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
	if err1 != nil || err2 != nil || y < 0 {
		return bad()
	}
	return x, y
}

// query returns the request's parsed query string (the endpoint's query
// check has already refused malformed ones).
func query(r *http.Request) url.Values {
	q, _ := url.ParseQuery(r.URL.RawQuery)
	return q
}
