package console

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Ops reads what the API and the workers record for the operations pages
// (storage/opsredis.Store): recent error answers per app, answers per
// minute by status class, task runs per minute by queue.
type Ops interface {
	Errors(ctx context.Context, apps []int64, limit int) ([]storage.APIError, error)
	Requests(ctx context.Context, apps []int64, from time.Time, minutes int) ([]storage.RequestMinute, error)
	Jobs(ctx context.Context, from time.Time, minutes int) ([]storage.JobMinute, error)
}

// RateLimit is one counter of the API's rate limiter in its current
// window (api/ratelimit.Counter, adapted by cmd: web does not import api).
type RateLimit struct {
	Rule                   string
	Scope                  string // "app" or "user"
	AppID, UserID          int64
	Limit, Used, Remaining int
	Reset                  time.Time
}

// RateLimits reads the limiter's counters of apps (nil: every app).
type RateLimits func(ctx context.Context, apps []int64) ([]RateLimit, error)

// Page sizes and spans of the operations pages.
const (
	errorsShown  = 200
	chartMinutes = 60
)

// rateLimitRow is a counter with its app's name.
type rateLimitRow struct {
	RateLimit
	AppName string
}

type rateLimitsData struct {
	Base
	Rows        []rateLimitRow
	Unavailable bool
}

// rateLimitsPage lists the rate-limit counters of the viewer's apps
// (an administrator's: every app's) in their current windows.
func (s *Server) rateLimitsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	d := rateLimitsData{Base: s.base(&v, "Rate limits", "ratelimits")}
	names, scope, err := s.opsScope(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if s.cfg.RateLimits == nil {
		d.Unavailable = true
	} else if rls, err := s.cfg.RateLimits(r.Context(), scope); err != nil {
		s.log.WarnContext(r.Context(), "console: rate limits", "error", err)
		d.Unavailable = true
	} else {
		for _, rl := range rls {
			d.Rows = append(d.Rows, rateLimitRow{RateLimit: rl, AppName: appName(names, rl.AppID)})
		}
	}
	s.render(w, r, http.StatusOK, "ratelimits", "", d)
}

// opsScope is the viewer's apps by id and the ids to read (nil for an
// administrator: every app).
func (s *Server) opsScope(ctx context.Context, v viewer) (map[int64]string, []int64, error) {
	names, err := s.appNames(ctx, v)
	if err != nil {
		return nil, nil, err
	}
	if v.Admin {
		return names, nil, nil
	}
	ids := make([]int64, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	return names, ids, nil
}

type errorRow struct {
	storage.APIError
	AppName string
}

type errorsData struct {
	Base
	Rows        []errorRow
	Max         int
	Unavailable bool
}

// errorsPage lists the newest error answers of the viewer's apps (an
// administrator also sees those given to no app: unauthenticated ones).
func (s *Server) errorsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	d := errorsData{Base: s.base(&v, "Recent errors", "errors"), Max: errorsShown}
	names, _, err := s.opsScope(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	apps := make([]int64, 0, len(names)+1)
	for id := range names {
		apps = append(apps, id)
	}
	if v.Admin {
		apps = append(apps, 0)
	}
	if s.cfg.Ops == nil {
		d.Unavailable = true
	} else if es, err := s.cfg.Ops.Errors(r.Context(), apps, errorsShown); err != nil {
		s.log.WarnContext(r.Context(), "console: recent errors", "error", err)
		d.Unavailable = true
	} else {
		for _, e := range es {
			d.Rows = append(d.Rows, errorRow{APIError: e, AppName: appName(names, e.AppID)})
		}
	}
	s.render(w, r, http.StatusOK, "errors", "", d)
}

type queueChart struct {
	Queue string
	Chart chart
	Rows  []storage.JobMinute
}

type chartsData struct {
	Base
	Requests    []storage.RequestMinute
	Classes     []string
	Chart       chart
	Queues      []queueChart
	Unavailable bool
}

// chartsPage charts the last hour: the answers to the viewer's apps
// (an administrator's: every answer) per minute by status class, and the
// task runs per minute by queue.
func (s *Server) chartsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	d := chartsData{Base: s.base(&v, "Charts", "charts"), Classes: storage.StatusClasses}
	_, scope, err := s.opsScope(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	from := s.cfg.Now().UTC().Truncate(time.Minute).Add(-(chartMinutes - 1) * time.Minute)
	if s.cfg.Ops == nil {
		d.Unavailable = true
		s.render(w, r, http.StatusOK, "charts", "", d)
		return
	}
	// scope: nil reads every answer; a user without apps reads none
	d.Requests, err = s.cfg.Ops.Requests(r.Context(), scope, from, chartMinutes)
	var jobs []storage.JobMinute
	if err == nil {
		jobs, err = s.cfg.Ops.Jobs(r.Context(), from, chartMinutes)
	}
	if err != nil {
		s.log.WarnContext(r.Context(), "console: charts", "error", err)
		d.Unavailable = true
		s.render(w, r, http.StatusOK, "charts", "", d)
		return
	}
	d.Chart = requestsChart(d.Requests)
	d.Queues = jobCharts(from, jobs)
	s.render(w, r, http.StatusOK, "charts", "", d)
}

// classFills are the status classes' colours (2xx, 3xx, 4xx, 5xx).
var classFills = []string{"#1a7f37", "#1a4f8b", "#9a6700", "#b3261e"}

func requestsChart(mins []storage.RequestMinute) chart {
	labels := make([]string, len(mins))
	ss := make([]series, len(storage.StatusClasses))
	for j, c := range storage.StatusClasses {
		ss[j] = series{Name: c, Fill: classFills[j], Values: make([]int64, len(mins))}
	}
	for i, m := range mins {
		labels[i] = m.Minute.Format("15:04")
		for j := range ss {
			ss[j].Values[i] = m.ByClass[j]
		}
	}
	return barChart("requests-chart", "Requests per minute by status class (2xx green, 3xx blue, 4xx amber, 5xx red) over the last hour; the table below has the numbers", labels, ss)
}

// jobCharts is one chart per queue that ran tasks in the hour.
func jobCharts(from time.Time, jobs []storage.JobMinute) []queueChart {
	byQueue := map[string]map[time.Time]storage.JobMinute{}
	var order []string
	for _, j := range jobs {
		if byQueue[j.Queue] == nil {
			byQueue[j.Queue] = map[time.Time]storage.JobMinute{}
			order = append(order, j.Queue)
		}
		byQueue[j.Queue][j.Minute.UTC()] = j
	}
	slices.Sort(order)
	var out []queueChart
	for _, q := range order {
		labels := make([]string, chartMinutes)
		ok := series{Name: "processed", Fill: "#1a4f8b", Values: make([]int64, chartMinutes)}
		failed := series{Name: "failed", Fill: "#b3261e", Values: make([]int64, chartMinutes)}
		qc := queueChart{Queue: q}
		for i := range labels {
			m := from.Add(time.Duration(i) * time.Minute)
			labels[i] = m.Format("15:04")
			if j, found := byQueue[q][m]; found {
				ok.Values[i], failed.Values[i] = j.Processed, j.Failed
				qc.Rows = append(qc.Rows, j)
			}
		}
		qc.Chart = barChart("jobs-chart-"+q, "Tasks of queue "+q+" processed (blue) and failed (red) per minute over the last hour; the table below has the numbers", labels, []series{ok, failed})
		out = append(out, qc)
	}
	return out
}
