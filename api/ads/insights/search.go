package insights

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
)

// Limits of the reference.
const (
	// maxKeywords bounds keywords and negative_keywords together.
	maxKeywords = 10
	// maxWindow bounds end_time - start_time.
	maxWindow = 7 * 24 * time.Hour
	// relatedCount is how many related keywords are returned.
	relatedCount = 30
)

// Granularities.
const (
	granularityDay  = "DAY"
	granularityHour = "HOUR"
)

var granularities = []string{granularityDay, granularityHour}

// The times a window may hold: no post is older than 1970, and years past
// 9999 have no ISO 8601 form.
var (
	earliest = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// recordTimeout bounds logging the query once it is answered.
const recordTimeout = 2 * time.Second

// query is a parsed search.
type query struct {
	storage.InsightQuery
	granularity string
}

// search is GET insights/keywords/search.
func (m *Module) search(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	began := time.Now()
	q, err := m.parse(p)
	if err != nil {
		return err
	}
	ctx := r.Context()
	var related []string
	var relatedErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		related, relatedErr = m.deps.Store.RelatedKeywords(ctx, q.InsightQuery, relatedCount)
	}()
	volumes, err := m.deps.Store.KeywordVolumes(ctx, q.InsightQuery)
	<-done
	if err != nil {
		return fmt.Errorf("keyword volumes: %w", err)
	}
	if relatedErr != nil {
		return fmt.Errorf("related keywords: %w", relatedErr)
	}
	m.record(r, q, volumes, len(related), time.Since(began))
	return adsx.WriteData(w, p, http.StatusOK, render(related, volumes))
}

// parse reads and checks every parameter, reporting all errors at once.
// request.params echoes granularity, the keywords as terms, location in
// upper case, and the window answered: start_time truncated to the hour,
// end_time as sent truncated to the hour, or, when it defaulted to now,
// the moment of the request (to the second): that window's last bucket is
// partial and holds the posts of the current hour up to now.
func (m *Module) parse(p *adsx.Params) (query, error) {
	var q query
	q.granularity = p.RequiredEnum("granularity", granularities)
	var n, neg int
	q.Keywords, n = keywords(p, "keywords", true)
	q.NegativeKeywords, neg = keywords(p, "negative_keywords", false)
	if n+neg > maxKeywords && !p.Failed("keywords") && !p.Failed("negative_keywords") {
		msg := fmt.Sprintf("keywords and negative_keywords take at most %d keywords together, got %d", maxKeywords, n+neg)
		delete(p.Echo(), "keywords")
		p.Fail("keywords", msg)
		if neg > 0 {
			delete(p.Echo(), "negative_keywords")
			p.Fail("negative_keywords", msg)
		}
	}
	start := p.RequiredTime("start_time")
	end := m.now().UTC()
	given := p.Time("end_time")
	if given != nil {
		end = *given
	}
	for _, t := range []struct {
		name string
		at   *time.Time
	}{{"start_time", &start}, {"end_time", given}} {
		if t.at != nil && !p.Failed(t.name) && (t.at.Before(earliest) || !t.at.Before(latest)) {
			p.Fail(t.name, fmt.Sprintf("%s must be between %s and %s", t.name, earliest.Format(time.DateOnly), latest.Format(time.DateOnly)))
		}
	}
	if !p.Failed("start_time") && !p.Failed("end_time") {
		// The parameter at fault: end_time when sent, else start_time
		// (end_time is then now).
		blame := "start_time"
		if given != nil {
			blame = "end_time"
		}
		switch {
		case !end.After(start):
			p.Fail(blame, "end_time must be after start_time")
		case end.Sub(start) > maxWindow:
			p.Fail(blame, "end_time minus start_time must be at most 7 days")
		}
	}
	if loc := p.String("location", 0); loc != nil {
		code := strings.ToUpper(*loc)
		if storage.IsCountryCode(code) {
			q.CountryCode = code
			p.Echo()["location"] = code
		} else {
			delete(p.Echo(), "location")
			p.Fail("location", fmt.Sprintf("Expected a country: an ISO 3166-1 alpha-2 code such as US, got %q for location", *loc))
		}
	}
	if err := p.Err(); err != nil {
		return q, err
	}
	q.Granularity = time.Hour
	if q.granularity == granularityDay {
		q.Granularity = 24 * time.Hour
	}
	q.Start, q.End = start.Truncate(time.Hour), end
	if given != nil {
		q.End = end.Truncate(time.Hour)
	}
	p.Echo()["start_time"] = adsx.Time(q.Start)
	p.Echo()["end_time"] = adsx.Time(q.End)
	return q, nil
}

// keywords reads a comma list of keywords, each one term (a word,
// #hashtag, $cashtag or @mention: posttext.NormalizeKeyword), as terms
// without repeats, and how many entries were sent.
func keywords(p *adsx.Params, name string, required bool) ([]string, int) {
	if required && !p.Has(name) {
		p.FailMissing(name, name+" is missing")
		return nil, 0
	}
	items := p.List(name, maxKeywords)
	if items == nil {
		return nil, 0
	}
	terms := make([]string, 0, len(items))
	for _, it := range items {
		t, ok := posttext.NormalizeKeyword(it)
		if !ok {
			delete(p.Echo(), name)
			p.Fail(name, fmt.Sprintf("Expected keywords of one term each (a word, #hashtag, $cashtag or @mention), got %q for %s", it, name))
			return nil, len(items)
		}
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	p.Echo()[name] = terms
	return terms, len(items)
}

// record logs the answered query: the caller, its lowest-id account on
// this listener, the question and the size of the answer. A failure is
// logged, never the caller's: the answer stands.
func (m *Module) record(r *http.Request, q query, volumes []int64, related int, took time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), recordTimeout)
	defer cancel()
	l := storage.InsightQueryLog{AppID: httpx.Principal(r).App.ID, UserID: adsx.UserID(r), Granularity: q.granularity,
		Keywords: q.Keywords, NegativeKeywords: q.NegativeKeywords, Location: q.CountryCode, Start: q.Start, End: q.End,
		Buckets: len(volumes), RelatedKeywords: related, Duration: took}
	for _, v := range volumes {
		l.TotalVolume += v
	}
	acct, err := m.deps.Store.LowestAdAccountFor(ctx, l.UserID, adsx.Sandbox(r.Context()))
	if err != nil {
		m.deps.Kit.Log().WarnContext(ctx, "keyword insights: find the caller's ad account", "user_id", l.UserID, "err", err)
	}
	l.AccountID = acct
	if err := m.deps.Store.RecordInsightQuery(ctx, l); err != nil {
		m.deps.Kit.Log().WarnContext(ctx, "keyword insights: record the query", "user_id", l.UserID, "err", err)
	}
}
