package activity

import (
	"errors"
	"strconv"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// subscription is a subscription as the API shows it (the OpenAPI's
// ...ResponseDataSubscription).
type subscription struct {
	SubscriptionID string `json:"subscription_id"`
	EventType      string `json:"event_type"`
	Filter         filter `json:"filter"`
	Tag            string `json:"tag,omitempty"`
	WebhookID      string `json:"webhook_id,omitempty"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

type filter struct {
	UserID    string `json:"user_id,omitempty"`
	Keyword   string `json:"keyword,omitempty"`
	Direction string `json:"direction,omitempty"`
}

func render(s storage.ActivitySubscription) subscription {
	out := subscription{SubscriptionID: httpx.FormatID(s.ID), EventType: s.EventType, Tag: s.Tag,
		Filter:    filter{Keyword: s.FilterKeyword, Direction: s.Direction},
		CreatedAt: httpx.FormatTime(s.CreatedAt), UpdatedAt: httpx.FormatTime(s.UpdatedAt)}
	if s.FilterUserID != 0 {
		out.Filter.UserID = httpx.FormatID(s.FilterUserID)
	}
	if s.WebhookID != 0 {
		out.WebhookID = httpx.FormatID(s.WebhookID)
	}
	return out
}

// Refusal reasons (the reason field of the invalid-request problem, as
// the webhooks feature names its own).
const (
	ReasonDuplicate = "DuplicateSubscription"
	ReasonLimit     = "SubscriptionLimitExceeded"
	ReasonWebhook   = "WebhookIdInvalid"
	// ReasonNotFound is a per-id failure of a delete by ids.
	ReasonNotFound = "SubscriptionNotFound"
)

// failure is an invalid-request problem (400) whose errors entry names
// the parameter and whose reason field and detail name the reason.
func failure(reason, param, message string, values ...string) error {
	e := apierr.InvalidRequest(apierr.Param(param, reason+": "+message, values...))
	e.Detail = reason + ": " + message
	return e.With("reason", reason)
}

// refusal turns the store's refusals of a creation or update into their
// problems.
func (m *Subscriptions) refusal(err error, webhookID *string) error {
	var raw []string
	if webhookID != nil {
		raw = []string{*webhookID}
	}
	switch {
	case errors.Is(err, storage.ErrActivityDuplicate):
		return failure(ReasonDuplicate, "filter", "Your app has a subscription of this event type, filter and webhook already.")
	case errors.Is(err, storage.ErrActivityLimit):
		return failure(ReasonLimit, "event_type", "Your app holds its limit of "+strconv.Itoa(m.Cap)+
			" activity subscriptions; delete some before creating more.")
	case errors.Is(err, storage.ErrActivityWebhook):
		return failure(ReasonWebhook, "webhook_id", "The webhook_id was not found or is not associated with your app.", raw...)
	}
	return err
}
