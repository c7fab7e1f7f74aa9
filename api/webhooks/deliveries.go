package webhooks

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Delivery states of a webhook (GET /2/webhooks/{id}).
const (
	// StateOK: deliveries go as they come.
	StateOK = "ok"
	// StateFailing: a delivery died unreachable; only probes go.
	StateFailing = "failing"
	// StatePaused: the webhook is invalid; nothing goes until a CRC
	// check passes.
	StatePaused = "paused"
)

// deliveryStates are the state filter's values.
var deliveryStates = []string{storage.DeliveryPending, storage.DeliveryDelivered, storage.DeliveryDead}

type deliveryHealth struct {
	State           string `json:"state"`
	FailingSince    string `json:"failing_since,omitempty"`
	NextProbeAt     string `json:"next_probe_at,omitempty"`
	Pending         int    `json:"pending"`
	Dead            int    `json:"dead"`
	LastDeliveredAt string `json:"last_delivered_at,omitempty"`
	LastError       string `json:"last_error,omitempty"`
}

type webhookWithHealth struct {
	config
	Delivery deliveryHealth `json:"delivery"`
}

// delivery is one entry of the delivery log.
type delivery struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	EventID       string `json:"event_id,omitempty"`
	State         string `json:"state"`
	DeadReason    string `json:"dead_reason,omitempty"`
	Attempts      int    `json:"attempts"`
	LastStatus    int    `json:"last_status,omitempty"`
	LastLatencyMS *int   `json:"last_latency_ms,omitempty"`
	LastError     string `json:"last_error,omitempty"`
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
	DeliveredAt   string `json:"delivered_at,omitempty"`
	CreatedAt     string `json:"created_at"`
	ReplayJobID   string `json:"replay_job_id,omitempty"`
	RedeliveryOf  string `json:"redelivery_of,omitempty"`
}

// deliveryDetail is one delivery with its attempts: "attempts" is the list
// here (its length is the count the log shows).
type deliveryDetail struct {
	delivery
	Attempts []attempt `json:"attempts"`
}

type attempt struct {
	Attempt   int    `json:"attempt"`
	StartedAt string `json:"started_at"`
	Status    int    `json:"status,omitempty"`
	LatencyMS int    `json:"latency_ms"`
	Error     string `json:"error,omitempty"`
}

func renderDelivery(d storage.WebhookDelivery) delivery {
	out := delivery{ID: strconv.FormatInt(d.ID, 10), Kind: d.Kind, State: d.State, DeadReason: d.DeadReason,
		Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: httpx.FormatTime(d.CreatedAt)}
	if d.EventSeq != 0 {
		out.EventID = strconv.FormatInt(d.EventSeq, 10)
	}
	if d.Attempts > 0 {
		out.LastLatencyMS = &d.LastLatencyMS
	}
	if d.State == storage.DeliveryPending {
		out.NextAttemptAt = httpx.FormatTime(d.NextAttemptAt)
	}
	if d.DeliveredAt != nil {
		out.DeliveredAt = httpx.FormatTime(*d.DeliveredAt)
	}
	if d.ReplayJobID != 0 {
		out.ReplayJobID = httpx.FormatID(d.ReplayJobID)
	}
	if d.RedeliveryOf != 0 {
		out.RedeliveryOf = strconv.FormatInt(d.RedeliveryOf, 10)
	}
	return out
}

// get answers GET /2/webhooks/{webhook_id}: the webhook and its delivery
// health.
func (m *Module) get(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	hook, err := m.webhook(r, app.ID)
	if err != nil {
		return err
	}
	s, err := m.Store.WebhookDeliveryState(r.Context(), app.ID, hook.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return idInvalid(r.PathValue("webhook_id"))
	}
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": webhookWithHealth{config: m.render(hook), Delivery: health(hook, s, m.Clock())}})
}

// health is the delivery health shown: paused while the webhook is
// invalid (nothing goes, not even probes), failing while its queue is
// blocked, else ok; last_error is the newest attempted delivery's when it
// was not delivered.
func health(hook storage.Webhook, s storage.WebhookDeliveryState, now time.Time) deliveryHealth {
	out := deliveryHealth{State: StateOK, Pending: s.Pending, Dead: s.Dead}
	switch {
	case !domain.EffectiveValid(hook, now):
		out.State = StatePaused
	case s.FailingSince != nil:
		out.State = StateFailing
	}
	if s.FailingSince != nil {
		out.FailingSince = httpx.FormatTime(*s.FailingSince)
		if s.NextProbeAt != nil {
			out.NextProbeAt = httpx.FormatTime(*s.NextProbeAt)
		}
	}
	if s.LastDeliveredAt != nil {
		out.LastDeliveredAt = httpx.FormatTime(*s.LastDeliveredAt)
	}
	if s.Last != nil && s.Last.State != storage.DeliveryDelivered {
		out.LastError = s.Last.LastError
		if out.LastError == "" && s.Last.LastStatus != 0 {
			out.LastError = fmt.Sprintf("HTTP %d", s.Last.LastStatus)
		}
	}
	return out
}

type deliveriesMeta struct {
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

// deliveries answers GET /2/webhooks/{webhook_id}/deliveries: the log,
// newest first, max_results (1-100, 10) a page; pagination_token is the
// next_token of the page before (the last id it showed).
func (m *Module) deliveries(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	q := httpx.ReadQuery(r)
	dq := storage.WebhookDeliveryQuery{AppID: app.ID, State: q.Enum("state", deliveryStates, ""), Limit: q.Int("max_results", 1, 100, 10)}
	if tok, ok := q.String("pagination_token"); ok {
		id, valid := validation.ParseID(tok)
		if !valid {
			q.Fail("pagination_token", "The `pagination_token` query parameter value ["+tok+"] is not a token this endpoint gave out", tok)
		}
		dq.BeforeID = id
	}
	if err := q.Err(); err != nil {
		return err
	}
	hook, err := m.webhook(r, app.ID)
	if err != nil {
		return err
	}
	dq.WebhookID = hook.ID
	want := dq.Limit
	dq.Limit++
	list, err := m.Store.WebhookDeliveries(r.Context(), dq)
	if err != nil {
		return err
	}
	meta := deliveriesMeta{}
	if len(list) > want {
		list = list[:want]
		meta.NextToken = strconv.FormatInt(list[want-1].ID, 10)
	}
	data := make([]delivery, 0, len(list))
	for _, d := range list {
		data = append(data, renderDelivery(d))
	}
	meta.ResultCount = len(data)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "meta": meta})
}

// deliveryOf loads the delivery the path names, of the app's live webhook
// it names (another app's answers as a missing one: WebhookIdInvalid for
// the webhook, resource-not-found for the delivery).
func (m *Module) deliveryOf(r *http.Request) (storage.Webhook, int64, error) {
	app := httpx.Principal(r).App
	hook, err := m.webhook(r, app.ID)
	if err != nil {
		return hook, 0, err
	}
	raw := r.PathValue("delivery_id")
	id, ok := validation.ParseID(raw)
	if !ok {
		return hook, 0, apierr.InvalidParam("delivery_id", "The `delivery_id` path parameter value ["+raw+"] is not valid (1 to 19 digits).", raw)
	}
	return hook, id, nil
}

func deliveryNotFound(raw string) error {
	return apierr.NotFound("webhook_delivery", "delivery_id", raw)
}

// delivery answers GET /2/webhooks/{webhook_id}/deliveries/{delivery_id}:
// the entry with every attempt, oldest first.
func (m *Module) delivery(w http.ResponseWriter, r *http.Request) error {
	hook, id, err := m.deliveryOf(r)
	if err != nil {
		return err
	}
	d, attempts, err := m.Store.WebhookDeliveryOf(r.Context(), hook.AppID, hook.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return deliveryNotFound(r.PathValue("delivery_id"))
	}
	if err != nil {
		return err
	}
	out := deliveryDetail{delivery: renderDelivery(d), Attempts: make([]attempt, 0, len(attempts))}
	for _, a := range attempts {
		out.Attempts = append(out.Attempts, attempt{Attempt: a.Attempt, StartedAt: httpx.FormatTime(a.StartedAt), Status: a.Status,
			LatencyMS: a.LatencyMS, Error: a.Error})
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": out})
}

// redeliver answers POST .../deliveries/{delivery_id}/redeliver: a copy of
// a post delivery goes pending at the end of the webhook's queue.
func (m *Module) redeliver(w http.ResponseWriter, r *http.Request) error {
	hook, id, err := m.deliveryOf(r)
	if err != nil {
		return err
	}
	d, err := m.Store.RedeliverWebhookDelivery(r.Context(), hook.AppID, hook.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return deliveryNotFound(r.PathValue("delivery_id"))
	}
	if err != nil {
		return err
	}
	m.Logger.InfoContext(r.Context(), "webhook delivery redelivered", "app_id", hook.AppID, "webhook_id", hook.ID, "delivery_id", id, "copy", d.ID)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]string{
		"id": strconv.FormatInt(d.ID, 10), "redelivery_of": strconv.FormatInt(id, 10)}})
}
