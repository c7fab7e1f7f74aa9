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
	"github.com/aviary-dev/aviary/storage/searchquery"
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

// parseWindow reads the parameters search and counts share: query,
// start_time, end_time, since_id, until_id and the page token. Every
// problem is reported, naming its parameter.
func parseWindow(q url.Values, a archive, now time.Time) (window, error) {
	var w window
	var errs []apierr.ParamError
	fail := func(param, msg string, values ...string) { errs = append(errs, apierr.Param(param, msg, values...)) }
	raw := q.Get("query")
	if raw == "" {
		return w, apierr.MissingParam("query")
	}
	if n := utf8.RuneCountInString(raw); n > a.maxQuery {
		fail("query", fmt.Sprintf("The `query` query parameter is %d characters long; the %s search takes at most %d.", n, a.name, a.maxQuery), raw)
	} else if parsed, err := searchquery.Parse(raw); err != nil {
		var qe *searchquery.Error
		if !errors.As(err, &qe) {
			return w, fmt.Errorf("parse query: %w", err)
		}
		fail("query", fmt.Sprintf("There were errors processing your request: %s (at position %d)", qe.Reason, qe.Pos+1), raw)
	} else {
		w.query = parsed
	}
	earliest := firstPost
	if a.window > 0 {
		earliest = now.Add(-a.window)
	}
	// Aviary indexes a post as it is created, so without end_time a search
	// reaches up to now; an explicit end_time keeps the platform's rule.
	latest := now.Add(-endMargin)
	w.start, w.end = now.Add(-a.defaultWindow), now.Add(time.Second)
	if v, ok, msg := timeParam(q, "start_time"); ok {
		if msg != "" {
			fail("start_time", msg, v.raw)
		} else if v.t.Before(earliest) {
			fail("start_time", fmt.Sprintf("Invalid 'start_time':'%s'. 'start_time' must be on or after %s", v.raw, earliest.Format(time.RFC3339)), v.raw)
		} else {
			w.start = v.t
		}
	}
	if v, ok, msg := timeParam(q, "end_time"); ok {
		if msg != "" {
			fail("end_time", msg, v.raw)
		} else if v.t.After(latest) {
			fail("end_time", fmt.Sprintf("Invalid 'end_time':'%s'. 'end_time' must be a minimum of %d seconds prior to the request time.", v.raw, int(endMargin.Seconds())), v.raw)
		} else {
			w.end = v.t
		}
	}
	if w.start.Before(earliest) {
		w.start = earliest
	}
	if q.Has("end_time") && !w.end.After(w.start) && len(errs) == 0 {
		fail("end_time", fmt.Sprintf("Invalid 'end_time':'%s'. 'end_time' must be after 'start_time' (%s).", q.Get("end_time"), w.start.Format(time.RFC3339)), q.Get("end_time"))
	}
	w.sinceID = idParam(q, "since_id", fail)
	w.untilID = idParam(q, "until_id", fail)
	if w.sinceID != 0 && w.untilID != 0 && w.sinceID >= w.untilID {
		fail("since_id", fmt.Sprintf("Invalid 'since_id':'%d'. 'since_id' must be smaller than 'until_id' (%d).", w.sinceID, w.untilID), q.Get("since_id"))
	}
	w.token = tokenParam(q, fail)
	if len(errs) > 0 {
		return w, apierr.InvalidRequest(errs...)
	}
	return w, nil
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

func idParam(q url.Values, name string, fail func(param, msg string, values ...string)) int64 {
	if !q.Has(name) {
		return 0
	}
	id, ok := validation.ParseID(q.Get(name))
	if !ok {
		fail(name, fmt.Sprintf("The `%s` query parameter value [%s] does not match %s", name, q.Get(name), validation.IDPattern), q.Get(name))
	}
	return id
}

// tokenParam reads next_token or its alias pagination_token (both may be
// given only with the same value).
func tokenParam(q url.Values, fail func(param, msg string, values ...string)) string {
	next, pagination := q.Get("next_token"), q.Get("pagination_token")
	switch {
	case q.Has("next_token") && next == "":
		fail("next_token", "The `next_token` query parameter can not be empty", next)
	case q.Has("pagination_token") && pagination == "":
		fail("pagination_token", "The `pagination_token` query parameter can not be empty", pagination)
	case next != "" && pagination != "" && next != pagination:
		fail("pagination_token", "Give `next_token` or `pagination_token`, not two different tokens", next, pagination)
	}
	if next != "" {
		return next
	}
	return pagination
}

// intParam reads an integer parameter in [lo, hi], def when absent.
func intParam(q url.Values, name string, lo, hi, def int) (int, error) {
	if !q.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < lo || n > hi {
		return 0, apierr.InvalidParam(name, fmt.Sprintf("The `%s` query parameter value [%s] is not between %d and %d", name, q.Get(name), lo, hi), q.Get(name))
	}
	return n, nil
}

// enumParam reads a parameter that takes one of allowed, def when absent.
func enumParam(q url.Values, name string, allowed []string, def string) (string, error) {
	if !q.Has(name) {
		return def, nil
	}
	v := q.Get(name)
	if e := validation.Enum(name, v, allowed); e != nil {
		return "", apierr.InvalidParam(name, e.Message, v)
	}
	return v, nil
}

// Page tokens are opaque to clients: base64url of "<kind>:<a>:<b>", the
// sort key and id a search page ended at, or the end of the counts page.
func encodeToken(kind string, a, b int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d", kind, a, b))
}

func decodeToken(raw, kind string) (int64, int64, error) {
	bad := apierr.InvalidParam("next_token", fmt.Sprintf("The `next_token` query parameter value [%s] is not a token this endpoint gave out", raw), raw)
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return 0, 0, bad
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != kind {
		return 0, 0, bad
	}
	x, err1 := strconv.ParseInt(parts[1], 10, 64)
	y, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || y < 0 {
		return 0, 0, bad
	}
	return x, y, nil
}

// query returns the request's parsed query string (the endpoint's query
// check has already refused malformed ones).
func query(r *http.Request) url.Values {
	q, _ := url.ParseQuery(r.URL.RawQuery)
	return q
}
