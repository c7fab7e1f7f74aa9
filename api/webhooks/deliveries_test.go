package webhooks_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestDeliveryLog: the webhook with its delivery health, the log (pages,
// state filter), one delivery with its attempts, a redelivery; another
// app's webhook or delivery answers as a missing one.
func TestDeliveryLog(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	hook := h.webhook(t, h.App, "https://a.example/hook")
	id := ids.Format(hook.ID)
	base := "/2/webhooks/" + id
	others := h.webhook(t, h.Other, "https://b.example/hook")
	at := h.Now.Truncate(time.Second)
	stamp := at.Format("2006-01-02T15:04:05.000Z")

	fresh := h.Call(t, "GET", base, h.Bearer, "", nil)
	wantExact(t, "fresh webhook", fresh, 200, `{"data":{"id":"`+id+`","url":"https://a.example/hook","valid":true,"created_at":"`+
		apitest.Obj(fresh.Body, "data", "created_at").(string)+`","delivery":{"state":"ok","pending":0,"dead":0}}}`)
	wantExact(t, "empty log", h.Call(t, "GET", base+"/deliveries", h.Bearer, "", nil), 200, `{"data":[],"meta":{"result_count":0}}`)

	delivered := factory.WebhookDelivery(t, h.DB, hook, &factory.WebhookDeliveryOpts{EventSeq: 7, State: storage.DeliveryDelivered,
		Attempts: 1, LastStatus: 200, LastLatency: 12, DeliveredAt: &at, LastAttemptAt: &at})
	dead := factory.WebhookDelivery(t, h.DB, hook, &factory.WebhookDeliveryOpts{EventSeq: 8, State: storage.DeliveryDead,
		DeadReason: storage.DeadUnreachable, Attempts: 2, LastStatus: 503, LastLatency: 30, LastAttemptAt: &at})
	factory.DeliveryAttempt(t, h.DB, storage.DeliveryAttempt{DeliveryID: dead, Attempt: 1, StartedAt: at, Status: 0, LatencyMS: 10000, Error: "timeout"})
	factory.DeliveryAttempt(t, h.DB, storage.DeliveryAttempt{DeliveryID: dead, Attempt: 2, StartedAt: at, Status: 503, LatencyMS: 30})
	pending := factory.WebhookDelivery(t, h.DB, hook, &factory.WebhookDeliveryOpts{EventSeq: 9})
	factory.WebhookFailing(t, h.DB, hook.ID, at, at.Add(time.Minute), &at)
	otherDelivery := factory.WebhookDelivery(t, h.DB, others, nil)
	s := strconv.FormatInt

	got := h.Call(t, "GET", base, h.Bearer, "", nil)
	wantExact(t, "failing webhook", got, 200, `{"data":{"id":"`+id+`","url":"https://a.example/hook","valid":true,"created_at":"`+
		apitest.Obj(got.Body, "data", "created_at").(string)+`","delivery":{"state":"failing","failing_since":"`+stamp+
		`","next_probe_at":"`+at.Add(time.Minute).Format("2006-01-02T15:04:05.000Z")+`","pending":1,"dead":1,"last_delivered_at":"`+stamp+
		`","last_error":"HTTP 503"}}}`)

	page := h.Call(t, "GET", base+"/deliveries?max_results=2", h.Bearer, "", nil)
	list := apitest.Obj(page.Body, "data").([]any)
	if page.Status != 200 || len(list) != 2 || list[0].(map[string]any)["id"] != s(pending, 10) || list[1].(map[string]any)["id"] != s(dead, 10) ||
		apitest.Obj(page.Body, "meta", "next_token") != s(dead, 10) || apitest.Obj(page.Body, "meta", "result_count") != 2.0 {
		t.Fatalf("first page: %s", page.Raw)
	}
	if p := list[0].(map[string]any); p["state"] != "pending" || p["event_id"] != "9" || p["next_attempt_at"] == nil || p["last_latency_ms"] != nil {
		t.Fatalf("pending entry: %v", p)
	}
	wantExact(t, "second page", h.Call(t, "GET", base+"/deliveries?max_results=2&pagination_token="+s(dead, 10), h.Bearer, "", nil), 200,
		`{"data":[{"id":"`+s(delivered, 10)+`","kind":"post","event_id":"7","state":"delivered","attempts":1,"last_status":200,`+
			`"last_latency_ms":12,"delivered_at":"`+stamp+`","created_at":"`+
			apitest.Obj(h.Call(t, "GET", base+"/deliveries/"+s(delivered, 10), h.Bearer, "", nil).Body, "data", "created_at").(string)+
			`"}],"meta":{"result_count":1}}`)
	deadOnly := h.Call(t, "GET", base+"/deliveries?state=dead", h.Bearer, "", nil)
	if l := apitest.Obj(deadOnly.Body, "data").([]any); len(l) != 1 || l[0].(map[string]any)["dead_reason"] != "unreachable" {
		t.Fatalf("dead only: %s", deadOnly.Raw)
	}

	one := h.Call(t, "GET", base+"/deliveries/"+s(dead, 10), h.Bearer, "", nil)
	wantExact(t, "one delivery", one, 200, `{"data":{"id":"`+s(dead, 10)+`","kind":"post","event_id":"8","state":"dead","dead_reason":"unreachable",`+
		`"last_status":503,"last_latency_ms":30,"created_at":"`+apitest.Obj(one.Body, "data", "created_at").(string)+`","attempts":[`+
		`{"attempt":1,"started_at":"`+stamp+`","latency_ms":10000,"error":"timeout"},{"attempt":2,"started_at":"`+stamp+`","status":503,"latency_ms":30}]}}`)

	re := h.Call(t, "POST", base+"/deliveries/"+s(dead, 10)+"/redeliver", h.Bearer, "", nil)
	copyID, _ := apitest.Obj(re.Body, "data", "id").(string)
	wantExact(t, "redeliver", re, 200, `{"data":{"id":"`+copyID+`","redelivery_of":"`+s(dead, 10)+`"}}`)
	if n, _ := strconv.ParseInt(copyID, 10, 64); n <= otherDelivery {
		t.Fatalf("the copy %s is not at the end of the queue", copyID)
	}
	newest := h.Call(t, "GET", base+"/deliveries?max_results=1", h.Bearer, "", nil)
	if e := apitest.Obj(newest.Body, "data").([]any)[0].(map[string]any); e["id"] != copyID || e["redelivery_of"] != s(dead, 10) || e["state"] != "pending" {
		t.Fatalf("the copy in the log: %s", newest.Raw)
	}

	otherBase := "/2/webhooks/" + ids.Format(others.ID)
	for _, c := range []struct{ name, method, path, authz string }{
		{"another app's webhook", "GET", otherBase, h.Bearer},
		{"as another app", "GET", base, h.OtherBearer},
		{"missing webhook", "GET", "/2/webhooks/1", h.Bearer},
		{"another app's log", "GET", otherBase + "/deliveries", h.Bearer},
		{"log as another app", "GET", base + "/deliveries", h.OtherBearer},
		{"delivery as another app", "GET", base + "/deliveries/" + s(dead, 10), h.OtherBearer},
		{"redeliver as another app", "POST", base + "/deliveries/" + s(dead, 10) + "/redeliver", h.OtherBearer},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFailure(t, h.Call(t, c.method, c.path, c.authz, "", nil), webhooks.ReasonIDInvalid)
		})
	}
	for _, c := range []struct {
		name, method, path, authz string
		status                    int
	}{
		{"another webhook's delivery", "GET", base + "/deliveries/" + s(otherDelivery, 10), h.Bearer, 404},
		{"redeliver another webhook's delivery", "POST", base + "/deliveries/" + s(otherDelivery, 10) + "/redeliver", h.Bearer, 404},
		{"missing delivery", "GET", base + "/deliveries/999999", h.Bearer, 404},
		{"malformed delivery id", "GET", base + "/deliveries/x1", h.Bearer, 400},
		{"malformed webhook id", "GET", "/2/webhooks/x1", h.Bearer, 400},
		{"bad state", "GET", base + "/deliveries?state=lost", h.Bearer, 400},
		{"max_results 0", "GET", base + "/deliveries?max_results=0", h.Bearer, 400},
		{"max_results 101", "GET", base + "/deliveries?max_results=101", h.Bearer, 400},
		{"bad token", "GET", base + "/deliveries?pagination_token=abc", h.Bearer, 400},
		{"user context", "GET", base + "/deliveries", "oauth:reader", 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.Call(t, c.method, c.path, c.authz, "", nil)
			if r.Status != c.status || c.status == 404 && r.Body["type"] != "https://api.x.com/2/problems/resource-not-found" {
				t.Fatalf("%d %s, want %d", r.Status, r.Raw, c.status)
			}
		})
	}
	// A replay status is not redelivered.
	status := factory.WebhookDelivery(t, h.DB, hook, &factory.WebhookDeliveryOpts{Kind: storage.DeliveryReplayStatus})
	if r := h.Call(t, "POST", base+"/deliveries/"+s(status, 10)+"/redeliver", h.Bearer, "", nil); r.Status != 404 {
		t.Fatalf("redeliver a replay status: %d %s", r.Status, r.Raw)
	}
	// An invalid webhook is paused.
	if _, err := h.DB.RecordWebhookCRC(t.Context(), storage.WebhookCRC{ID: hook.ID, At: h.Now, Failure: "wrong token", Invalidate: true}); err != nil {
		t.Fatal(err)
	}
	if r := h.Call(t, "GET", base, h.Bearer, "", nil); apitest.Obj(r.Body, "data", "delivery", "state") != webhooks.StatePaused {
		t.Fatalf("invalid webhook: %s", r.Raw)
	}
}
