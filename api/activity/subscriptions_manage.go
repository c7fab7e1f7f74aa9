package activity

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Pages of GET /2/activity/subscriptions: max_results 1-1000 (the
// OpenAPI's bounds), 100 by default.
const (
	defaultPage = 100
	maxPage     = 1000
)

type listMeta struct {
	ResultCount        int    `json:"result_count"`
	TotalSubscriptions int    `json:"total_subscriptions"`
	NextToken          string `json:"next_token,omitempty"`
}

// list answers the app's subscriptions, oldest first; pagination_token is
// the next_token of the page before.
func (m *Subscriptions) list(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	q := httpx.ReadQuery(r)
	page := storage.ActivitySubscriptionPage{AppID: app.ID, Limit: q.Int("max_results", 1, maxPage, defaultPage)}
	if tok, ok := q.String("pagination_token"); ok {
		id, valid := httpx.ParsePageToken(tok)
		if !valid {
			q.Fail("pagination_token", "The `pagination_token` query parameter value ["+tok+"] is not a token this endpoint gave out", tok)
		}
		page.AfterID = id
	}
	if err := q.Err(); err != nil {
		return err
	}
	want := page.Limit
	page.Limit++
	subs, err := m.Store.ActivitySubscriptions(r.Context(), page)
	if err != nil {
		return err
	}
	total, err := m.Store.CountActivitySubscriptions(r.Context(), app.ID)
	if err != nil {
		return err
	}
	meta := listMeta{TotalSubscriptions: total}
	if len(subs) > want {
		subs = subs[:want]
		meta.NextToken = httpx.PageToken(subs[want-1].ID)
	}
	data := make([]subscription, 0, len(subs))
	for _, s := range subs {
		data = append(data, render(s))
	}
	meta.ResultCount = len(data)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "meta": meta})
}

// updateRequest is UpdateActivitySubscriptionRequest: the delivery only;
// a new type or filter is a new subscription.
type updateRequest struct {
	Tag       *string `json:"tag" validate:"length=1-200"`
	WebhookID *string `json:"webhook_id" validate:"coreid"`
}

func (m *Subscriptions) update(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	id, err := httpx.PathID(r, "subscription_id")
	if err != nil {
		return err
	}
	var req updateRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	if req.Tag == nil && req.WebhookID == nil {
		return apierr.InvalidParam("body", "Send a tag, a webhook_id or both; changing the event type or filter takes a new subscription.")
	}
	u := storage.ActivitySubscriptionUpdate{AppID: app.ID, ID: id, Tag: req.Tag}
	if req.WebhookID != nil {
		hook, _ := validation.ParseID(*req.WebhookID)
		u.WebhookID = &hook
	}
	sub, err := m.Store.UpdateActivitySubscription(r.Context(), u)
	if errors.Is(err, storage.ErrNotFound) {
		return notFound(r.PathValue("subscription_id"))
	}
	if err != nil {
		return m.refusal(err, req.WebhookID)
	}
	total, err := m.Store.CountActivitySubscriptions(r.Context(), app.ID)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"subscription": render(sub), "total_subscriptions": total}})
}

type totalMeta struct {
	TotalSubscriptions int `json:"total_subscriptions"`
}

func (m *Subscriptions) deleteOne(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	id, err := httpx.PathID(r, "subscription_id")
	if err != nil {
		return err
	}
	gone, total, err := m.delete(r.Context(), app.ID, []int64{id})
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return notFound(r.PathValue("subscription_id"))
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]bool{"deleted": true}, "meta": totalMeta{total}})
}

type deleted struct {
	SubscriptionID string `json:"subscription_id"`
	Deleted        bool   `json:"deleted"`
}

type deleteError struct {
	SubscriptionID string `json:"subscription_id"`
	Reason         string `json:"reason"`
	Message        string `json:"message"`
}

// deleteMany answers DELETE /2/activity/subscriptions?ids=: each id the
// app holds is deleted; the others are per-id errors, and the rest go on.
func (m *Subscriptions) deleteMany(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App
	q := httpx.ReadQuery(r)
	ids := q.IDs("ids", 100, "ids")
	if err := q.Err(); err != nil {
		return err
	}
	gone, total, err := m.delete(r.Context(), app.ID, ids)
	if err != nil {
		return err
	}
	body := map[string]any{"meta": totalMeta{total}}
	data := make([]deleted, 0, len(gone))
	var errs []deleteError
	for _, id := range ids {
		if slices.Contains(gone, id) {
			data = append(data, deleted{SubscriptionID: httpx.FormatID(id), Deleted: true})
			continue
		}
		errs = append(errs, deleteError{SubscriptionID: httpx.FormatID(id), Reason: ReasonNotFound,
			Message: "No subscription of your app has the id " + httpx.FormatID(id) + "."})
	}
	body["data"] = data
	if len(errs) > 0 {
		body["errors"] = errs
	}
	return httpx.WriteJSON(w, http.StatusOK, body)
}

// delete deletes the app's subscriptions among ids and counts the rest.
func (m *Subscriptions) delete(ctx context.Context, appID int64, ids []int64) ([]int64, int, error) {
	gone, err := m.Store.DeleteActivitySubscriptions(ctx, appID, ids)
	if err != nil {
		return nil, 0, err
	}
	total, err := m.Store.CountActivitySubscriptions(ctx, appID)
	return gone, total, err
}

// notFound is the answer for an id that is not one of the app's
// subscriptions (another app's included).
func notFound(raw string) error {
	return apierr.NotFound("activity_subscription", "subscription_id", raw)
}
