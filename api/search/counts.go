package search

import (
	"fmt"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/storage"
)

// countResponse answers counts: buckets oldest first, each under both the
// classic tweet_count name clients read and the description's post_count.
type countResponse struct {
	Data []countBucket `json:"data"`
	Meta countMeta     `json:"meta"`
}

type countBucket struct {
	End        string `json:"end"`
	Start      string `json:"start"`
	TweetCount int64  `json:"tweet_count"`
	PostCount  int64  `json:"post_count"`
}

type countMeta struct {
	TotalTweetCount int64  `json:"total_tweet_count"`
	TotalPostCount  int64  `json:"total_post_count"`
	NextToken       string `json:"next_token,omitempty"`
}

// countToken is the kind of counts page tokens: the end of the next
// (older) page, in Unix milliseconds.
const countToken = "c"

// countFields are the names search_count.fields takes (every count shows
// all of them).
var countFields = []string{"end", "post_count", "start", "tweet_count"}

func (m *Module) countHandler(a archive) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, next, err := m.parseCount(r, a)
		if err != nil {
			return err
		}
		buckets, err := m.Store.CountPosts(r.Context(), c)
		if err != nil {
			return fmt.Errorf("count posts: %w", err)
		}
		out := countResponse{Data: make([]countBucket, len(buckets))}
		for i, b := range buckets {
			out.Data[i] = countBucket{Start: httpx.FormatTime(b.Start), End: httpx.FormatTime(b.End), TweetCount: b.Count, PostCount: b.Count}
			out.Meta.TotalTweetCount += b.Count
		}
		out.Meta.TotalPostCount = out.Meta.TotalTweetCount
		if !next.IsZero() {
			out.Meta.NextToken = encodeToken(countToken, next.UnixMilli(), 0)
		}
		return httpx.WriteJSON(w, http.StatusOK, out)
	}
}

// parseCount reads a counts request; next is where the next (older) page
// ends, zero when this page reaches start_time. A page of counts/all covers
// at most countPage (a day for minute buckets) and starts on a bucket
// boundary, so no bucket is split between pages.
func (m *Module) parseCount(r *http.Request, a archive) (storage.PostCount, time.Time, error) {
	q := httpx.ReadQuery(r)
	win, err := parseWindow(q, a, m.Clock().UTC())
	if err != nil {
		return storage.PostCount{}, time.Time{}, err
	}
	gran := q.Enum("granularity", []string{storage.GranularityMinute, storage.GranularityHour, storage.GranularityDay}, storage.GranularityHour)
	q.List("search_count.fields", countFields)
	end := win.end
	if win.token != "" {
		ms, _ := decodeToken(win.token, countToken, q)
		if t := time.UnixMilli(ms).UTC(); t.After(win.start) && t.Before(end) {
			end = t
		}
	}
	if err := q.Err(); err != nil {
		return storage.PostCount{}, time.Time{}, err
	}
	start, next := win.start, time.Time{}
	if page := pageSpan(a, gran); page > 0 && end.Sub(start) > page {
		start = truncate(end.Add(-page), gran)
		if !start.After(win.start) {
			start = win.start
		} else {
			next = start
		}
	}
	c := storage.PostCount{Query: win.query, Start: start, End: end, SinceID: win.sinceID, UntilID: win.untilID,
		Granularity: gran, ViewerID: int64(objects.ViewerOf(r))}
	return c, next, nil
}

// pageSpan is how much of the window one counts page of a covers with
// buckets of gran (0: all of it).
func pageSpan(a archive, gran string) time.Duration {
	if a.countPage > 0 && gran == storage.GranularityMinute {
		return min(a.countPage, 24*time.Hour)
	}
	return a.countPage
}

// truncate rounds t down to a bucket boundary of gran, in UTC.
func truncate(t time.Time, gran string) time.Time {
	switch gran {
	case storage.GranularityMinute:
		return t.Truncate(time.Minute)
	case storage.GranularityHour:
		return t.Truncate(time.Hour)
	}
	y, mo, d := t.UTC().Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
}
