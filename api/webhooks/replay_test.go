package webhooks_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/tasks"
)

func replayBody(id, from, to string) []byte {
	return apitest.JSONBody(map[string]string{"webhook_id": id, "from_date": from, "to_date": to})
}

// TestReplay: a job is recorded and its task queued under the job's id;
// a second one while it is queued is ReplayConflictError; every refusal
// names its reason; another app's webhook answers as a missing one.
func TestReplay(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 2*time.Hour)
	hook := h.webhook(t, h.App, "https://a.example/hook")
	id := ids.Format(hook.ID)
	others := h.webhook(t, h.Other, "https://b.example/hook")
	minute := h.Now.Truncate(time.Minute)
	d := func(ago time.Duration) string { return minute.Add(-ago).Format("200601021504") }

	for _, c := range []struct {
		name, body, reason string
	}{
		{"from not 12 digits", string(replayBody(id, "2026010112", d(0))), webhooks.ReasonQueryParam},
		{"to with letters", string(replayBody(id, d(time.Hour), "20260101120a")), webhooks.ReasonQueryParam},
		{"month 13", string(replayBody(id, d(time.Hour), minute.Format("2006")+"13011200")), webhooks.ReasonQueryParam},
		{"empty from", string(replayBody(id, "", d(0))), webhooks.ReasonQueryParam},
		{"from after to", string(replayBody(id, d(time.Minute), d(2*time.Minute))), webhooks.ReasonQueryParam},
		{"from in the future", string(replayBody(id, d(-time.Minute), d(-2*time.Minute))), webhooks.ReasonQueryParam},
		{"to in the future", string(replayBody(id, d(time.Minute), d(-time.Minute))), webhooks.ReasonQueryParam},
		{"from before the horizon", string(replayBody(id, d(2*time.Hour+time.Minute), d(0))), webhooks.ReasonQueryParam},
		{"malformed webhook id", string(replayBody("12ab", d(time.Hour), d(0))), webhooks.ReasonIDInvalid},
		{"missing webhook id", `{"from_date":"` + d(time.Hour) + `","to_date":"` + d(0) + `"}`, webhooks.ReasonIDInvalid},
		{"another app's webhook", string(replayBody(ids.Format(others.ID), d(time.Hour), d(0))), webhooks.ReasonIDInvalid},
		{"unknown webhook", string(replayBody("1", d(time.Hour), d(0))), webhooks.ReasonIDInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFailure(t, h.Call(t, "POST", "/2/webhooks/replay", h.Bearer, "application/json", []byte(c.body)), c.reason)
		})
	}
	if r := h.Call(t, "POST", "/2/webhooks/replay", h.Bearer, "application/json", []byte(`{"webhook_id":"`+id+`","extra":1}`)); r.Status != 400 {
		t.Fatalf("unknown field: %d %s", r.Status, r.Raw)
	}
	if r := h.Call(t, "POST", "/2/webhooks/replay", "oauth:reader", "application/json", replayBody(id, d(time.Hour), d(0))); r.Status != 403 {
		t.Fatalf("user context: %d %s", r.Status, r.Raw)
	}

	// The horizon's own minute and the current minute are accepted.
	r := h.Call(t, "POST", "/2/webhooks/replay", h.Bearer, "application/json", replayBody(id, d(2*time.Hour), d(0)))
	jobID, _ := apitest.Obj(r.Body, "data", "job_id").(string)
	created, _ := apitest.Obj(r.Body, "data", "created_at").(string)
	wantExact(t, "replay", r, 200, `{"data":{"created_at":"`+created+`","job_id":"`+jobID+`"}}`)
	if at, err := time.Parse(time.RFC3339, created); err != nil || at.Before(h.Now.Add(-time.Minute)) {
		t.Fatalf("created_at %q: %v", created, err)
	}
	job, err := h.DB.WebhookReplay(t.Context(), apitest.MustID(t, jobID))
	if err != nil || job.State != storage.ReplayQueued || !job.From.Equal(minute.Add(-2*time.Hour)) || !job.To.Equal(minute.Add(time.Minute)) {
		t.Fatalf("job: %+v, %v", job, err)
	}
	info, err := h.Inspector.GetTaskInfo(tasks.QueueWebhooks, tasks.WebhookReplayTaskID(job.ID))
	if err != nil || info.Type != tasks.TypeWebhookReplay {
		t.Fatalf("queued task: %+v, %v", info, err)
	}
	wantFailure(t, h.Call(t, "POST", "/2/webhooks/replay", h.Bearer, "application/json", replayBody(id, d(time.Hour), d(0))),
		webhooks.ReasonReplayConflict)
}

// TestRetiredReplay: the Account Activity replay answers 410 naming
// POST /2/webhooks/replay.
func TestRetiredReplay(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	r := h.Call(t, "POST", "/2/account_activity/replay/webhooks/123/subscriptions/all?from_date=202601010000&to_date=202601010100",
		h.Bearer, "", nil)
	if r.Status != http.StatusGone || r.Body["type"] != "about:blank" || r.Body["title"] != "Gone" ||
		!strings.Contains(r.Body["detail"].(string), "POST /2/webhooks/replay") ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("%d %s %s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
}
