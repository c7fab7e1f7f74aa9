package webhooks

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// retiredReplayPath is the Account Activity replay the platform retired in
// favour of POST /2/webhooks/replay.
const retiredReplayPath = "/2/account_activity/replay/webhooks/{webhook_id}/subscriptions/all"

// replayDateFormat is from_date and to_date: yyyymmddhhmm, UTC.
const replayDateFormat = "200601021504"

var replayDate = regexp.MustCompile(`^[0-9]{12}$`)

type replayRequest struct {
	WebhookID string `json:"webhook_id"`
	FromDate  string `json:"from_date"`
	ToDate    string `json:"to_date"`
}

// replay answers POST /2/webhooks/replay: the window's minutes are both
// inclusive (from_date's start to to_date's end), no later than the
// current minute, from_date no earlier than the horizon before the current
// minute. The job is recorded queued, its task enqueued after the commit
// (the sweeper enqueues it again if that fails), and answered.
func (m *Module) replay(w http.ResponseWriter, r *http.Request) error {
	var req replayRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	id, ok := validation.ParseID(req.WebhookID)
	if !ok {
		return failure(ReasonIDInvalid, "webhook_id", "The webhook_id must be 1 to 19 digits.", req.WebhookID)
	}
	from, to, err := m.replayWindow(req)
	if err != nil {
		return err
	}
	app := httpx.Principal(r).App
	job, err := m.Store.CreateWebhookReplay(r.Context(), storage.NewWebhookReplay{AppID: app.ID, WebhookID: id, From: from, To: to})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return idInvalid(req.WebhookID)
	case errors.Is(err, storage.ErrReplayConflict):
		return failure(ReasonReplayConflict, "webhook_id", "A replay job is already in progress for this webhook.", req.WebhookID)
	case err != nil:
		return err
	}
	tasks.EnqueueRecorded(r.Context(), m.Queue, m.Logger, "webhook replay job", func() (*asynq.Task, error) { return tasks.NewWebhookReplay(job.ID) },
		"job_id", job.ID)
	m.Logger.InfoContext(r.Context(), "webhook replay job created", "app_id", app.ID, "webhook_id", id, "job_id", job.ID,
		"from", from, "to", to)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]string{
		"job_id": httpx.FormatID(job.ID), "created_at": httpx.FormatTime(job.CreatedAt)}})
}

// replayWindow checks the request's dates and returns the window [from,
// to) they name: from_date's minute through to_date's minute.
func (m *Module) replayWindow(req replayRequest) (from, to time.Time, err error) {
	parse := func(name, v string) (time.Time, error) {
		if !replayDate.MatchString(v) {
			return time.Time{}, failure(ReasonQueryParam, name, "The "+name+" must be a UTC time in yyyymmddhhmm format.", v)
		}
		t, err := time.ParseInLocation(replayDateFormat, v, time.UTC)
		if err != nil {
			return time.Time{}, failure(ReasonQueryParam, name, "The "+name+" is not a valid time in yyyymmddhhmm format.", v)
		}
		return t, nil
	}
	if from, err = parse("from_date", req.FromDate); err != nil {
		return from, to, err
	}
	if to, err = parse("to_date", req.ToDate); err != nil {
		return from, to, err
	}
	minute := m.Clock().UTC().Truncate(time.Minute)
	switch {
	case from.After(minute):
		return from, to, failure(ReasonQueryParam, "from_date", "The from_date is in the future.", req.FromDate)
	case to.After(minute):
		return from, to, failure(ReasonQueryParam, "to_date", "The to_date is in the future.", req.ToDate)
	case from.After(to):
		return from, to, failure(ReasonQueryParam, "from_date", "The from_date is after the to_date.", req.FromDate)
	case from.Before(minute.Add(-m.ReplayHorizon)):
		return from, to, failure(ReasonQueryParam, "from_date", "The from_date is older than the replay horizon of "+
			horizonText(m.ReplayHorizon)+".", req.FromDate)
	}
	return from, to.Add(time.Minute), nil
}

// retiredReplay answers the retired Account Activity replay: 410 Gone,
// naming its replacement.
func (m *Module) retiredReplay(http.ResponseWriter, *http.Request) error {
	return &apierr.Error{Status: http.StatusGone, Title: "Gone", AdsCode: "ROUTE_NOT_FOUND",
		Detail: "This endpoint is retired; use POST /2/webhooks/replay with a JSON body {webhook_id, from_date, to_date}."}
}

// horizonText shows a horizon in whole hours or minutes when it is one
// ("24h", not "24h0m0s").
func horizonText(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}
