package webhooks_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestReplayRace: replays of one webhook asked for at once: exactly one
// job is made, the others answer ReplayConflictError.
func TestReplayRace(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	id := ids.Format(h.webhook(t, h.App, "https://a.example/hook").ID)
	minute := h.Now.UTC().Truncate(time.Minute)
	body := replayBody(id, minute.Add(-time.Hour).Format("200601021504"), minute.Format("200601021504"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, conflicts := 0, 0
	for range 8 {
		wg.Go(func() {
			r := h.Call(t, "POST", "/2/webhooks/replay", h.Bearer, "application/json", body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Status == 200:
				won++
			case r.Status == 400 && r.Body["reason"] == webhooks.ReasonReplayConflict:
				conflicts++
			default:
				t.Errorf("%d %s", r.Status, r.Raw)
			}
		})
	}
	wg.Wait()
	if won != 1 || conflicts != 7 {
		t.Fatalf("%d jobs made, %d conflicts; want 1 and 7", won, conflicts)
	}
}

// TestDeletedWebhookEndpoints: once deleted, a webhook is unknown to every
// endpoint, for its own app as for another, and nothing is recorded: no
// link, no redelivery copy, no replay job.
func TestDeletedWebhookEndpoints(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	hook := h.webhook(t, h.App, "https://a.example/hook")
	id := ids.Format(hook.ID)
	base := "/2/webhooks/" + id
	del := factory.WebhookDelivery(t, h.DB, hook, &factory.WebhookDeliveryOpts{EventSeq: 1})
	dpath := base + "/deliveries/" + strconv.FormatInt(del, 10)
	if r := h.Call(t, "DELETE", base, h.Bearer, "", nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	minute := h.Now.UTC().Truncate(time.Minute)
	replay := replayBody(id, minute.Add(-time.Hour).Format("200601021504"), minute.Format("200601021504"))
	for _, authz := range []string{h.Bearer, h.OtherBearer} {
		for _, c := range []struct {
			method, path string
			body         []byte
		}{
			{"GET", base, nil}, {"PUT", base, nil}, {"DELETE", base, nil},
			{"GET", base + "/deliveries", nil}, {"GET", dpath, nil}, {"POST", dpath + "/redeliver", nil},
			{"POST", "/2/tweets/search/webhooks/" + id, nil}, {"DELETE", "/2/tweets/search/webhooks/" + id, nil},
			{"POST", "/2/webhooks/replay", replay},
		} {
			ctype := ""
			if c.body != nil {
				ctype = "application/json"
			}
			wantFailure(t, h.Call(t, c.method, c.path, authz, ctype, c.body), webhooks.ReasonIDInvalid)
		}
	}
	var deliveries, jobs, links int
	if err := storagetest.BarePool(t, h.DBURL).QueryRow(t.Context(), `SELECT (SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1),
		(SELECT count(*) FROM webhook_replay_jobs WHERE webhook_id = $1), (SELECT count(*) FROM webhook_stream_links WHERE webhook_id = $1)`,
		hook.ID).Scan(&deliveries, &jobs, &links); err != nil || deliveries != 1 || jobs != 0 || links != 0 {
		t.Fatalf("after the calls: %d deliveries, %d jobs, %d links (%v); want 1, 0, 0", deliveries, jobs, links, err)
	}
}
