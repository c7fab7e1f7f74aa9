package usage

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Usage fields (usage.fields) and the ones answered when none are asked.
var (
	usageFields   = []string{"cap_reset_day", "daily_client_app_usage", "daily_project_usage", "project_cap", "project_id", "project_usage"}
	defaultFields = []string{"cap_reset_day", "project_cap", "project_id", "project_usage"}
)

// Routes lists GET /2/usage/tweets: app-only bearer token, 50 requests per
// 15 minutes per app, as the platform.
func (m *Meter) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET /2/usage/tweets", Auth: auth.BearerOnly, Query: []string{"days", "usage.fields"},
			Limit: httpx.Limit{Name: "usage_tweets", Requests: 50, Scope: httpx.PerApp}, Handle: m.usageTweets},
	}
}

// dayUsage is one day of a daily usage list.
type dayUsage struct {
	Date  string `json:"date"`
	Usage string `json:"usage"`
}

type projectUsage struct {
	ProjectID string     `json:"project_id"`
	Usage     []dayUsage `json:"usage"`
}

type clientAppUsage struct {
	ClientAppID      string     `json:"client_app_id"`
	Usage            []dayUsage `json:"usage"`
	UsageResultCount int        `json:"usage_result_count"`
}

// usageObject is the platform's Usage; an app is its own project here.
type usageObject struct {
	CapResetDay         *int             `json:"cap_reset_day,omitempty"`
	DailyClientAppUsage []clientAppUsage `json:"daily_client_app_usage,omitempty"`
	DailyProjectUsage   *projectUsage    `json:"daily_project_usage,omitempty"`
	ProjectCap          string           `json:"project_cap,omitempty"`
	ProjectID           string           `json:"project_id,omitempty"`
	ProjectUsage        string           `json:"project_usage,omitempty"`
}

// usageTweets answers GET /2/usage/tweets: the calling app's posts read in
// the current period, its cap, and per day for the last days (1 to 90,
// default 7) from the recorded daily counts.
func (m *Meter) usageTweets(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App.ID
	q := httpx.ReadQuery(r)
	days := q.Int("days", 1, 90, 7)
	fields := q.List("usage.fields", usageFields)
	if err := q.Err(); err != nil {
		return err
	}
	if fields == nil {
		fields = defaultFields
	}
	ctx := r.Context()
	if err := m.Flush(ctx); err != nil { // this process's counts first, so a client sees its own
		return err
	}
	now := m.deps.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -(days - 1))
	recorded, err := m.deps.Store.UsageDays(ctx, app, from, today)
	if err != nil {
		return fmt.Errorf("usage of app %d: %w", app, err)
	}
	s, err := m.deps.Store.AppUsageSettings(ctx, app)
	if err != nil {
		return fmt.Errorf("usage settings of app %d: %w", app, err)
	}
	period, err := m.deps.Store.UsageSince(ctx, app, PeriodStart(now, m.cfg.CapResetDay))
	if err != nil {
		return fmt.Errorf("period usage of app %d: %w", app, err)
	}
	id := strconv.FormatInt(app, 10)
	daily := dailyUsage(recorded, from, days)
	out := usageObject{}
	for _, f := range fields {
		switch f {
		case "cap_reset_day":
			d := m.cfg.CapResetDay
			out.CapResetDay = &d
		case "daily_client_app_usage":
			out.DailyClientAppUsage = []clientAppUsage{{ClientAppID: id, Usage: daily, UsageResultCount: len(daily)}}
		case "daily_project_usage":
			out.DailyProjectUsage = &projectUsage{ProjectID: id, Usage: daily}
		case "project_cap":
			if c := m.readCap(s); c > 0 {
				out.ProjectCap = strconv.FormatInt(c, 10)
			}
		case "project_id":
			out.ProjectID = id
		case "project_usage":
			out.ProjectUsage = strconv.FormatInt(period.PostsRead, 10)
		}
	}
	return httpx.WriteJSON(w, http.StatusOK, struct {
		Data usageObject `json:"data"`
	}{out})
}

// readCap is the app's cap on posts read (0: none).
func (m *Meter) readCap(s storage.UsageSettings) int64 {
	if s.ReadCap != nil {
		return *s.ReadCap
	}
	return m.cfg.ReadCap
}

// dailyUsage lists every day from from, days of them, with the posts read
// recorded on it ("0" on days without usage).
func dailyUsage(recorded []storage.UsageDay, from time.Time, days int) []dayUsage {
	byDay := make(map[string]int64, len(recorded))
	for _, d := range recorded {
		byDay[d.Day.Format(time.DateOnly)] = d.PostsRead
	}
	out := make([]dayUsage, 0, days)
	for i := range days {
		d := from.AddDate(0, 0, i)
		out = append(out, dayUsage{Date: d.Format("2006-01-02T15:04:05.000Z"), Usage: strconv.FormatInt(byDay[d.Format(time.DateOnly)], 10)})
	}
	return out
}
