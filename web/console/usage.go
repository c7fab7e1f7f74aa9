package console

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// UsageStore is what the usage pages read: the usage feature's own
// functions over app_usage_daily and the apps' credits
// (storage/postgres.DB, as api/usage and `aviary admin app usage`).
type UsageStore interface {
	AppUsageSettings(ctx context.Context, appID int64) (storage.UsageSettings, error)
	UsageDays(ctx context.Context, appID int64, from, to time.Time) ([]storage.UsageDay, error)
	UsageSince(ctx context.Context, appID int64, from time.Time) (storage.UsageCounts, error)
}

// usageDays is how many days the usage pages show, today included.
const usageDays = 30

// appUsage is one app's usage of the last usageDays days and its credits.
type appUsage struct {
	App            storage.ConsoleApp
	Last           storage.UsageCounts // the last usageDays days
	CreditsAdded   int64
	CreditsSpent   int64 // ever
	CreditsBalance int64
}

// usageData is the usage overview's.
type usageData struct {
	Base
	Apps        []appUsage
	Days        int
	Unavailable bool
}

// usage lists the viewer's apps with their posts read and written over
// the last 30 days and their credit balance.
func (s *Server) usage(w http.ResponseWriter, r *http.Request, v viewer) {
	d := usageData{Base: s.base(&v, "Usage and credits", "usage"), Days: usageDays, Unavailable: s.cfg.Usage == nil}
	if d.Unavailable {
		s.render(w, r, http.StatusOK, "usage", "", d)
		return
	}
	apps, err := s.visibleApps(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	from := s.usageFrom()
	for _, a := range apps {
		u, err := s.appUsage(r.Context(), a.ID, from)
		if err != nil {
			s.kit.Fail(w, r, err)
			return
		}
		u.App = a
		d.Apps = append(d.Apps, u)
	}
	s.render(w, r, http.StatusOK, "usage", "", d)
}

// usageFrom is the first day the pages show (midnight UTC).
func (s *Server) usageFrom() time.Time {
	today := s.cfg.Now().UTC().Truncate(24 * time.Hour)
	return today.AddDate(0, 0, -(usageDays - 1))
}

func (s *Server) appUsage(ctx context.Context, appID int64, from time.Time) (appUsage, error) {
	var u appUsage
	set, err := s.cfg.Usage.AppUsageSettings(ctx, appID)
	if err != nil {
		return u, err
	}
	all, err := s.cfg.Usage.UsageSince(ctx, appID, time.Time{})
	if err != nil {
		return u, err
	}
	if u.Last, err = s.cfg.Usage.UsageSince(ctx, appID, from); err != nil {
		return u, err
	}
	u.CreditsAdded, u.CreditsSpent = set.CreditsAdded, all.CreditsSpent
	u.CreditsBalance = set.CreditsAdded - all.CreditsSpent
	return u, nil
}

// dayRow is one day of the table.
type dayRow struct {
	Day           time.Time
	Read, Written int64
}

// appUsageData is an app's usage page.
type appUsageData struct {
	Base
	App   storage.App
	Usage appUsage
	Days  []dayRow
	Chart chart
}

// appUsagePage shows one visible app's posts read and written per day
// (a server-drawn SVG bar chart and the same numbers as a table) and its
// credits.
func (s *Server) appUsagePage(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	if s.cfg.Usage == nil {
		s.notFound(w, r, v)
		return
	}
	from := s.usageFrom()
	u, err := s.appUsage(r.Context(), app.ID, from)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	days, err := s.cfg.Usage.UsageDays(r.Context(), app.ID, from, from.AddDate(0, 0, usageDays-1))
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := appUsageData{Base: s.base(&v, "Usage of "+app.Name, "usage"), App: app, Usage: u}
	d.Days, d.Chart = usageChart(from, days)
	s.render(w, r, http.StatusOK, "app_usage", "", d)
}

// usageChart lays out usageDays days from from (days without a record are
// 0), scaled to the busiest day.
func usageChart(from time.Time, days []storage.UsageDay) ([]dayRow, chart) {
	byDay := make(map[time.Time]storage.UsageDay, len(days))
	for _, d := range days {
		byDay[d.Day.UTC().Truncate(24*time.Hour)] = d
	}
	rows := make([]dayRow, usageDays)
	labels := make([]string, usageDays)
	read := series{Name: "read", Fill: "#1a4f8b", Values: make([]int64, usageDays)}
	written := series{Name: "written", Fill: "#7fb2e5", Values: make([]int64, usageDays)}
	for i := range rows {
		day := from.AddDate(0, 0, i)
		rec := byDay[day]
		rows[i] = dayRow{Day: day, Read: rec.PostsRead, Written: rec.PostsWritten}
		labels[i] = day.Format("2006-01-02")
		read.Values[i], written.Values[i] = rec.PostsRead, rec.PostsWritten
	}
	c := barChart("usage-chart", "Posts read (dark bars) and written (light bars) per day", labels, []series{read, written})
	if c.Max > 0 {
		c.Title += ", busiest day " + itoa64(c.Max)
	}
	c.Title += "; the table below has the numbers"
	return rows, c
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
