package storage

import (
	"errors"
	"time"
)

// DeliveryActivity is an activity event sent for a subscription
// (docs/activity.md); its delivery names the subscription.
const DeliveryActivity = "activity"

// ActivitySubscription is an app's subscription to one activity event type
// (activity_subscriptions). Exactly one of FilterUserID (non-zero) and
// FilterKeyword (non-empty) is set.
type ActivitySubscription struct {
	ID    int64
	AppID int64
	// EventType is the canonical name (domain/activity).
	EventType     string
	FilterUserID  int64
	FilterKeyword string
	// Direction is "inbound", "outbound" or "" (both).
	Direction string
	Tag       string
	// WebhookID is the webhook the events also go to (0: the stream only).
	WebhookID int64
	// CreatedBy is the user whose token made it (0: app-only).
	CreatedBy int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Activity subscription refusals (storage/postgres.DB's
// CreateActivitySubscription and UpdateActivitySubscription).
var (
	// ErrActivityDuplicate: the app has a subscription of that type,
	// filter and destination already.
	ErrActivityDuplicate = errors.New("storage: duplicate activity subscription")
	// ErrActivityLimit: the app holds its cap of subscriptions already.
	ErrActivityLimit = errors.New("storage: activity subscription limit reached")
	// ErrActivityWebhook: the webhook is not a live webhook of the app.
	ErrActivityWebhook = errors.New("storage: webhook not found for activity subscription")
)

// ActivitySubscriptionPage asks for a page of an app's subscriptions,
// oldest first: those with an id above AfterID, Limit at most.
type ActivitySubscriptionPage struct {
	AppID   int64
	AfterID int64
	Limit   int
}

// ActivitySubscriptionUpdate changes a subscription's delivery: the
// fields that are set.
type ActivitySubscriptionUpdate struct {
	AppID, ID int64
	Tag       *string
	WebhookID *int64
}
