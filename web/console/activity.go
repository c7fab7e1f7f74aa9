package console

import (
	"net/http"
	"strconv"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// activityListSize is how many subscriptions the page shows.
const activityListSize = 500

// activityData is the activity subscriptions page's.
type activityData struct {
	Base
	Subs  []activityRow
	Flash string
}

type activityRow struct {
	storage.ActivitySubscription
	AppName string
}

// activityPage lists the activity subscriptions of the viewer's apps (an
// administrator's: every app's), newest first.
func (s *Server) activityPage(w http.ResponseWriter, r *http.Request, v viewer) {
	names, err := s.appNames(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	subs, err := s.store.ConsoleActivitySubscriptions(r.Context(), keys(names), v.Admin, activityListSize)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := activityData{Base: s.base(&v, "Activity subscriptions", "activity")}
	if n, err := strconv.ParseInt(r.URL.Query().Get("deleted"), 10, 64); err == nil && n > 0 {
		d.Flash = "Subscription " + ids.Format(n) + " deleted."
	}
	for _, sub := range subs {
		d.Subs = append(d.Subs, activityRow{ActivitySubscription: sub, AppName: appName(names, sub.AppID)})
	}
	s.render(w, r, http.StatusOK, "activity", "", d)
}

// deleteActivity deletes a subscription of the path's visible {app}, the
// same storage call as DELETE /2/activity/subscriptions/{id}; another
// app's, or an unknown one, is not found.
func (s *Server) deleteActivity(w http.ResponseWriter, r *http.Request, v viewer) {
	app, ok := s.visibleApp(w, r, v)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("sub"), 10, 64)
	if err != nil || id <= 0 {
		s.notFound(w, r, v)
		return
	}
	gone, err := s.store.DeleteActivitySubscriptions(r.Context(), app.ID, []int64{id})
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	if len(gone) == 0 {
		s.notFound(w, r, v)
		return
	}
	s.log.InfoContext(r.Context(), "console: activity subscription deleted", "app_id", app.ID, "subscription_id", id)
	http.Redirect(w, r, "/console/activity?deleted="+strconv.FormatInt(id, 10), http.StatusSeeOther)
}
